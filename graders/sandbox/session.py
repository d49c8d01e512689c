"""The trusted side's handle on a worker process.

The grader never imports student code. It starts ``graders.sandbox.worker`` in a
child process, sends it arguments, and times the round trip itself, so no
patch of ``time``, ``torch`` or the worker's own code can change a measured
time or a compared value. A worker that hangs is killed at the deadline; one
that dies is reported and can be started again.
"""
from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection

from graders.sandbox.wire import WireError, decode, encode

MAX_REPLY_BYTES = 256 * 1024 * 1024


class WorkerFailure(Exception):
    """The worker hung, died or sent something unreadable; the message says which."""


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to every worker (see nbgrader_config.py)."""

    memory_bytes: int = 6 * 1024 ** 3
    cpu_seconds: int = 300
    file_bytes: int = 16 * 1024 * 1024
    start_timeout: float = 60.0

    def apply(self) -> None:  # runs in the child between fork and exec
        for what, value in ((resource.RLIMIT_AS, self.memory_bytes),
                            (resource.RLIMIT_CPU, self.cpu_seconds),
                            (resource.RLIMIT_FSIZE, self.file_bytes),
                            (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(what, (value, value))


def _decode(data: bytes) -> dict:
    try:
        reply = decode(data)
    except WireError as exc:
        raise WorkerFailure(f"sent a reply the grader cannot read ({exc})") from None
    if not isinstance(reply, dict):
        raise WorkerFailure("sent a reply the grader cannot read")
    return reply


class WorkerSession:
    """One live worker process; ``request`` sends an operation and waits for its reply."""

    def __init__(self, cells: list[tuple[str, str]], limits: Limits = Limits(), sandbox=None):
        self.cells = list(cells)
        self.limits = limits
        self.sandbox = sandbox  # a graders.sandbox.policy.Sandbox for student code; None for trusted code
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.load_errors: list[str] = []
        self.scratch = tempfile.TemporaryDirectory(prefix="vecgrade-worker-")

    def start(self) -> None:
        """Start the process and run the cells in it (again, after a kill)."""
        self._spawn()
        reply, _ = self._send("load", self.limits.start_timeout, cells=self.cells)
        if "error" in reply:
            self.kill()
            raise WorkerFailure(f"could not run the notebook's cells: {reply['error']}")
        self.load_errors = list(reply["ok"]["errors"])

    def _spawn(self) -> None:
        parent, child = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "PYTHONPATH")}
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1",
                   PYTHONWARNINGS="ignore", TMPDIR=self.scratch.name)
        command = [sys.executable, "-m", "graders.sandbox.worker", str(child.fileno())]
        if self.sandbox is not None:
            command = self.sandbox.wrap(command, scratch=self.scratch.name)
        self.proc = subprocess.Popen(
            command,
            pass_fds=[child.fileno()], cwd=self.scratch.name, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=self.limits.apply,
        )
        child.close()
        self.conn = Connection(parent.detach())

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def request(self, op: str, timeout: float, **payload) -> tuple[dict, float]:
        """Send one operation; return (reply, seconds from send to full reply)."""
        if not self.alive:
            self.start()
        return self._send(op, timeout, **payload)

    def _send(self, op: str, timeout: float, **payload) -> tuple[dict, float]:
        start = time.perf_counter()
        try:
            self.conn.send_bytes(encode((op, payload)))
            if not self.conn.poll(timeout):
                self.kill()
                raise WorkerFailure(f"did not return within {timeout:g} s")
            data = self.conn.recv_bytes(MAX_REPLY_BYTES)
        except (EOFError, OSError, BrokenPipeError):
            code = self.kill()
            raise WorkerFailure(f"the Python process running it died (exit status {code})") from None
        elapsed = time.perf_counter() - start
        reply = _decode(data)
        if reply.get("exit"):
            self.kill()
        return reply, elapsed

    def kill(self) -> int | None:
        """Stop the worker and anything it started; return its exit status."""
        if self.proc is None:
            return None
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        code = self.proc.wait()
        if self.conn is not None:
            self.conn.close()
        self.proc, self.conn = None, None
        return code

    def close(self) -> None:
        self.kill()
        self.scratch.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
