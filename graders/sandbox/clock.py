"""The kernel's CPU clock of another process: how the grader times a worker from outside.

A worker's compute is measured as the CPU time the kernel accounted to its
process (every thread) between the moment the grader sends a request and the
moment it has read the whole reply, not as the wall time between them: the
wall clock counts whatever else the machine runs, the CPU clock only the work
done by the process itself. The grader reads it with ``clock_getcpuclockid``
on the worker's pid as the grader's own PID namespace numbers it, which it
learns from the kernel (``SO_PASSCRED``) when the worker says hello, never
from what the worker claims. Wall time is still used, for deadlines only.

The notebook's time budget (graders.sandbox.budget) is charged in ``ProgramClock`` time instead: the wall time of
a request less the time the kernel kept the process waiting in its run queue, so that sleeping counts as the
program's and the machine's load does not.
"""
from __future__ import annotations

import ctypes
import socket
import struct
import time
from dataclasses import dataclass

from graders.model.errors import VecgradeError

_libc = ctypes.CDLL(None, use_errno=True)
_CREDS = struct.Struct("iII")  # struct ucred: pid, uid, gid


class ClockUnavailable(VecgradeError, OSError):
    """The process is gone, or its clock cannot be read from here."""


class CpuClock:
    """Seconds of CPU time of process ``pid`` (a pid of the reader's own namespace)."""

    def __init__(self, pid: int):
        clock = ctypes.c_int()
        if _libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
            raise ClockUnavailable(f"no CPU clock for process {pid}")
        self.pid, self.id = pid, clock.value

    def read(self) -> float:
        try:
            return time.clock_gettime(self.id)
        except OSError as exc:
            raise ClockUnavailable(f"the CPU clock of process {self.pid} cannot be read: {exc}") from None


def listen_for_credentials(sock: socket.socket) -> None:
    """Have the kernel attach the sender's credentials to what ``sock`` receives (set before the peer sends)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)


def recv_hello(sock: socket.socket, hello: bytes, timeout: float) -> int:
    """Read the peer's ``hello`` and return its pid, as the kernel reports it in this process's namespace.
    A peer that says something else is refused at its first byte that differs (``ConnectionRefusedError``), not
    waited for: a hello of another protocol version differs in its first bytes."""
    sock.settimeout(timeout)
    got, pid = b"", 0
    while len(got) < len(hello):
        data, ancillary, _, _ = sock.recvmsg(len(hello) - len(got), socket.CMSG_SPACE(_CREDS.size))
        if not data:
            raise EOFError
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= _CREDS.size:
                pid = pid or _CREDS.unpack_from(payload)[0]
        got += data
        if not hello.startswith(got):
            raise ConnectionRefusedError(f"a hello {got[:40]!r}, not this protocol's {hello!r}")
    if pid <= 0:
        raise EOFError
    return pid


def run_queue_wait(pid: int) -> float | None:
    """Seconds process ``pid`` (its main thread; a pid of the reader's namespace) has waited in the kernel's run
    queue, runnable but kept off the CPU by other work: the second field of ``/proc/<pid>/schedstat`` (``run_delay``,
    in ns; kernels with ``CONFIG_SCHED_INFO``, which distributions enable). None where it cannot be read (no such
    file, ``/proc`` mounted ``hidepid``, the process gone)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            fields = f.read().split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Mark:
    """A moment of a process's life, as ``ProgramClock.mark`` reads it."""

    wall: float  # time.monotonic()
    waited: float | None  # run_queue_wait, None: unreadable
    cpu: float | None  # CpuClock.read, None: unreadable


class ProgramClock:
    """The time a process spends as its own, from outside: between two marks, the wall time less what it waited in
    the run queue (so sleeping and computing count, the machine's load does not), and at least its CPU time (all its
    threads, so its own threads keeping its main thread waiting count too), never more than the wall time. Where
    the run-queue wait cannot be read (``run_queue_wait`` is None at either mark), all the wall time counts: nothing
    else seen from outside tells a sleeping program from a waiting one, and a program's sleep must count
    (``exact`` is then False)."""

    def __init__(self, pid: int, cpu: CpuClock | None = None):
        self.pid, self.cpu = pid, cpu

    def mark(self) -> Mark:
        cpu: float | None = None
        if self.cpu is not None:
            try:
                cpu = self.cpu.read()
            except ClockUnavailable:
                cpu = None
        return Mark(time.monotonic(), run_queue_wait(self.pid), cpu)

    @staticmethod
    def between(before: Mark, after: Mark) -> tuple[float, bool]:
        """(seconds that were the program's from ``before`` to ``after``, whether measured exactly); the wall time
        between them is ``after.wall - before.wall``."""
        wall = max(0.0, after.wall - before.wall)
        cpu = after.cpu - before.cpu if after.cpu is not None and before.cpu is not None else 0.0
        if before.waited is None or after.waited is None:
            return wall, False
        return min(wall, max(wall - (after.waited - before.waited), cpu)), True
