"""Replies read against their declared types (graders.sandbox.protocol.read_reply), and the hello's version.

Each reply the trusted side reads is checked field by field against the types its request is declared to get: a
reply forged by a student's process (a field missing, one too many, one of another type, another op's reply) is a
``BadReply``, which the trusted side turns into its "the process misbehaved" failure, never a mark. A hello of
another protocol version is refused at once, naming both versions. Each with the good reply beside it.
"""
import socket
import threading

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.checks.vocabulary import disruption
from graders.model.verdict import Reason
from graders.sandbox.clock import recv_hello
from graders.sandbox.processes import OtherVersion, WorkerFailure, read_reply
from graders.sandbox.protocol import (
    HELLO,
    PROTOCOL,
    REPLIES,
    BadReply,
    Op,
    OtherProtocol,
    encode_reply,
    hello,
)
from graders.sandbox.protocol import read_reply as check
from graders.sandbox.session import WorkerSession
from graders.sandbox.wire import encode, send_frame

GOOD: dict[Op, list[dict]] = {  # one well-formed reply of each kind each op may get
    Op.TEMPLATE: [{"pid": 12}, {"error": "unknown request"}],
    Op.SHELL: [{"pid": 12}],
    Op.KILL: [{"killed": True}, {"error": "unknown request"}],
    Op.SPAWN: [{"pid": 3}],
    Op.LOAD_CELL: [{"ok": {"error": None}}, {"ok": {"error": "cell: NameError: x"}}, {"error": "WireError: ..."}],
    Op.LOAD_MODULE: [{"ok": {"error": None}}],
    Op.CALL: [{"ok": {"out": torch.ones(2)}}, {"ok": {"out": (1, "s", None)}}, {"refused": "returned a `Quiet`"}],
    Op.BENCH: [{"ok": {"outs": [torch.ones(2), torch.zeros(1)]}}, {"error": "LookupError: no function `f`"}],
    Op.COUNT: [{"ok": {"ops": {"mul": 2}, "lines": 3, "threads": 0, "stopped": False, "out": torch.ones(1)}},
               {"ok": {"ops": {}, "lines": 9, "threads": 0, "stopped": True, "out": None}}],
    Op.RUN: [{"outputs": [], "updates": [], "count": 1, "cut": False}, {"outputs": [{}], "updates": [], "count": None,
                                                                         "cut": True}, {"error": "OSError: x"}],
}
BAD = [  # (op, reply, what is wrong with it)
    (Op.SPAWN, {}, "a field missing"),
    (Op.SPAWN, {"pid": "12"}, "a field of another type"),
    (Op.SPAWN, {"pid": True}, "a bool where an int is declared"),
    (Op.SPAWN, {"pid": 3, "extra": 1}, "a field too many"),
    (Op.SPAWN, {"killed": True}, "another op's reply"),
    (Op.KILL, {"killed": 1}, "an int where a bool is declared"),
    (Op.CALL, {"ok": {"outs": []}}, "another op's result"),
    (Op.CALL, {"ok": 5}, "a result that is no dict"),
    (Op.CALL, {"ok": {"out": 1}, "error": "x"}, "two answers at once"),
    (Op.CALL, {"error": None}, "an error that is not text"),
    (Op.CALL, {"pid": 3}, "a reply of the fork server's"),
    (Op.LOAD_CELL, {"ok": {}}, "a load without its error field"),
    (Op.BENCH, {"ok": {"outs": torch.ones(2)}}, "outputs that are no list"),
    (Op.COUNT, {"ok": {"ops": {"mul": 2.5}, "lines": 3, "threads": 0, "stopped": False, "out": None}}, "a float count"),
    (Op.COUNT, {"ok": {"ops": {}, "lines": 3, "threads": 0, "out": None}}, "stopped missing"),
    (Op.RUN, {"outputs": {}, "updates": [], "count": 1, "cut": False}, "outputs that are no list"),
    (Op.RUN, {"outputs": [], "updates": [], "count": 1.0, "cut": False}, "a float execution count"),
    (Op.RUN, {"outputs": [], "updates": []}, "fields missing"),
    (Op.RUN, ["outputs"], "a list, not a dict"),
    ("stage", {"ok": {"out": 1}}, "an answer to an op nobody answers"),
]


@pytest.mark.parametrize(("op", "reply"), [(op, r) for op, replies in GOOD.items() for r in replies])
def test_each_well_formed_reply_is_read(op, reply):
    got = check(encode_reply(reply), op)
    assert got.keys() == reply.keys()


def test_every_op_declares_its_replies():
    assert set(REPLIES) == set(Op) == set(GOOD)
    assert check(encode_reply({"error": "unknown request 'stage'"}), "stage") == {"error": "unknown request 'stage'"}


@pytest.mark.parametrize(("op", "reply", "why"), BAD, ids=[b[2] for b in BAD])
def test_a_reply_not_of_its_types_is_refused(op, reply, why):
    with pytest.raises(BadReply, match="not one of its types"):
        check(encode(reply), op)


LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=4))
KEYS = st.sampled_from(["ok", "error", "refused", "pid", "killed", "ready", "protocol", "out", "outs", "ops", "lines",
                        "threads", "stopped", "outputs", "updates", "count", "cut"])
VALUES = st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(KEYS, inner, max_size=5)), max_leaves=20)


