"""The four processes' requests: each reads only its own ops, of this protocol's version, shaped as a request."""
import pytest
import torch

from graders.sandbox.protocol import PROTOCOL, Op, Role, dispatch, read_request, request, serve_requests
from graders.sandbox.wire import WireError, encode


@pytest.mark.parametrize("role", list(Role))
def test_each_process_reads_its_own_requests_and_refuses_the_others(role):
    for op in Op:
        data = request(op, x=torch.ones(2), n=1)
        if op in role.value:
            asked = read_request(data, role)
            assert asked.op is op and asked.payload["n"] == 1 and torch.equal(asked.payload["x"], torch.ones(2))
        else:
            with pytest.raises(WireError, match="unknown request"):
                read_request(data, role)


@pytest.mark.parametrize("data", [
    encode((PROTOCOL + 1, "call", {})),  # another version
    encode(("call", {})),  # the old shape, without a version
    encode((PROTOCOL, "call", ["not", "a", "dict"])),
    encode((PROTOCOL, 7, {})),
    encode([PROTOCOL, "call", {}]),  # a list, not the tuple a request is
    request("stage"),  # a name no process answers
    b"\x00\x01",
])
def test_anything_else_is_refused(data):
    with pytest.raises(WireError):
        read_request(data, Role.CHILD)


def _exchange(respond, messages, between=None):
    """Each (data, fds) sent to a ``serve_requests`` loop in a thread, and the replies, decoded."""
    import socket
    import threading
    import time

    from graders.sandbox.wire import decode, recv_frame, send_frame
    mine, theirs = socket.socketpair()
    loop = threading.Thread(target=serve_requests, args=(theirs, respond, between))
    loop.start()
    replies = []
    for data, fds in messages:
        send_frame(mine, data, fds, timeout=5)
        replies.append(decode(recv_frame(mine, time.monotonic() + 5, 1 << 20)))
    mine.close()
    loop.join(5)
    assert not loop.is_alive()  # the loop ends when the grader closes its socket
    theirs.close()
    return replies


def test_one_loop_dispatches_each_op_to_its_handler_and_refuses_the_rest():
    import os
    seen, waits = [], []
    handlers = {Op.KILL: lambda payload, fds: {"killed": seen.append(payload["pid"]) is None},
                Op.SPAWN: lambda payload, fds: None}  # declines: as a spawn without its socket
    read, write = os.pipe()
    replies = _exchange(dispatch(Role.TEMPLATE, handlers),
                        [(request(Op.KILL, pid=7), []), (request(Op.SPAWN), [write]), (request(Op.CALL), []),
                         (b"junk", [])], between=lambda: waits.append(1))
    assert replies == [{"killed": True}, {"error": "unknown request"}, {"error": "unknown request"},
                       {"error": "unknown request"}]
    assert seen == [7] and len(waits) == 5  # before each of the four requests, and before the close
    os.close(write)
    assert os.read(read, 1) == b""  # the fd sent with the declined request was closed: the pipe has no writer
    os.close(read)
