"""Starting the fork server program (graders.sandbox.forkserver), without importing torch.

A grading process's fork server is a program of its own that imports torch before it is ready. This module
starts one without importing anything heavy, so a command can start its grading processes' servers first,
while it imports everything else on the other core:

- ``launch()`` starts one server and returns its ``Launched`` handle;
- ``start_early(n)``, in the command's process, starts ``n`` servers before that process forks its grading
  processes; each grading process (a fork of it, or the command's process itself when it grades alone) then
  ``claim()``s one: one byte read from a pipe they all share, so each server is claimed once;
- ``let_go()``, in the starting process once its grading processes are forked, closes its own copies of
  every server's control socket: a server nobody claimed sees its socket closed and exits.

A process that finds nothing to claim (a spawned one, one more process than servers) launches its own.
A server is a child of the process that launched it: that process reaps it (``let_go`` and, at exit,
every server it started is ended and reaped); the process that claimed it stops it (``Launched.stop``).
"""
from __future__ import annotations

import atexit
import os
import select
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass

from graders.sandbox import cgroup
from graders.sandbox.scratch import Scratch
from graders.sandbox.spec import Where, environment


@dataclass
class Launched:
    """A started fork server: its process, the grader's end of its control socket, its working folder, and the pid
    of the process that launched it (its parent, which alone can reap it)."""

    proc: subprocess.Popen
    control: socket.socket
    scratch: Scratch
    parent: int

    def _ended(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the server to end; a process that is not its parent watches a pidfd."""
        if os.getpid() == self.parent:
            try:
                self.proc.wait(timeout=timeout)
                return True
            except subprocess.TimeoutExpired:
                return False
        try:
            fd = os.pidfd_open(self.proc.pid)
        except OSError:  # already gone (and reaped)
            return True
        try:
            return bool(select.select([fd], [], [], timeout)[0])
        finally:
            os.close(fd)

    def stop(self, grace: float = 5.0) -> None:
        """Close the control socket (the server ends its jails, removes their cgroups and exits), give it ``grace``
        seconds, then kill whatever is left of its process group; reaped here when this process launched it."""
        self.control.close()
        self._ended(grace)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if os.getpid() == self.parent:
            self.proc.wait()
            cgroup.release(self.proc.pid)
            self.scratch.cleanup()


def launch() -> Launched:
    """Start one fork server (``python -m graders.sandbox.forkserver FD``) in a folder of its own, with the
    environment of untrusted code; it says "ready" on its control socket once torch is imported."""
    parent, child = socket.socketpair()
    scratch = Scratch("forkserver")
    proc = subprocess.Popen(
        [sys.executable, "-m", "graders.sandbox.forkserver", str(child.fileno())],
        pass_fds=[child.fileno()], cwd=scratch.name, env=environment(Where.OUTSIDE, scratch.name),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    child.close()
    return Launched(proc, parent, scratch, os.getpid())


_early: list[Launched | None] = []  # the servers this process started early (or, in a fork, its copies of them)
_tokens: int | None = None  # the read end of the pipe of unclaimed servers' numbers
_starter: int | None = None  # the pid of the process that started them


def start_early(n: int) -> None:
    """Start ``n`` servers now, for this process's grading processes to ``claim`` (once per process)."""
    global _tokens, _starter
    if _early or n < 1:
        return
    _early.extend(launch() for _ in range(min(n, 255)))
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.write(write, bytes(range(len(_early))))
    os.close(write)
    _tokens, _starter = read, os.getpid()
    atexit.register(_end_started)


def claim() -> Launched | None:
    """One of the servers started early, for this process, or None. In a forked process, its copies of the other
    servers' sockets are closed (their owners hold their own)."""
    global _tokens
    if _tokens is None:
        return None
    try:
        token = os.read(_tokens, 1)
    except OSError:  # BlockingIOError: every server is claimed
        token = b""
    mine = _early[token[0]] if token else None
    if os.getpid() == _starter:
        if mine is not None:
            _early[token[0]] = None  # its ForkServer holds it now
        return mine
    for launched in _early:
        if launched is not None and launched is not mine:
            launched.control.close()
    os.close(_tokens)
    _tokens = None
    _early.clear()
    return mine


def let_go() -> None:
    """In the starting process, once its grading processes are forked: close its copies of the servers' sockets
    (a server nobody claimed then exits) and take the tokens back (a process forked later launches its own)."""
    global _tokens
    if os.getpid() != _starter or _tokens is None:
        return
    for launched in _early:
        if launched is not None:
            launched.control.close()
    os.close(_tokens)
    _tokens = None


def _end_started() -> None:
    """At the starting process's exit: every server it started and still holds is ended and reaped (a claimed
    one was stopped by its claimer, which cannot reap it). While the tokens are still here (no pool was started:
    one process graded, or a mistake in the command stopped it first), the servers whose tokens are left were
    never claimed and started no jail: they are ended at once, not given time to end their jails."""
    if os.getpid() != _starter:
        return
    if _tokens is not None:
        try:
            unclaimed = set(os.read(_tokens, len(_early)))
        except OSError:  # BlockingIOError: every server is claimed
            unclaimed = set()
        for number, launched in enumerate(_early):
            if launched is not None and number in unclaimed:
                launched.stop(grace=0)
                _early[number] = None
    let_go()
    for launched in _early:
        if launched is not None:
            launched.stop(grace=2.0)
    _early.clear()