@settings(max_examples=300, deadline=1000, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([*Op, None]), VALUES)
def test_whatever_a_process_sends_is_a_declared_reply_or_a_bad_one(op, value):
    """The contract: a reply of its types, or BadReply, never another exception (a KeyError, a TypeError)."""
    try:
        got = check(encode(value), op)
    except BadReply:
        return
    assert type(got) is dict and (op is not None or got["protocol"] == PROTOCOL)


def test_a_hello_of_this_version_is_read_and_another_is_refused():
    assert check(encode_reply(hello(1.5)), None) == {"ready": 1.5, "protocol": PROTOCOL}
    for stale in ({"ready": 0.0}, {"ready": 0.0, "protocol": PROTOCOL + 1}, {"ready": True, "protocol": "2"}):
        with pytest.raises(OtherProtocol, match=f"this grader speaks {PROTOCOL}"):
            check(encode(stale), None)
    with pytest.raises(BadReply):  # this version, but not a hello's shape
        check(encode({"ready": "now", "protocol": PROTOCOL}), None)


def _reading(payload: bytes, answering):
    """What the trusted side's reader makes of ``payload`` sent on a socket: the reply, or the failure."""
    mine, theirs = socket.socketpair()
    with mine, theirs:
        send_frame(theirs, payload)
        try:
            return read_reply(mine, 5, answering)
        except WorkerFailure as exc:
            return exc


def test_the_trusted_side_turns_a_bad_reply_into_a_failure_and_another_version_into_its_own():
    assert _reading(encode_reply({"pid": 4}), Op.SPAWN) == {"pid": 4}  # control
    forged = _reading(encode({"pid": "4"}), Op.SPAWN)
    assert type(forged) is WorkerFailure and "cannot read" in str(forged)
    assert disruption(forged).reason is Reason.KILLED  # the engine's verdict for a process that misbehaved
    assert _reading(encode_reply(hello(0.1)), None) == {"ready": 0.1, "protocol": PROTOCOL}  # control
    stale = _reading(encode({"ready": 0.1}), None)
    assert isinstance(stale, OtherVersion) and f"speaks {PROTOCOL}" in str(stale) and "None" in str(stale)


class _Template:
    """What a ``WorkerSession`` asks of its template when it ends a child."""

    def __init__(self):
        self.killed: list[int] = []

    def kill(self, pid: int) -> None:
        self.killed.append(pid)


@pytest.mark.parametrize(("reply", "fails"), [
    ({"ok": {"out": 3}}, False),  # control
    ({"ok": {"out": 3}, "verdict": "passed"}, True),
    ({"ok": {"verdict": "passed"}}, True),
    ({"passed": True}, True),
])
def test_a_childs_forged_reply_ends_the_child_as_a_failure(reply, fails):
    session = WorkerSession([], template=_Template())  # type: ignore[arg-type]
    mine, theirs = socket.socketpair()
    session.sock, session.pid = mine, 99

    def child():
        theirs.recv(1 << 16)
        send_frame(theirs, encode(reply))

    answering = threading.Thread(target=child)
    answering.start()
    try:
        if fails:
            with pytest.raises(WorkerFailure, match="cannot read"):
                session.request(Op.CALL, 5, name="f", args=(), kwargs={})
            assert session.template.killed == [99] and not session.alive
        else:
            assert session.request(Op.CALL, 5, name="f", args=(), kwargs={})[0] == reply
            assert session.alive
    finally:
        answering.join(5)
        theirs.close()
        session.kill()


def test_a_childs_hello_of_another_version_is_refused_at_its_first_differing_byte():
    for said, refused in ((HELLO, False), (b"vecgrade", True), (b"%d:vecgrade" % (PROTOCOL + 1), True)):
        mine, theirs = socket.socketpair()
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        with mine, theirs:
            theirs.sendall(said)  # and then waits: a reader waiting for the rest would time out (TimeoutError)
            if refused:
                with pytest.raises(ConnectionRefusedError, match="not this protocol's"):
                    recv_hello(mine, HELLO, 30)
            else:
                assert recv_hello(mine, HELLO, 30) > 0


def test_a_bad_replys_failure_never_repeats_what_the_process_wrote():
    hostile = "\x1b[2J" + "x" * 500
    with pytest.raises(BadReply) as caught:
        check(encode({"pid": hostile, hostile: 1}), Op.SPAWN)
    assert str(caught.value) == "a reply to spawn that is not one of its types: fields ['pid'] and 1 other(s)"
    with pytest.raises(OtherProtocol) as stale:
        check(encode({"ready": 0.0, "protocol": hostile}), None)
    assert hostile not in str(stale.value) and "protocol None" in str(stale.value)


def test_a_template_of_another_version_is_refused_by_name_not_as_a_failed_start():
    from graders.sandbox.template import Template
    for said, failure in ((encode_reply(hello(0.2)), None), (encode({"ready": 0.2}), OtherVersion),
                          (encode({"ready": "x", "protocol": PROTOCOL}), WorkerFailure)):
        with Template() as template:
            mine, theirs = socket.socketpair()
            template.control = mine
            with theirs:
                send_frame(theirs, said)
                if failure is None:
                    template._ready()  # control: this version's hello
                    assert template.control is mine
                else:
                    with pytest.raises(failure) as caught:
                        template._ready()
                    assert (f"this grader speaks {PROTOCOL}" in str(caught.value)) is (failure is OtherVersion)
                    assert template.control is None  # closed: nothing more is asked of it
