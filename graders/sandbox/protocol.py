"""The requests the grader sends to the four processes it drives, in one place: their names, which process
answers which, what each is answered with, and the protocol's version.

A request is ``(PROTOCOL, op, payload)`` encoded by ``graders.sandbox.wire``: the fork server answers
``template``, ``shell`` and ``kill``; a template ``spawn`` and ``kill``; a child (the student's program)
``load_cell``, ``load_module``, ``call``, ``bench`` and ``count``; a feedback shell ``run``. ``read_request``
refuses, with ``WireError``, a request of another version, an op the process does not answer, or one that
is not shaped as a request, so no process acts on a message meant for another.

Replies are typed too (``Reply``; written with ``encode_reply``): a process that started says ``Ready`` (its
``hello``, with this protocol's version), one that forked ``Started``, a kill ``Killed``, a child ``Answered``
(``ok``: the op's ``RESULTS`` type), ``Raised`` (an error, with its ``ErrorCode``) or ``Refused`` (an output that
is not plain data), a shell ``CellRun``; a request not answered gets ``Failed``. ``REPLIES`` says which an op may
get, and
``read_reply`` is the one reader of them: a reply that is not one of its op's types, field by field (one
missing, one too many, one of another type, a result not its op's), raises ``BadReply``, a hello of another
version ``OtherProtocol``; the trusted side turns both into its "the process misbehaved" failure, never a mark.
A child, whose socket carries no frames until it has said so, says hello in plain bytes: ``HELLO``.

All four answer in one loop, ``serve_requests``; the fork server and the template dispatch each op to its
handler with ``dispatch``.
"""
from __future__ import annotations

import enum
import functools
import os
import socket
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Union, get_args, get_origin, get_type_hints, is_typeddict

from graders.sandbox.wire import Inbox, Message, WireError, decode, encode, recv_frame_with_fds, send_frame

PROTOCOL = 2  # raised when a request's or reply's shape or meaning changes: the other side refuses another version
HELLO = b"%d:vecgrade" % PROTOCOL  # a child's first bytes on its socket (version first: a stale one differs at once)


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
    """A process is up (its ``hello``): the seconds its warm-up took, and the protocol it speaks."""

    ready: float
    protocol: int


class Started(TypedDict):
    """A template, shell or child was forked: its pid, the handle to kill it by."""

    pid: int


class Killed(TypedDict):
    killed: bool


class Failed(TypedDict):
    """A request the process did not answer: unknown to it, or (a shell) it failed; the message says which."""

    error: str


class ErrorCode(enum.StrEnum):
    """What kind of error a child's ``Raised`` reply carries: the grader decides on this code, never on the text
    (which is the student's to read)."""

    RAISED = "raised"            # the student's code raised (the text: its exception, first line)
    NOT_DEFINED = "not_defined"  # no function of the requested name is defined (or it is not callable)
    UNREADABLE = "unreadable"    # no code: a ``Failed`` reply, a request the child could not read (graders.checks)


class Answered(TypedDict):
    """A child's reply when the op ran: ``ok``, the op's result (its ``RESULTS`` type)."""

    ok: Any


class Raised(TypedDict):
    """A child's reply when a request raised: the text to show (``error``) and what kind of error it was
    (``code``, an ``ErrorCode``)."""

    error: str
    code: ErrorCode


class Refused(TypedDict):
    """A child's reply when an output was not plain data: why it was refused."""

    refused: str


Answer = Union[Answered, Raised, Refused]


class Loaded(TypedDict):
    """``load_cell``'s and ``load_module``'s result: what the cell raised (None: it ran)."""

    error: str | None


class Called(TypedDict):
    """``call``'s result: the function's output."""

    out: Any


class Benched(TypedDict):
    """``bench``'s result: the outputs of the calls it was asked to keep."""

    outs: list


class Counted(TypedDict):
    """``count``'s result: ATen ops by name, cell lines run, threads started, whether it stopped at the cap, the
    output."""

    ops: dict[str, int]
    lines: int
    threads: int
    stopped: bool
    out: Any


class CellRun(TypedDict):
    """A shell's reply to ``run``: the cell's outputs, display updates, execution count, and whether the
    outputs were cut at the limit."""

    outputs: list
    updates: list
    count: int | None
    cut: bool


Reply = Union[Ready, Started, Killed, Failed, Answered, Raised, Refused, CellRun]
_CHILD: tuple[type, ...] = (Answered, Raised, Refused, Failed)  # Failed: a frame ``serve_requests`` could not read
REPLIES: Mapping[Op, tuple[type, ...]] = {  # what a request of each op may be answered with
    Op.TEMPLATE: (Started, Failed), Op.SHELL: (Started, Failed), Op.KILL: (Killed, Failed), Op.SPAWN: (Started, Failed),
    Op.LOAD_CELL: _CHILD, Op.LOAD_MODULE: _CHILD, Op.CALL: _CHILD, Op.BENCH: _CHILD, Op.COUNT: _CHILD,
    Op.RUN: (CellRun, Failed)}
