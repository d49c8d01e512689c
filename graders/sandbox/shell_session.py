"""The grader's handle on a notebook's feedback shell (graders.sandbox.shell): confined, bounded, checked.

As root the shell is forked from the warm server (``ForkServer.fork_shell``) into a jail of its own;
otherwise it starts as a program through ``Sandbox.wrap`` (or, with the sandbox off on purpose, with
rlimits only). Each cell is one request, read against a deadline: the cell's budget (the shell
interrupts itself then) plus ``GRACE``; a shell that has not answered by then is killed with its
whole jail. What it sends back is a student's data: it is read within ``MAX_REPLY_BYTES`` and only
well-formed nbformat outputs are kept.
"""
from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import cast

import nbformat
from nbformat import NotebookNode

from graders.model.errors import VecgradeError
from graders.sandbox.protocol import CellRun, Op, OtherProtocol, read_reply, request
from graders.sandbox.session import ForkServer, WorkerFailure, end_program
from graders.sandbox.spec import Limits, Where, environment
from graders.sandbox.wire import WireError, recv_frame, send_frame

GRACE = 5.0  # seconds a shell has, past a cell's budget, to give up the cell after its own interrupt
MAX_REPLY_BYTES = 64 * 1024 * 1024
MIME_TEXT = (str, list)


class ShellStopped(VecgradeError):
    """The shell is gone (it died, hung past its grace, or sent something unreadable): no more cells run."""


@dataclass
class Ran:
    """One cell's run: its outputs (checked), display updates for earlier cells, its execution count, whether
    the shell cut its outputs, and the wall-clock seconds it took."""

    outputs: list[NotebookNode]
    count: int | None
    seconds: float
    cut: bool = False
    updates: list[dict] = field(default_factory=list)


