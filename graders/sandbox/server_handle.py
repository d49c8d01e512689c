"""The grader's handle on the warm fork server (``graders.sandbox.forkserver``): one per grading process,
started on first use, asked for templates and feedback shells, each in a jail of its own given as a
``JailSpec``, or a trusted template without one."""
from __future__ import annotations

import atexit
import dataclasses
import os
import socket
import subprocess
import threading

from graders.sandbox import launch
from graders.sandbox.processes import OtherVersion, WorkerFailure, read_reply
from graders.sandbox.protocol import Op, request
from graders.sandbox.spec import JailSpec, Limits
from graders.sandbox.wire import send_frame


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
        self.launched: launch.Launched | None = None
        self.control: socket.socket | None = None
        self.lock = threading.Lock()

    @property
    def proc(self) -> subprocess.Popen | None:
        """The server's process, once started."""
        return self.launched.proc if self.launched is not None else None

    def _start(self) -> None:
        """One started early for this process (graders.sandbox.launch.claim), else a new one; ready once it says so."""
        self.launched = launch.claim() or launch.launch()
        self.control = self.launched.control
        read_reply(self.control, self.start_timeout, None)  # its hello, in this protocol's version

    def start(self) -> None:
        """Start the server now rather than on the first request (a worker preparing itself)."""
        with self.lock:
            if self.control is None:
                try:
                    self._start()
                except (TimeoutError, EOFError, OSError, WorkerFailure):
                    self._stop()  # the first request tries again

    def _ask(self, op: Op, fds=(), **payload) -> dict:
        with self.lock:
            try:
                if self.control is None:
                    self._start()
                assert self.control is not None, "_start sets the control socket or raises"
                send_frame(self.control, request(op, **payload), fds, timeout=10)
                return read_reply(self.control, 30, op)
            except OtherVersion:
                self._stop()
                raise  # says which versions: a fresh server of the same installation would say it again
            except (TimeoutError, EOFError, OSError, WorkerFailure):
                self._stop()  # the next request starts a fresh server
                raise WorkerFailure("the Python process that runs it could not start") from None

    def fork_template(self, sock: socket.socket, jail: JailSpec | None, cwd: str = "/",
                      limits: Limits = Limits()) -> int:
        """A template serving ``sock``: a student's, in a jail of its own (``jail``), or without a jail
        (None: the course's trusted reference) in ``cwd`` under ``limits``; returns its handle (a pid)."""
        rlimits = {k: v for k, v in dataclasses.asdict(limits).items() if k != "start_timeout"}
        reply = self._ask(Op.TEMPLATE, fds=[sock.fileno()], jail=None if jail is None else jail.to_wire(), cwd=cwd,
                          limits=rlimits)
        if "pid" not in reply:
            raise WorkerFailure("the Python process that runs it could not start")
        return int(reply["pid"])

    def fork_shell(self, sock: socket.socket, jail: JailSpec) -> int:
        """A notebook's feedback shell (graders.sandbox.shell) serving ``sock``, in a jail of its own; its handle."""
        reply = self._ask(Op.SHELL, fds=[sock.fileno()], jail=jail.to_wire())
        if "pid" not in reply:
            raise WorkerFailure("the notebook's kernel could not start")
        return int(reply["pid"])

    def kill(self, pid: int) -> None:
        """Stop a template or shell and its whole jail. With no server running there is nothing to stop (a server
        ends every jail it started when it stops), and none is started for it: a template closed at exit, after this
        process's server was closed, once started a fresh server (torch imported, 1.4 s) only to kill nothing."""
        with self.lock:
            if self.control is None:
                return
        try:
            self._ask(Op.KILL, pid=pid)
        except WorkerFailure:
            pass

    def _stop(self) -> None:
        if self.launched is not None:
            self.launched.stop()  # the server ends its jails and removes their cgroups, then exits
        self.launched, self.control = None, None

    def close(self) -> None:
        with self.lock:
            self._stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
