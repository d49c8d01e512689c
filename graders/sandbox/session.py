"""The trusted side's handle on the processes that run untrusted code.

The grader never imports student code. It starts one *template* process
(``graders.sandbox.worker``) per student, confined when it serves a student,
which forks a fresh *child* per exercise. A confined template is forked, in a
jail of its own, from a ``ForkServer`` that imported torch once per grading
process (as root; otherwise it is started through ``Sandbox.wrap`` and
imports torch itself); the course's trusted reference is forked from it
without a jail.
``WorkerSession`` is one child that has loaded given cells; the grader sends
it arguments and times each request itself, so no patch of ``time``,
``torch`` or the worker's own code can change a measured time or a compared
value. Every reply is read whole against a deadline; a child that misses it
is killed (by the template, which the child cannot signal), and one that dies
costs only its own requests.

The parts live apart: ``processes`` (failures, reading a reply, ending a program), ``server_handle``
(``ForkServer``), ``template`` (``Template``); this module holds ``WorkerSession`` and names the others
where their users import them from.
"""
from __future__ import annotations

import select
import socket
import time
from contextlib import contextmanager
from typing import Iterator, Sequence

from graders.sandbox.budget import MIN_LIMIT, MachineOutOfTime, NotebookBudget, OutOfTime
from graders.sandbox.clock import ClockUnavailable, CpuClock, Mark, ProgramClock, recv_hello
from graders.sandbox.processes import MAX_REPLY_BYTES, Deadline, WorkerFailure, end_program, misbehaved
from graders.sandbox.protocol import HELLO, Op, read_reply, request
from graders.sandbox.sealed import SealedMessage, send_sealed
from graders.sandbox.server_handle import ForkServer
from graders.sandbox.spec import Limits
from graders.sandbox.template import Template
from graders.sandbox.wire import WireError, recv_frame, send_frame

# the handles' names, where their users have always imported them from
__all__ = ["Deadline", "ForkServer", "Limits", "Template", "WorkerFailure", "WorkerSession", "end_program"]

# a request's deadline is the child's CPU time (``WorkerSession._await_reply``): on a busy machine the grader waits
# up to BUSY_WAIT times it in wall time while the child progresses, and gives up on one that made no progress on
# the CPU for STILL seconds past it; SLICE: how often the child's CPU clock is read once the deadline is near
BUSY_WAIT, STILL, SLICE = 10.0, 2.0, 0.05


