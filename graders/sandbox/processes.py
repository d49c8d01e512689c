"""What the grader's handles on untrusted processes share: their failures, reading one reply, ending one.

A reply is read whole against a deadline and decoded as plain data (``graders.sandbox.wire``); anything
else -- a reply too large, unreadable, or not a dict -- is a ``WorkerFailure``, never an exception of
the wire's or the socket's.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

from graders.model.errors import VecgradeError
from graders.sandbox import cgroup
from graders.sandbox.wire import WireError, decode, recv_frame

MAX_REPLY_BYTES = 256 * 1024 * 1024


class WorkerFailure(VecgradeError):
    """The worker hung, died or sent something unreadable; the message says which."""


class Deadline(WorkerFailure):
    """The worker did not reply in time (it has been killed). ``cpu``: for a timed request, the CPU seconds the
    worker had spent on it by then (a worker that was running all along, or one the machine kept waiting)."""

    def __init__(self, message: str, cpu: float | None = None):
        super().__init__(message)
        self.cpu = cpu


def read_reply(sock: socket.socket, timeout: float) -> dict:
    """One whole reply (a dict) within ``timeout`` seconds; WorkerFailure when it cannot be read."""
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