def _is_json(value, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) is list:
        return all(_is_json(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _is_json(v, depth + 1) for k, v in value.items())
    return False


def _bundle(data) -> dict | None:
    """A mime bundle: text formats as strings, JSON formats as plain JSON."""
    if type(data) is not dict:
        return None
    kept = {}
    for mime, value in data.items():
        if type(mime) is not str or not _is_json(value):
            return None
        if not mime.endswith("json") and not (type(value) is str or
                                              (type(value) is list and all(type(v) is str for v in value))):
            return None
        kept[mime] = value
    return kept


def checked_output(raw) -> tuple[NotebookNode, str | None] | None:
    """An nbformat output made only of what a well-formed one holds (and its display id), else None."""
    if type(raw) is not dict:
        return None
    kind = raw.get("output_type")
    display_id = (raw.get("transient") or {}).get("display_id") if type(raw.get("transient")) is dict else None
    if kind == "stream" and raw.get("name") in ("stdout", "stderr") and type(raw.get("text")) is str:
        return nbformat.v4.new_output("stream", name=raw["name"], text=raw["text"]), None
    if kind == "error" and type(raw.get("ename")) is str and type(raw.get("evalue")) is str \
            and type(raw.get("traceback")) is list and all(type(line) is str for line in raw["traceback"]):
        return nbformat.v4.new_output("error", ename=raw["ename"], evalue=raw["evalue"],
                                      traceback=raw["traceback"]), None
    if kind in ("display_data", "execute_result"):
        data, metadata = _bundle(raw.get("data")), raw.get("metadata", {})
        if data is None or type(metadata) is not dict or not _is_json(metadata):
            return None
        if kind == "display_data":
            return nbformat.v4.new_output(kind, data=data, metadata=metadata), \
                str(display_id) if type(display_id) is str else None
        count = raw.get("execution_count")
        return nbformat.v4.new_output(kind, data=data, metadata=metadata,
                                      execution_count=count if type(count) is int else None), None
    return None


class ShellSession:
    """One notebook's shell, working in ``work`` (a private copy of the submission's folder) inside the
    jail's ``scratch`` folder, as the jail's own user; ``env``: variables it gets (NBGRADER_EXECUTION)."""

    def __init__(self, sandbox, scratch: str, work: str, env: dict[str, str], limits: Limits):
        self.sandbox, self.scratch, self.work, self.env, self.limits = sandbox, scratch, work, env, limits
        self.sock: socket.socket | None = None
        self.forked: tuple[ForkServer, int] | None = None
        self.proc: subprocess.Popen | None = None
        self.display_ids: dict[str, list[NotebookNode]] = {}
        self.started = False  # it said it was ready once: a later failure is a stop, not a failed start

    @property
    def alive(self) -> bool:
        return self.sock is not None

    # -- start and stop -------------------------------------------------------------------------------
    def start(self) -> None:
        confined = self.sandbox.check()  # raises SandboxUnavailableError: no student code runs unconfined by accident
        uid = self.sandbox.fresh_uid()
        if confined and os.geteuid() == 0:
            for dirpath, _, filenames in os.walk(self.scratch):  # the jail's own user owns its folder
                os.chown(dirpath, uid, uid)
                for name in filenames:
                    os.chown(os.path.join(dirpath, name), uid, uid)
        mine, theirs = socket.socketpair()
        try:
            if confined and os.geteuid() == 0:
                jail = self.sandbox.jail_spec(self.scratch, cwd=self.work, uid=uid)
                jail = dataclasses.replace(jail, env=(*jail.env, *(f"{k}={v}" for k, v in self.env.items())))
                try:
                    server = ForkServer.shared()
                    self.forked = (server, server.fork_shell(theirs, jail))
                except WorkerFailure:  # the server could not provide one: start a new program instead
                    self.forked = None
            if self.forked is None:
                self.proc = self._program(theirs, confined, uid)
        finally:
            theirs.close()
        self.sock = mine
        try:
            read_reply(recv_frame(mine, time.monotonic() + self.limits.start_timeout, 1024), None)  # its hello
        except (TimeoutError, EOFError, OSError, WireError) as exc:
            self.close()
            why = f": {exc}" if isinstance(exc, OtherProtocol) else ""
            raise ShellStopped(f"the notebook's kernel could not start{why}") from None
        self.started = True

    def _program(self, theirs: socket.socket, confined: bool, uid: int) -> subprocess.Popen:
        command = [sys.executable, "-m", "graders.sandbox.shell", str(theirs.fileno())]
        if confined:
            command = self.sandbox.wrap(command, scratch=self.scratch, cwd=self.work, uid=uid)
        env = {**environment(Where.OUTSIDE, self.scratch), **self.env}
        return subprocess.Popen(command, pass_fds=[theirs.fileno()], cwd=self.work, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=None if confined else self.limits.apply)

    def close(self) -> None:
        """Stop the shell and everything in its jail."""
        if self.forked is not None:
            server, pid = self.forked
            server.kill(pid)
        end_program(self.proc, self.sock)
        self.sock, self.forked, self.proc = None, None, None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- cells ----------------------------------------------------------------------------------------
    def run(self, source: str, budget: float, limit: int) -> Ran:
        """Run one cell within ``budget`` seconds (then the shell interrupts it; ``GRACE`` later it is killed);
        ``limit``: characters of output the shell keeps for the cell."""
        if self.sock is None:
            self.start()
        sock = self.sock
        assert sock is not None, "start sets the socket or raises"
        started = time.monotonic()
        try:
            send_frame(sock, request(Op.RUN, source=source, budget=budget, limit=limit), timeout=10)
            answer = read_reply(recv_frame(sock, started + budget + GRACE, MAX_REPLY_BYTES), Op.RUN)
        except (TimeoutError, EOFError, OSError, WireError):  # WireError: unreadable, or not a reply to run
            self.close()
            raise ShellStopped("the notebook's kernel stopped") from None
        seconds = time.monotonic() - started
        if "outputs" not in answer:  # ``Failed``: the shell could not run the cell
            self.close()
            raise ShellStopped("the notebook's kernel stopped")
        reply = cast(CellRun, answer)  # read_reply checked it: a run's reply is a CellRun or Failed
        outputs = []
        for raw in reply["outputs"]:
            checked = checked_output(raw)
            if checked is None:
                continue
            output, display_id = checked
            outputs.append(output)
            if display_id is not None:
                self.display_ids.setdefault(display_id, []).append(output)
        for update in reply.get("updates") or []:
            data = _bundle(update.get("data")) if isinstance(update, dict) else None
            if data is not None:
                for output in self.display_ids.get(str(update.get("display_id")), []):
                    output.data = nbformat.from_dict(data)
        count = reply.get("count")
        return Ran(outputs, count if type(count) is int else None, seconds, reply.get("cut") is True)
