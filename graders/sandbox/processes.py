"""What the grader's handles on untrusted processes share: their failures, reading one reply, ending one.

A reply is read whole against a deadline, decoded as plain data and checked against the types its request is
declared to get (``graders.sandbox.protocol.read_reply``); anything else -- a reply too large, unreadable, or
not of its types -- is a ``WorkerFailure`` (a hello of another protocol version: ``OtherVersion``), never an
exception of the wire's or the socket's.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

from graders.model.errors import VecgradeError
from graders.sandbox import cgroup, protocol
from graders.sandbox.wire import WireError, recv_frame

MAX_REPLY_BYTES = 256 * 1024 * 1024


class WorkerFailure(VecgradeError):
    """The worker hung, died or sent something unreadable; the message says which."""


class Deadline(WorkerFailure):
    """The worker did not reply in time (it has been killed). ``cpu``: for a timed request, the CPU seconds the
    worker had spent on it by then (a worker that was running all along, or one the machine kept waiting)."""

    def __init__(self, message: str, cpu: float | None = None):
        super().__init__(message)
        self.cpu = cpu


class OtherVersion(WorkerFailure):
    """The process said hello in another protocol version (another installation of the kit): it is not used."""


def misbehaved(exc: WireError) -> WorkerFailure:
    """The failure a reply that could not be read, or was not of its types, stands for."""
    if isinstance(exc, protocol.OtherProtocol):
        return OtherVersion(f"could not start: {exc}")
    return WorkerFailure(f"sent a reply the grader cannot read ({exc})")


def read_reply(sock: socket.socket, timeout: float, answering: protocol.Op | None) -> dict:
    """One whole reply to a request of ``answering`` (None: the process's hello) within ``timeout`` seconds,
    of one of its types (``protocol.read_reply``); WorkerFailure when it cannot be read or is not."""
    try:
        data = recv_frame(sock, time.monotonic() + timeout, MAX_REPLY_BYTES)
        return dict(protocol.read_reply(data, answering))
    except WireError as exc:
        raise misbehaved(exc) from None


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
