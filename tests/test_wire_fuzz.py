"""wire.decode faces bytes a student's process wrote: whatever arrives, it returns a value or raises WireError,
never another exception, and never spends more than a bounded time or memory on a short message."""
import json
import struct
import time
import tracemalloc

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graders.sandbox.wire import MAX_CALLS, MAX_DEPTH, Calls, WireError, decode, encode

FUZZ = settings(max_examples=300, deadline=1000, suppress_health_check=[HealthCheck.too_slow])
SAMPLES = [
    encode(("ok", {"outs": [torch.arange(12.).view(3, 4).t(), (1, "s", None), {"k": torch.ones(2, dtype=torch.bool)}]})),
    encode(Calls([((torch.randn(3, 4).t(), i), {"eps": torch.ones(1) * i}) for i in range(4)])),
    encode(Calls([((torch.zeros(2, 3),), {}), ((torch.zeros(3, 2).t(),), {}), ((torch.empty(0),), {})])),
]
KEYS = ["__t", "__view", "__calls", "__stack", "__each", "__tuple", "__dict", "__kind", "dtype", "size", "stride",
        "offset", "extent", "byte_offset", "args", "kwargs"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.sampled_from(["torch.float32", "torch.int64", "torch.bool", "x"]), st.text(max_size=8))
NODES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=30)


def frame(header: bytes, buffers=(), nbuf: int | None = None) -> bytes:
    """A message with this header and these buffers; ``nbuf`` lies about their count."""
    counts = b"".join(struct.pack("<Q", len(b)) for b in buffers)
    return struct.pack("<II", len(header), len(buffers) if nbuf is None else nbuf) + header + counts + b"".join(buffers)


def decodes_or_rejects(data: bytes) -> None:
    """The contract: a value or WireError, nothing else (any other exception fails the test)."""
    try:
        decode(data)
    except WireError:
        pass


@FUZZ
@given(st.binary(max_size=512))
def test_random_bytes(data):
    decodes_or_rejects(data)


@FUZZ
@given(st.sampled_from(SAMPLES), st.data())
def test_truncated_and_corrupted_messages(sample, data):
    cut = data.draw(st.integers(0, len(sample)))
    decodes_or_rejects(sample[:cut])
    flips = data.draw(st.lists(st.tuples(st.integers(0, len(sample) - 1), st.integers(0, 255)), max_size=4))
    bad = bytearray(sample)
    for at, byte in flips:
        bad[at] = byte
    decodes_or_rejects(bytes(bad))


@FUZZ
@given(NODES, st.lists(st.binary(max_size=64), max_size=3))
def test_well_framed_headers_of_any_shape(node, buffers):
    decodes_or_rejects(frame(json.dumps(node).encode(), buffers))


@pytest.mark.parametrize("header", [
    b"[" * 100_000, b'{"__tuple": ' * 5_000, b"1" * 5_000, b'"\xff"',
    b'{"__t": 0, "dtype": "torch.float32", "size": [1], "stride": [1], "offset": "x"}',
    b'{"__t": 0, "dtype": "torch.float32", "size": [1], "stride": [1], "offset": 1e400}',
    b'{"__t": 0, "dtype": "torch.float32", "size": [1], "stride": [1], "offset": 99999999999999999999999}',
    b'{"__t": -1, "dtype": "torch.float32", "size": [1], "stride": [1]}',
    b'{"__t": true, "dtype": "torch.float32", "size": [1], "stride": [1]}',
    b'{"__t": 0, "dtype": ["torch.float32"], "size": [1], "stride": [1]}',
    b'{"__calls": "a", "args": [], "kwargs": []}', b'{"__calls": -1, "args": [], "kwargs": []}',
    b'{"__dict": [[[1], 2]]}', b'{"__view": 0, "dtype": "torch.float32", "size": [1], "stride": [1], "byte_offset": 0}',
])
def test_hand_made_malformed_headers_are_rejected(header):
    with pytest.raises(WireError):
        decode(frame(header, [b"\0" * 4]))


def test_the_depth_bound_rejects_deeper_and_keeps_shallower():
    assert decode(encode([[[[1]]]])) == [[[[1]]]]
    with pytest.raises(WireError, match="deeper"):
        decode(frame(b"[" * (MAX_DEPTH + 2) + b"]" * (MAX_DEPTH + 2)))


def test_counts_that_claim_more_than_the_message_holds_are_rejected():
    with pytest.raises(WireError):  # four billion buffer lengths in a message of a few bytes
        decode(frame(b"null", nbuf=2**32 - 1))
    with pytest.raises(WireError):  # a buffer longer than what follows it
        decode(struct.pack("<II", 4, 1) + b"null" + struct.pack("<Q", 2**63) + b"\0")


def _cost(data: bytes) -> tuple[float, int]:
    """(seconds, peak bytes allocated by Python) of decoding ``data``, WireError or not; timed on its own,
    since tracing the allocations slows the decoding several times."""
    def run() -> None:
        try:
            decode(data)
        except WireError:
            pass

    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


@pytest.mark.parametrize("header", [
    # a trillion calls of no arguments: tuples and dicts without end (was an out-of-memory)
    b'{"__calls": 1000000000000, "args": [], "kwargs": []}',
    # a message's calls count against one budget, not each ``__calls`` on its own
    json.dumps([{"__calls": MAX_CALLS, "args": [], "kwargs": []}] * 200).encode(),
    # one buffer fanned out into 500,000 views by 500 columns that all name it
    json.dumps({"__calls": 1000, "kwargs": [], "args": [
        {"__stack": 0, "dtype": "torch.uint8", "size": [], "stride": [], "offset": 0, "extent": 1}] * 500}).encode(),
])
def test_amplifying_messages_cost_little(header):
    seconds, peak = _cost(frame(header, [b"\0" * 1000]))
    assert seconds < 1.0 and peak < 20 * 2**20, (seconds, peak)


def test_a_legitimate_large_request_still_decodes():
    k = 1024  # checks.timing.MAX_K calls, the largest timed request
    back = decode(encode(Calls([((torch.zeros(4), i), {}) for i in range(k)])))
    assert len(back) == k and back[-1][0][1] == k - 1
    with pytest.raises(WireError):
        decode(encode(Calls([((), {})] * (MAX_CALLS + 1))))
