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
"""
from __future__ import annotations

import atexit
import dataclasses
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Sequence

from graders.sandbox import cgroup
from graders.sandbox.clock import ClockUnavailable, CpuClock, listen_for_credentials, recv_hello
from graders.sandbox.scratch import Scratch
from graders.sandbox.spec import JailSpec, Limits, Where, environment
from graders.sandbox.wire import WireError, decode, encode, recv_frame, send_frame
from graders.sandbox.worker import HELLO

MAX_REPLY_BYTES = 256 * 1024 * 1024
# a request's deadline is the child's CPU time (``WorkerSession._await_reply``): on a busy machine the grader waits
# up to BUSY_WAIT times it in wall time while the child progresses, and gives up on one that made no progress on
# the CPU for STILL seconds past it; SLICE: how often the child's CPU clock is read once the deadline is near
BUSY_WAIT, STILL, SLICE = 10.0, 2.0, 0.05


class WorkerFailure(Exception):
    """The worker hung, died or sent something unreadable; the message says which."""


class Deadline(WorkerFailure):
    """The worker did not reply in time (it has been killed). ``cpu``: for a timed request, the CPU seconds the
    worker had spent on it by then (a worker that was running all along, or one the machine kept waiting)."""

    def __init__(self, message: str, cpu: float | None = None):
        super().__init__(message)
        self.cpu = cpu


def _read(sock: socket.socket, timeout: float) -> dict:
    try:
        data = recv_frame(sock, time.monotonic() + timeout, MAX_REPLY_BYTES)
        reply = decode(data)
    except WireError as exc:
        raise WorkerFailure(f"sent a reply the grader cannot read ({exc})") from None
    if not isinstance(reply, dict):
        raise WorkerFailure("sent a reply the grader cannot read")
    return reply


def end_program(proc: subprocess.Popen | None, control: socket.socket | None) -> None:
    """Kill a started program's whole process group, reap it, and close the grader's socket to it."""
    if proc is not None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        cgroup.release(proc.pid)  # a jail started as a program: its group goes with it
    if control is not None:
        control.close()


class ForkServer:
    """The grader's handle on ``graders.sandbox.forkserver``: started on first use, one per grading process
    (``shared``), closed when the process exits."""

    _shared: "tuple[int, ForkServer] | None" = None

    @classmethod
    def release_shared(cls) -> None:
        """Stop this process's server, if it has one (the next ``shared`` starts a new one)."""
        if cls._shared is not None and cls._shared[0] == os.getpid():
            cls._shared[1].close()
            cls._shared = None

    @classmethod
    def shared(cls) -> "ForkServer":
        """This process's server (a forked or spawned grading process gets one of its own)."""
        if cls._shared is None or cls._shared[0] != os.getpid():
            cls._shared = (os.getpid(), cls())
            atexit.register(cls._shared[1].close)
        return cls._shared[1]

    def __init__(self, start_timeout: float = 60.0):
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.scratch: Scratch | None = None
        self.lock = threading.Lock()

    def _start(self) -> None:
        parent, child = socket.socketpair()
        self.scratch = Scratch("forkserver")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "graders.sandbox.forkserver", str(child.fileno())],
            pass_fds=[child.fileno()], cwd=self.scratch.name, env=environment(Where.OUTSIDE, self.scratch.name),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        child.close()
        self.control = parent
        if "ready" not in _read(parent, self.start_timeout):
            raise WorkerFailure("the warm server did not start")

    def start(self) -> None:
        """Start the server now rather than on the first request (a worker preparing itself)."""
        with self.lock:
            if self.control is None:
                try:
                    self._start()
                except (TimeoutError, EOFError, OSError, WorkerFailure):
                    self._stop()  # the first request tries again

    def _ask(self, op: str, fds=(), **payload) -> dict:
        with self.lock:
            try:
                if self.control is None:
                    self._start()
                assert self.control is not None, "_start sets the control socket or raises"
                send_frame(self.control, encode((op, payload)), fds, timeout=10)
                return _read(self.control, 30)
            except (TimeoutError, EOFError, OSError, WorkerFailure):
                self._stop()  # the next request starts a fresh server
                raise WorkerFailure("the Python process that runs it could not start") from None

    def fork_template(self, sock: socket.socket, jail: JailSpec | None, cwd: str = "/",
                      limits: Limits = Limits()) -> int:
        """A template serving ``sock``: a student's, in a jail of its own (``jail``), or without a jail
        (None: the course's trusted reference) in ``cwd`` under ``limits``; returns its handle (a pid)."""
        rlimits = {k: v for k, v in dataclasses.asdict(limits).items() if k != "start_timeout"}
        reply = self._ask("template", fds=[sock.fileno()], jail=None if jail is None else jail.to_wire(), cwd=cwd,
                          limits=rlimits)
        if "pid" not in reply:
            raise WorkerFailure("the Python process that runs it could not start")
        return int(reply["pid"])

    def fork_shell(self, sock: socket.socket, jail: JailSpec) -> int:
        """A notebook's feedback shell (graders.sandbox.shell) serving ``sock``, in a jail of its own; its handle."""
        reply = self._ask("shell", fds=[sock.fileno()], jail=jail.to_wire())
        if "pid" not in reply:
            raise WorkerFailure("the notebook's kernel could not start")
        return int(reply["pid"])

    def kill(self, pid: int) -> None:
        """Stop a template or shell and its whole jail."""
        try:
            self._ask("kill", pid=pid)
        except WorkerFailure:
            pass

    def _stop(self) -> None:
        if self.control is not None and self.proc is not None:
            self.control.close()  # the server ends its jails and removes their cgroups, then exits
            self.control = None
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        end_program(self.proc, self.control)
        if self.scratch is not None:
            self.scratch.cleanup()
        self.proc, self.control, self.scratch = None, None, None

    def close(self) -> None:
        with self.lock:
            self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Template:
    """A warm process that forks children, forked from ``server`` when one is given: confined when
    ``sandbox`` is given (student code; forked only as root), unconfined otherwise (the reference)."""

    def __init__(self, limits: Limits = Limits(), sandbox=None, server: ForkServer | None = None):
        self.limits, self.sandbox, self.server = limits, sandbox, server
        self.proc: subprocess.Popen | None = None
        self.forked: int | None = None  # the server's handle on this template's jail
        self.control: socket.socket | None = None
        self.begun = False  # asked of the server by ``begin``, not yet waited for
        # a student's jail writes only here: a tmpfs of Sandbox.scratch_mb (as root)
        self.scratch = sandbox.scratch("worker") if sandbox is not None else Scratch("worker")

    @property
    def alive(self) -> bool:
        if self.forked is not None:
            return self.control is not None
        return self.proc is not None and self.proc.poll() is None

    def _from_server(self) -> bool:
        return self.server is not None and (self.sandbox is None or (os.geteuid() == 0 and self.sandbox.check()))

    def begin(self) -> None:
        """Ask the server for this template now, without waiting for it to be ready (``start`` waits): its jail is
        set up meanwhile, which takes tens of milliseconds spent mostly waiting on the kernel (namespaces, cgroup,
        mounts), not on a CPU. Nothing is asked of a template that is not forked from a server."""
        if self.control is None and self._from_server():
            try:
                self._launch(forked=True)
                self.begun = True
            except WorkerFailure:
                self.close()  # ``start`` tries again, as it would have

    def start(self) -> None:
        if self.begun:  # asked for already: wait for it to be ready
            self.begun = False
            try:
                return self._ready()
            except WorkerFailure:  # as a failed start: the server again, then a new program
                pass
        if self._from_server():
            try:
                return self._start(forked=True)
            except WorkerFailure:  # the server could not provide one: start a new program instead
                pass
        self._start(forked=False)

    def _start(self, forked: bool) -> None:
        self._launch(forked)
        self._ready()

    def _launch(self, forked: bool) -> None:
        parent, child = socket.socketpair()
        if forked:
            assert self.server is not None, "checked by _from_server"
            jail = self.sandbox.jail_spec(self.scratch.name) if self.sandbox is not None else None
            try:
                self.forked = self.server.fork_template(child, jail, self.scratch.name, self.limits)
            except BaseException:
                parent.close()
                raise
            finally:
                child.close()
        else:
            command = [sys.executable, "-m", "graders.sandbox.worker", str(child.fileno())]
            if self.sandbox is not None:
                command = self.sandbox.wrap(command, scratch=self.scratch.name)
            self.proc = subprocess.Popen(
                command, pass_fds=[child.fileno()], cwd=self.scratch.name,
                env=environment(Where.OUTSIDE, self.scratch.name),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=self.limits.apply)
            child.close()
        self.control = parent

    def _ready(self) -> None:
        parent = self.control
        assert parent is not None, "launched"
        try:
            reply = _read(parent, self.limits.start_timeout)
        except (TimeoutError, EOFError, OSError, WorkerFailure):
            self.close()
            raise WorkerFailure("the Python process that runs it could not start") from None
        if "ready" not in reply:
            self.close()
            raise WorkerFailure("the Python process that runs it could not start")

    def _ask(self, op: str, fds=(), **payload) -> dict:
        if not self.alive:
            self.start()
        control = self.control
        assert control is not None, "a live template has its control socket (start and close set both)"
        try:
            send_frame(control, encode((op, payload)), fds, timeout=10)
            return _read(control, 10)
        except (TimeoutError, EOFError, OSError, WorkerFailure):
            self.close()  # a template that does not answer goes, with every child it holds
            raise WorkerFailure("the Python process that runs it died") from None

    def spawn(self) -> tuple[socket.socket, int]:
        """A fresh child: (socket to it, its pid as the template sees it)."""
        mine, theirs = socket.socketpair()
        listen_for_credentials(mine)  # the child's hello then tells its pid in this namespace
        try:
            reply = self._ask("spawn", fds=[theirs.fileno()])
        finally:
            theirs.close()
        return mine, int(reply["pid"])

    def kill(self, pid: int) -> None:
        if self.alive:
            try:
                self._ask("kill", pid=pid)
            except WorkerFailure:
                pass

    def close(self) -> None:
        if self.forked is not None and self.server is not None:
            self.server.kill(self.forked)
        end_program(self.proc, self.control)
        self.proc, self.forked, self.control, self.begun = None, None, None, False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        self.scratch.cleanup()