RESULTS: Mapping[Op, type] = {Op.LOAD_CELL: Loaded, Op.LOAD_MODULE: Loaded, Op.CALL: Called, Op.BENCH: Benched,
                              Op.COUNT: Counted}  # an ``Answered`` reply's ``ok``, by op


_NAMES = frozenset(name for kind in (*get_args(Reply), *RESULTS.values()) for name in kind.__annotations__)


class BadReply(WireError):
    """A reply that is not one its request is declared to get (``REPLIES``): the process misbehaved."""


class OtherProtocol(BadReply):
    """A hello of another protocol version: the process runs another installation of the kit."""


def hello(seconds: float) -> Ready:
    """What a process says once it is up, ``seconds`` after it began warming up."""
    return {"ready": float(seconds), "protocol": PROTOCOL}


def encode_reply(message: Reply, regions=()) -> bytes:
    """A reply, encoded (``regions`` as for ``wire.encode``)."""
    return encode(message, regions)


def read_reply(data: Message, answering: Op | str | None, regions=()) -> Reply:
    """The reply in ``data`` to a request of ``answering`` (None: a process's hello; a name that is no ``Op``
    may only be refused, ``Failed``), checked against the types it is declared to get, field by field;
    ``BadReply`` (a ``WireError``) when it is not one of them or cannot be decoded, ``OtherProtocol`` for a
    hello of another version. ``regions`` as for ``wire.decode``."""
    message = decode(data, regions)
    if answering is None:
        version = message.get("protocol") if type(message) is dict else None
        if version != PROTOCOL:
            shown = version if type(version) is int else None  # a number, never what else it sent
            raise OtherProtocol(f"a process of protocol {shown} said hello; this grader speaks {PROTOCOL}: two "
                                "installations of vecgrade are mixed")
        kinds: tuple[type, ...] = (Ready,)
    else:
        kinds = REPLIES.get(answering, (Failed,))  # type: ignore[call-overload]
    for kind in kinds:
        if _fits(message, kind) and (kind is not Answered or _fits(message["ok"], RESULTS[Op(str(answering))])):
            return message
    raise BadReply(f"a reply to {answering or 'hello'!s} that is not one of its types: {_shape(message)}"[:160])


def _shape(message) -> str:
    """What a bad reply was, briefly, for the failure's message: the declared field names it has and how many
    others, or its type; never what a student's process chose to write (values, other names)."""
    if type(message) is not dict:
        return f"a {type(message).__name__}"
    known = sorted(name for name in _NAMES if name in message)
    other = len(message) - len(known)
    return f"fields {known}" + (f" and {other} other(s)" if other else "")


@functools.cache
def _fields(kind: type) -> dict[str, Any]:
    return get_type_hints(kind)


def _fits(value, kind) -> bool:
    """Whether ``value`` is of ``kind``: a TypedDict (exactly its keys, each of its type), a union, Any, None,
    ``list``/``dict`` (parametrised or not), a string enum (one of its values), or a scalar (a bool is no int; an
    int is a float)."""
    if kind is Any:
        return True
    if kind is None or kind is type(None):
        return value is None
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        return any(_fits(value, k) for k in get_args(kind))
    if is_typeddict(kind):
        fields = _fields(kind)
        return type(value) is dict and set(value) == set(fields) and all(
            _fits(value[name], t) for name, t in fields.items())
    if origin is list or kind is list:
        args = get_args(kind)
        return type(value) is list and all(_fits(v, args[0]) for v in value) if args else type(value) is list
    if origin is dict or kind is dict:
        args = get_args(kind)
        return type(value) is dict and (not args or all(
            _fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items()))
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return type(value) is str and value in kind._value2member_map_  # an enum travels as its value
    if kind is float:
        return type(value) in (int, float)
    return type(value) is kind


Respond = Callable[[Message, list[int]], bytes]
Handler = Callable[[dict, list[int]], "Reply | None"]


def serve_requests(sock: socket.socket, respond: Respond, between: Callable[[], None] | None = None) -> None:
    """The one request loop: read a request and the fds sent with it, send ``respond``'s reply, until the
    grader closes ``sock``. Requests are read into one buffer kept between them (``wire.Inbox``: memory already
    touched), except a timed one, which arrives as a sealed memfd mapped in place (``graders.sandbox.sealed``); a
    frame that cannot be read so is answered with an error. ``respond`` keeps no reference to the request once it
    returns, so a child's inputs are released before its reply goes out (none of their cost falls into the next
    timed window); ``between``: called before each wait for a request (the fork server reaps its jails there)."""
    inbox = Inbox()
    while True:
        if between is not None:
            between()
        try:
            data, fds = recv_frame_with_fds(sock, inbox=inbox)
        except (EOFError, OSError):
            return
        except WireError as exc:  # a frame that could not be read whole (a memfd that is not a sealed message)
            send_frame(sock, encode_reply({"error": str(exc)}))
            continue
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
