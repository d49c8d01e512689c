"""The kernel's CPU clock of another process: how the grader times a worker from outside.

A worker's compute is measured as the CPU time the kernel accounted to its
process (every thread) between the moment the grader sends a request and the
moment it has read the whole reply, not as the wall time between them: the
wall clock counts whatever else the machine runs, the CPU clock only the work
done by the process itself. The grader reads it with ``clock_getcpuclockid``
on the worker's pid as the grader's own PID namespace numbers it, which it
learns from the kernel (``SO_PASSCRED``) when the worker says hello, never
from what the worker claims. Wall time is still used, for deadlines only.
"""
from __future__ import annotations

import ctypes
import socket
import struct
import time

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