class WorkerSession:
    """One child that has run ``cells``; ``request`` sends an operation and waits for its whole reply,
    ``timed_request`` also reads the child's CPU clock around it. ``modules`` (name, label, source): the
    student's own modules, loaded first, so the cells import them."""

    def __init__(self, cells: list[tuple[str, str]], limits: Limits = Limits(), sandbox=None,
                 template: Template | None = None, cell_timeout: float = 30.0, server: ForkServer | None = None,
                 modules: Sequence[tuple[str, str, str]] = ()):
        self.cells = list(cells)
        self.modules = list(modules)
        self.limits = limits
        self.cell_timeout = cell_timeout
        self.owns_template = template is None
        self.template = template or Template(limits, sandbox, server)
        self.sock: socket.socket | None = None
        self.pid: int | None = None
        self.clock: CpuClock | None = None
        self.load_errors: list[str] = []

    @property
    def alive(self) -> bool:
        return self.sock is not None

    def sibling(self) -> WorkerSession:
        """A new child of the same template running the same cells (started on first use)."""
        return WorkerSession(self.cells, self.limits, template=self.template, cell_timeout=self.cell_timeout,
                             modules=self.modules)

    def start(self) -> None:
        """Fork a child and run the cells in it, one by one, each within ``cell_timeout``."""
        self.sock, self.pid = self.template.spawn()
        try:
            self.clock = CpuClock(recv_hello(self.sock, HELLO, self.limits.start_timeout))
        except (TimeoutError, EOFError, OSError):
            self.kill()
            raise WorkerFailure("the Python process that runs it could not start") from None
        self.load_errors = []
        loads = [("load_module", label, {"name": name, "source": source}) for name, label, source in self.modules]
        loads += [("load_cell", label, {"source": source}) for label, source in self.cells]
        for op, label, payload in loads:
            try:
                reply, _ = self._send(op, self.cell_timeout + 5, label=label, budget=self.cell_timeout, **payload)
            except WorkerFailure as exc:
                raise WorkerFailure(f"could not run cell `{label}`: it {exc}") from None
            if "error" in reply:
                self.kill()
                raise WorkerFailure(f"could not run cell `{label}`: {reply['error']}")
            if reply["ok"]["error"]:
                self.load_errors.append(reply["ok"]["error"])

    def request(self, op: str, timeout: float, fds=(), regions=(), **payload) -> tuple[dict, float]:
        """Send one operation; return (reply, seconds from send to full reply). ``fds``/``regions``:
        shared argument memory (``graders.sandbox.shared``), passed to the child and used to read the reply."""
        if not self.alive:
            self.start()
        return self._send(op, timeout, fds, regions, **payload)

    def timed_request(self, message: bytes, timeout: float) -> tuple[dict, float]:
        """Send a message already encoded (``wire.encode((op, payload))``: the same inputs sent to two workers
        are encoded once); return (reply, seconds of the child's CPU time from before the send to after the whole
        reply). ``timeout`` is wall time: a deadline, never the measure."""
        if not self.alive:
            self.start()
        assert self.clock is not None, "a started child has its clock"
        try:
            before = self.clock.read()
            reply, _ = self._exchange(message, timeout, cpu_from=before)
            return reply, self.clock.read() - before
        except ClockUnavailable:
            self.kill()
            raise WorkerFailure("the Python process running it died") from None

    def _send(self, op: str, timeout: float, fds=(), regions=(), **payload) -> tuple[dict, float]:
        return self._exchange(encode((op, payload), regions), timeout, fds, regions)

    def _await_reply(self, sock: socket.socket, timeout: float, cpu_from: float) -> None:
        """Wait until the child's reply starts to arrive. ``timeout`` is the child's CPU time: on a busy machine a
        child that computes slowly is waited for until it has spent ``timeout`` on the CPU (up to
        ``BUSY_WAIT`` times ``timeout`` of wall time), so a deadline says something of the code, not of the
        machine's load; a child that makes no progress on the CPU for ``STILL`` seconds past ``timeout`` (stopped,
        asleep, or blocked) has missed it; ``cpu_from``: the child's CPU clock before the request was sent. Raises
        TimeoutError when the deadline has passed."""
        start = time.monotonic()
        wall_deadline, hard = start + timeout, start + max(BUSY_WAIT * timeout, timeout + STILL)
        clock = self.clock
        last_cpu, last_progress = None, start
        while True:
            now = time.monotonic()
            end = wall_deadline if clock is None else hard
            if now >= end:
                raise TimeoutError
            # until the deadline, one wait; past it (a clock to read), a look at the CPU clock every SLICE
            wait = wall_deadline - now if now < wall_deadline else min(SLICE, end - now)
            ready, _, _ = select.select([sock], [], [], wait)
            if ready:
                return
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

    def _exchange(self, message: bytes, timeout: float, fds=(), regions=(),
                  cpu_from: float | None = None) -> tuple[dict, float]:
        sock = self.sock
        assert sock is not None, "requests go to a started child (start or request spawns it first)"
        start = time.perf_counter()
        try:
            sent_at = cpu_from if cpu_from is not None else self._read_clock()
            send_frame(sock, message, fds, timeout=timeout)
            self._await_reply(sock, timeout, sent_at)
            data = recv_frame(sock, time.monotonic() + max(timeout, STILL), MAX_REPLY_BYTES)
            elapsed = time.perf_counter() - start
            reply = decode(data, regions)
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
        except WireError as exc:
            self.kill()
            raise WorkerFailure(f"sent a reply the grader cannot read ({exc})") from None
        if not isinstance(reply, dict):
            self.kill()
            raise WorkerFailure("sent a reply the grader cannot read")
        return reply, elapsed

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
        self.sock, self.pid, self.clock = None, None, None

    def close(self) -> None:
        self.kill()
        if self.owns_template:
            self.template.__exit__()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
