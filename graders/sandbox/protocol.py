"""The requests the grader sends to the four processes it drives, in one place: their names, which process
answers which, and the protocol's version.

A request is ``(PROTOCOL, op, payload)`` encoded by ``graders.sandbox.wire``: the fork server answers
``template``, ``shell`` and ``kill``; a template ``spawn`` and ``kill``; a child (the student's program)
``load_cell``, ``load_module``, ``call``, ``bench`` and ``count``; a feedback shell ``run``. ``read_request``
refuses, with ``WireError``, a request of another version, an op the process does not answer, or one that
is not shaped as a request, so no process acts on a message meant for another.

Replies are typed too (``Reply``; written with ``encode_reply``): a process that started says ``Ready``,
one that forked ``Started``, a kill ``Killed``, a child ``Answer`` (``ok``, or the student's ``error`` or
an output ``refused``), a shell ``CellRun``; a request not answered gets ``Failed``.

All four answer in one loop, ``serve_requests``; the fork server and the template dispatch each op to its
handler with ``dispatch``.
"""
from __future__ import annotations

import enum
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Union

from graders.sandbox.wire import Inbox, Message, WireError, decode, encode, recv_frame_with_fds, send_frame

PROTOCOL = 1  # raised when a request's shape or meaning changes: a process of another version refuses it


class Op(enum.StrEnum):
    """Every request's name."""

    TEMPLATE = "template"
    SHELL = "shell"
    KILL = "kill"
    SPAWN = "spawn"
    LOAD_CELL = "load_cell"
    LOAD_MODULE = "load_module"
    CALL = "call"
    BENCH = "bench"
    COUNT = "count"
    RUN = "run"


class Role(enum.Enum):
    """A process the grader drives, and the requests it answers."""

    FORK_SERVER = frozenset({Op.TEMPLATE, Op.SHELL, Op.KILL})
    TEMPLATE = frozenset({Op.SPAWN, Op.KILL})
    CHILD = frozenset({Op.LOAD_CELL, Op.LOAD_MODULE, Op.CALL, Op.BENCH, Op.COUNT})
    SHELL = frozenset({Op.RUN})


@dataclass(frozen=True)
class Request:
    """One request as the process that answers it reads it."""

    op: Op
    payload: dict


def request(op: str, regions=(), **payload) -> bytes:
    """The encoded request (``regions``: shared memory its tensors may live in, as for ``wire.encode``).
    ``op``: an ``Op``; any other name is sent as it is, for the process to refuse."""
    return encode((PROTOCOL, str(op), payload), regions)


def read_request(data: Message, role: Role, regions=()) -> Request:
    """The request in ``data`` if ``role`` answers it; ``WireError`` otherwise (see the module's docstring)."""
    message = decode(data, regions)
    if not isinstance(message, tuple) or len(message) != 3:
        raise WireError("not a request")
    version, op, payload = message
    if version != PROTOCOL:
        raise WireError(f"a request of protocol {version!r}; this process speaks {PROTOCOL}"[:120])
    if not isinstance(op, str) or op not in role.value or not isinstance(payload, dict):
        raise WireError(f"unknown request {op!r}"[:120])
    return Request(Op(op), payload)


class Ready(TypedDict):
    """A process is up: the seconds its warm-up took (a server or template), or True (a shell)."""

    ready: float


class Started(TypedDict):
    """A template, shell or child was forked: its pid, the handle to kill it by."""

    pid: int


class Killed(TypedDict):
    killed: bool


class Failed(TypedDict):
    """A request the process did not answer: unknown to it, or (a shell) it failed; the message says which."""

    error: str


class Answer(TypedDict, total=False):
    """A child's reply: ``ok`` (the op's result), or ``error`` (what the student's code raised), or ``refused``
    (an output that is not plain data)."""

    ok: Any
    error: str
    refused: str


class CellRun(TypedDict):
    """A shell's reply to ``run``: the cell's outputs, display updates, execution count, and whether the
    outputs were cut at the limit."""

    outputs: list
    updates: list
    count: int | None
    cut: bool


Reply = Union[Ready, Started, Killed, Failed, Answer, CellRun]


def encode_reply(message: Reply, regions=()) -> bytes:
    """A reply, encoded (``regions`` as for ``wire.encode``)."""
    return encode(message, regions)


Respond = Callable[[Message, list[int]], bytes]
Handler = Callable[[dict, list[int]], "Reply | None"]


def serve_requests(sock: socket.socket, respond: Respond, between: Callable[[], None] | None = None) -> None:
    """The one request loop: read a request and the fds sent with it, send ``respond``'s reply, until the
    grader closes ``sock``. Requests are read into one buffer kept between them (``wire.Inbox``: a timed request's
    inputs land in memory already touched); ``respond`` keeps no reference to the request once it returns, so
    a child's inputs are released before its reply goes out (none of their cost falls into the next timed window);
    ``between``: called before each wait for a request (the fork server reaps its jails there)."""
    inbox = Inbox()
    while True:
        if between is not None:
            between()
        try:
            data, fds = recv_frame_with_fds(sock, inbox=inbox)
        except (EOFError, OSError):
            return
        reply = respond(data, fds)
        del data, fds  # the request and what views it are released now, before the reply goes out
        send_frame(sock, reply)


def dispatch(role: Role, handlers: Mapping[Op, Handler]) -> Respond:
    """A ``respond`` answering each of ``role``'s ops with its handler (``handler(payload, fds)``). A request
    that cannot be read, an op without a handler, or one its handler declines (None) gets ``Failed``, and
    the fds sent with it are closed; a handler that answers owns the fds."""
    def respond(data: Message, fds: list[int]) -> bytes:
        try:
            asked = read_request(data, role)
        except WireError:
            asked = None
        handler = handlers.get(asked.op) if asked is not None else None
        reply = handler(asked.payload, fds) if asked is not None and handler is not None else None
        if reply is None:
            for fd in fds:
                os.close(fd)
            reply = {"error": "unknown request"}
        return encode_reply(reply)

    return respond
