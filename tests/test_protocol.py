"""The four processes' requests: each reads only its own ops, of this protocol's version, shaped as a request."""
import pytest
import torch

from graders.sandbox.protocol import PROTOCOL, Op, Role, read_request, request
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