class WorkerSession:
    """One child that has run ``cells``; ``request`` sends an operation and waits for its whole reply,
    ``timed_request`` also reads the child's CPU clock around it. ``modules`` (name, label, source): the
    student's own modules, loaded first, so the cells import them. ``budget``: the notebook's time budget
    (graders.sandbox.budget), charged with the program's time of every load and request, which also cuts each
    load's limit (and bounds every wait by its wall-clock cap); siblings share it."""

    def __init__(self, cells: list[tuple[str, str]], limits: Limits = Limits(), sandbox=None,
                 template: Template | None = None, cell_timeout: float = 30.0, server: ForkServer | None = None,
                 modules: Sequence[tuple[str, str, str]] = (), budget: NotebookBudget | None = None):
        self.cells = list(cells)
        self.budget = budget
        self.modules = list(modules)
        self.limits = limits
        self.cell_timeout = cell_timeout
        self.owns_template = template is None
        self.template = template or Template(limits, sandbox, server)
        self.sock: socket.socket | None = None
        self.pid: int | None = None
        self.clock: CpuClock | None = None
        self.program: ProgramClock | None = None  # the child's own time, charged to ``budget``
        self.load_errors: list[str] = []

    @property
    def alive(self) -> bool:
        return self.sock is not None

    def sibling(self) -> WorkerSession:
        """A new child of the same template running the same cells (started on first use)."""
        return WorkerSession(self.cells, self.limits, template=self.template, cell_timeout=self.cell_timeout,
                             modules=self.modules, budget=self.budget)

    def start(self) -> None:
        """Fork a child and run the cells in it, one by one, each within ``cell_timeout`` cut to what is left of
        the notebook's budget (``NotebookBudget.limit``). A load the budget stopped raises ``OutOfTime`` (the
        program spent the budget) or ``MachineOutOfTime`` (the machine's load did), never a load error."""
        self.sock, self.pid = self.template.spawn()
        try:
            self.clock = CpuClock(recv_hello(self.sock, HELLO, self.limits.start_timeout))
        except (TimeoutError, EOFError, OSError) as exc:
            self.kill()
            why = f": {exc}" if isinstance(exc, ConnectionRefusedError) else ""  # another protocol's hello
            raise WorkerFailure(f"the Python process that runs it could not start{why}") from None
        self.program = ProgramClock(self.clock.pid, self.clock)
        self.load_errors = []
        loads = [(Op.LOAD_MODULE, label, {"name": name, "source": source}) for name, label, source in self.modules]
        loads += [(Op.LOAD_CELL, label, {"source": source}) for label, source in self.cells]
        for op, label, payload in loads:
            cut, wall, program_limit = False, self.cell_timeout, None
            try:
                if self.budget is not None:
                    # the cell's own timer (the worker's, wall time) stops it at the cell limit or the wall cap; the
                    # grader stops it when its own time passes what is left of the budget (``program_limit``)
                    limit = self.budget.limit(self.cell_timeout)
                    wall = max(MIN_LIMIT, min(self.cell_timeout, self.budget.wall_left))
                    cut = limit < self.cell_timeout
                    program_limit = limit if cut else None
                reply, elapsed = self._send(op, wall + 5, label=label, budget=wall, program_limit=program_limit,
                                            **payload)
                if self.budget is not None and elapsed >= wall:  # stopped by its own timer: whose limit was it?
                    self.budget.settle(cut=wall < self.cell_timeout)
            except (OutOfTime, MachineOutOfTime):
                self.kill()
                raise
            except WorkerFailure as exc:
                if self.budget is not None and isinstance(exc, Deadline):
                    try:
                        self.budget.settle(cut)
                    except (OutOfTime, MachineOutOfTime):
                        self.kill()
                        raise
                raise WorkerFailure(f"could not run cell `{label}`: it {exc}") from None
            if "error" in reply:
                self.kill()
                raise WorkerFailure(f"could not run cell `{label}`: {reply['error']}")
            if reply["ok"]["error"]:
                self.load_errors.append(reply["ok"]["error"])

    def request(self, op: str, timeout: float, fds=(), regions=(), **payload) -> tuple[dict, float]:
        """Send one operation (an ``Op``); return (reply, seconds from send to full reply), the reply one of its
        op's types (``protocol.read_reply``). ``fds``/``regions``: shared argument memory
        (``graders.sandbox.shared``), passed to the child and used to read the reply."""
        timeout, cut = self._started(timeout)
        with self._settled(cut):
            return self._send(op, timeout, fds, regions, **payload)

    def timed_request(self, message: SealedMessage, timeout: float) -> tuple[dict, float]:
        """Send a ``bench`` request already encoded (``protocol.request(Op.BENCH, ...)``) and sealed in a memfd
        (``graders.sandbox.sealed``: the same inputs sent to two workers are encoded once, and no socket copy of
        them falls inside the window); return (reply, seconds of the child's CPU time from before the send to after
        the whole reply). ``timeout`` is wall time: a deadline, never the measure."""
        timeout, cut = self._started(timeout)
        assert self.clock is not None, "a started child has its clock"
        try:
            before = self.clock.read()
            with self._settled(cut):
                reply, _ = self._exchange(message, Op.BENCH, timeout, cpu_from=before)
            return reply, self.clock.read() - before
        except ClockUnavailable:
            self.kill()
            raise WorkerFailure("the Python process running it died") from None

    def _started(self, timeout: float) -> tuple[float, bool]:
        """Start the child if it is not running; a start (its loads) spends the notebook's budget, so the request's
        ``timeout`` is cut again to what is left: (the timeout, whether this cut it)."""
        if self.alive:
            return timeout, False
        self.start()
        if self.budget is None:
            return timeout, False
        limit = self.budget.limit(timeout)
        return limit, limit < timeout

    @contextmanager
    def _settled(self, cut: bool) -> Iterator[None]:
        """A deadline of a request whose timeout ``_started`` cut is the budget's (``NotebookBudget.settle``)."""
        try:
            yield
        except Deadline:
            if cut and self.budget is not None:
                self.budget.settle(cut=True)
            raise

    def _send(self, op: str, timeout: float, fds=(), regions=(), program_limit: float | None = None,
              **payload) -> tuple[dict, float]:
        return self._exchange(request(op, regions, **payload), op, timeout, fds, regions,
                              program_limit=program_limit)

    def _await_reply(self, sock: socket.socket, timeout: float, cpu_from: float, program_limit: float | None = None,
                     began: Mark | None = None) -> None:
        """Wait until the child's reply starts to arrive. ``timeout`` is the child's CPU time: on a busy machine a
        child that computes slowly is waited for until it has spent ``timeout`` on the CPU (up to
        ``BUSY_WAIT`` times ``timeout`` of wall time), so a deadline says something of the code, not of the
        machine's load; a child that makes no progress on the CPU for ``STILL`` seconds past ``timeout`` (stopped,
        asleep, or blocked) has missed it; ``cpu_from``: the child's CPU clock before the request was sent.
        ``program_limit``: the child's own time (``ProgramClock``, from ``began``) it may spend on it, what is left of
        the notebook's budget, read every ``SLICE`` once that much wall time passed. Raises TimeoutError when the
        deadline has passed."""
        start = time.monotonic()
        wall_deadline, hard = start + timeout, start + max(BUSY_WAIT * timeout, timeout + STILL)
        if self.budget is not None:  # the notebook's wall-clock cap bounds every wait
            hard = min(hard, max(wall_deadline, start + self.budget.wall_left))
        clock, program = self.clock, self.program
        watch = start + program_limit if program_limit is not None and began is not None and program else None
        last_cpu, last_progress = None, start
        while True:
            now = time.monotonic()
            end = wall_deadline if clock is None else hard
            if now >= end:
                raise TimeoutError
            # until the deadline (or the budget's watch), one wait; past it, a look at the clocks every SLICE
            first = wall_deadline if watch is None else min(wall_deadline, watch)
            wait = first - now if now < first else min(SLICE, end - now)
            ready, _, _ = select.select([sock], [], [], wait)
            if ready:
                return
            if watch is not None and program is not None and began is not None and time.monotonic() >= watch:
                if ProgramClock.between(began, program.mark())[0] >= (program_limit or 0.0):
                    raise TimeoutError  # the child's own time passed what was left of the notebook's budget
            if clock is None or time.monotonic() < wall_deadline:
                continue
            try:
                cpu = clock.read()
            except ClockUnavailable:
                raise TimeoutError from None
            if cpu - cpu_from >= timeout:
                raise TimeoutError  # computing all along: the code itself is past its deadline
            if last_cpu is None or cpu > last_cpu + 1e-4:
                last_cpu, last_progress = cpu, time.monotonic()
            elif time.monotonic() - last_progress >= STILL:
                raise TimeoutError  # no progress on the CPU: stopped, asleep or blocked

    def _exchange(self, message: bytes | SealedMessage, op: Op | str, timeout: float, fds=(), regions=(),
                  cpu_from: float | None = None, program_limit: float | None = None) -> tuple[dict, float]:
        sock = self.sock
        assert sock is not None, "requests go to a started child (start or request spawns it first)"
        start = time.perf_counter()
        began = self.program.mark() if self.program is not None else None
        try:
            try:
                sent_at = cpu_from if cpu_from is not None else self._read_clock()
                if isinstance(message, SealedMessage):
                    send_sealed(sock, message, timeout=timeout)
                else:
                    send_frame(sock, message, fds, timeout=timeout)
                self._await_reply(sock, timeout, sent_at, program_limit, began)
                data = recv_frame(sock, time.monotonic() + max(timeout, STILL), MAX_REPLY_BYTES)
                elapsed = time.perf_counter() - start
            finally:  # once per request, however it ended, and before a kill (a dead process's queue is unreadable)
                self._charge(began)
            reply = dict(read_reply(data, op, regions))
        except TimeoutError:
            cpu = None
            if cpu_from is not None and self.clock is not None:
                try:
                    cpu = self.clock.read() - cpu_from
                except ClockUnavailable:
                    pass
            self.kill()
            raise Deadline(f"did not return within {timeout:g} s", cpu) from None
        except (EOFError, OSError):
            self.kill()
            raise WorkerFailure("the Python process running it died") from None
        except WireError as exc:  # unreadable, or not one of the op's replies (protocol.BadReply)
            self.kill()
            raise misbehaved(exc) from None
        return reply, elapsed

    def _charge(self, began: Mark | None) -> None:
        """Charge the notebook's budget with the program's time since ``began`` (once per request)."""
        if self.budget is not None and self.program is not None and began is not None:
            now = self.program.mark()
            seconds, exact = ProgramClock.between(began, now)
            self.budget.charge(seconds, exact, now.wall - began.wall)

    def _read_clock(self) -> float:
        try:
            return self.clock.read() if self.clock is not None else 0.0
        except ClockUnavailable:
            return 0.0

    def kill(self) -> None:
        """Stop the child (the template does it: a child cannot refuse); the next request forks a new one."""
        if self.pid is not None:
            self.template.kill(self.pid)
        if self.sock is not None:
            self.sock.close()
        self.sock, self.pid, self.clock, self.program = None, None, None, None

    def close(self) -> None:
        self.kill()
        if self.owns_template:
            self.template.__exit__()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
