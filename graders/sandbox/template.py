"""A student's (or the reference's) warm template: the process that forks a fresh child per exercise.

Forked from the fork server, in a jail of its own for student code (as root), or started as a new
program (through ``Sandbox.wrap`` when confined) when the server cannot provide one. The template
also kills its children: a child cannot refuse it.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys

from graders.sandbox.clock import listen_for_credentials
from graders.sandbox.processes import OtherVersion, WorkerFailure, end_program, read_reply
from graders.sandbox.protocol import Op, request
from graders.sandbox.scratch import Scratch
from graders.sandbox.server_handle import ForkServer
from graders.sandbox.spec import Limits, Where, environment
from graders.sandbox.wire import send_frame


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
            read_reply(parent, self.limits.start_timeout, None)  # its hello, in this protocol's version
        except OtherVersion:
            self.close()
            raise  # says which versions
        except (TimeoutError, EOFError, OSError, WorkerFailure):
            self.close()
            raise WorkerFailure("the Python process that runs it could not start") from None

    def _ask(self, op: Op, fds=(), **payload) -> dict:
        if not self.alive:
            self.start()
        control = self.control
        assert control is not None, "a live template has its control socket (start and close set both)"
        try:
            send_frame(control, request(op, **payload), fds, timeout=10)
            return read_reply(control, 10, op)
        except (TimeoutError, EOFError, OSError, WorkerFailure):
            self.close()  # a template that does not answer goes, with every child it holds
            raise WorkerFailure("the Python process that runs it died") from None

    def spawn(self) -> tuple[socket.socket, int]:
        """A fresh child: (socket to it, its pid as the template sees it)."""
        mine, theirs = socket.socketpair()
        listen_for_credentials(mine)  # the child's hello then tells its pid in this namespace
        try:
            reply = self._ask(Op.SPAWN, fds=[theirs.fileno()])
        finally:
            theirs.close()
        if "pid" not in reply:  # ``Failed``: it did not fork
            mine.close()
            raise WorkerFailure("the Python process that runs it could not start")
        return mine, int(reply["pid"])

    def kill(self, pid: int) -> None:
        if self.alive:
            try:
                self._ask(Op.KILL, pid=pid)
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
