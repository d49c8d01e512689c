"""The grader/worker message format: plain data round-trips; nothing else gets through."""
import pytest
import torch

from graders.sandbox.wire import Calls, Inbox, Opaque, WireError, decode, encode


def test_round_trip_keeps_values_dtypes_and_strides():
    t = torch.arange(12.).view(3, 4).t()
    sliced = torch.arange(10)[::3]
    msg = {"a": (t, sliced, torch.tensor([True, False])), "b": [1, 2.5, "s", None], "c": torch.empty(0, 2)}
    back = decode(encode(msg))
    assert torch.equal(back["a"][0], t) and back["a"][0].stride() == t.stride()
    assert torch.equal(back["a"][1], sliced) and back["a"][1].stride() == (3,)
    assert back["a"][2].dtype == torch.bool
    assert back["b"] == [1, 2.5, "s", None] and isinstance(back["a"], tuple)
    assert back["c"].shape == (0, 2)


def test_storage_offset_survives():
    col = torch.arange(12.).view(4, 3)[:, 2]
    back = decode(encode(col))
    assert torch.equal(back, col) and back.storage_offset() == 2 and back.stride() == (3,)


def test_expanded_tensor_keeps_zero_stride():
    e = torch.tensor([1., 2.]).expand(3, 2)
    back = decode(encode(e))
    assert torch.equal(back, e) and back.stride() == (0, 1)


def test_subclass_arrives_as_a_plain_tensor():
    class Anything(torch.Tensor):
        def __eq__(self, other):
            return True

    back = decode(encode(torch.zeros(2).as_subclass(Anything)))
    assert type(back) is torch.Tensor
    assert not torch.equal(back, torch.ones(2))


def test_objects_arrive_as_type_names_only():
    back = decode(encode({"f": len, "o": object()}))
    assert back == {"f": "builtin_function_or_method", "o": "object"} and isinstance(back["f"], Opaque)


def test_malformed_messages_are_rejected():
    with pytest.raises(WireError):
        decode(b"\x05\x00")
    data = bytearray(encode(torch.zeros(2)))
    bad = data.replace(b'"size": [2]', b'"size": [99]')
    with pytest.raises(WireError):
        decode(bytes(bad))


def test_calls_travel_stacked_and_arrive_as_the_same_calls():
    from graders.sandbox.wire import Calls
    gen = torch.Generator().manual_seed(0)
    calls = [((torch.randn(3, 4, generator=gen).t(), i, torch.randn(2, generator=gen)), {"eps": torch.ones(1) * i})
             for i in range(5)]
    back = decode(encode(("bench", {"calls": Calls(calls)})))[1]["calls"]
    assert len(back) == 5
    for (args, kwargs), (got, got_kw) in zip(calls, back, strict=True):
        assert torch.equal(got[0], args[0]) and got[0].stride() == args[0].stride()
        assert got[1] == args[1] and torch.equal(got[2], args[2]) and torch.equal(got_kw["eps"], kwargs["eps"])
    # the tensors of one argument position share one buffer: one decode for all the calls
    assert back[0][0][0].untyped_storage().data_ptr() == back[4][0][0].untyped_storage().data_ptr()


def test_calls_of_mixed_layouts_still_round_trip():
    from graders.sandbox.wire import Calls
    calls = [((torch.zeros(2, 3),), {}), ((torch.zeros(3, 2).t(),), {}), ((torch.empty(0),), {})]
    back = decode(encode(Calls(calls)))
    assert [a[0].stride() for a, _ in back] == [(3, 1), (1, 2), (1,)]
    with pytest.raises(WireError):  # a stacked buffer that does not hold the calls it claims
        decode(encode(Calls([((torch.zeros(2),), {})] * 3)).replace(b'"__calls": 3', b'"__calls": 4'))


# -- a message as the worker reads it: used in place, in a buffer kept between messages ---------------------
def _base(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def test_a_writable_message_is_decoded_in_place_and_a_read_only_one_is_copied():
    calls = Calls([((torch.randn(64, 3), torch.arange(5)), {}) for _ in range(4)])
    message = encode(calls)
    received = bytearray(message)  # as recv_frame gives it
    start = torch.frombuffer(received, dtype=torch.uint8).data_ptr()
    in_place = decode(received)[0][0][0]
    assert start <= _base(in_place) < start + len(received)  # a view of the message: no copy of the inputs
    copied = decode(message)[0][0][0]  # bytes cannot be written: the tensor gets a copy it may write to
    copied.add_(1)
    assert torch.equal(copied, calls[0][0][0] + 1)


def test_the_inbox_keeps_its_memory_for_a_message_that_fits_and_grows_for_one_that_does_not():
    inbox = Inbox()
    first = inbox.room(1000)
    ptr = torch.frombuffer(first, dtype=torch.uint8).data_ptr()
    del first
    assert torch.frombuffer(inbox.room(800), dtype=torch.uint8).data_ptr() == ptr
    bigger = inbox.room(5000)
    assert len(bigger) == 5000 and torch.frombuffer(bigger, dtype=torch.uint8).data_ptr() != ptr
