"""A timed request handed over as a sealed memfd: read in place, private to each worker, unchangeable by any."""
import os
import socket
import threading
import time

import pytest
import torch

from graders.checks.timing import Staged, timed
from graders.sandbox.protocol import Op, request, serve_requests
from graders.sandbox.sealed import IN_FD, SealedMessage, map_sealed, send_sealed
from graders.sandbox.session import WorkerSession
from graders.sandbox.wire import Calls, WireError, decode, encode, recv_frame, recv_frame_with_fds


def _pair():
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)


def test_a_sealed_message_arrives_whole_and_decodes_in_place():
    x = torch.arange(4096.).view(64, 64)
    sealed = SealedMessage(encode({"x": x}))
    grader, worker = _pair()
    with grader, worker:
        send_sealed(grader, sealed)
        data, fds = recv_frame_with_fds(worker)
    assert fds == [] and len(data) == sealed.length
    back = decode(data)["x"]
    assert torch.equal(back, x)
    assert back.untyped_storage().data_ptr() >= torch.frombuffer(data, dtype=torch.uint8).data_ptr()  # a view


def test_what_a_worker_writes_stays_in_its_own_copy():
    sealed = SealedMessage(encode(torch.zeros(1024)))
    first = decode(map_sealed(os.dup(sealed.fd), sealed.length))
    first.add_(7)  # a function that writes into its input
    second = decode(map_sealed(os.dup(sealed.fd), sealed.length))
    assert torch.equal(second, torch.zeros(1024)) and torch.equal(first, torch.full((1024,), 7.))


def test_nobody_can_change_or_resize_a_sealed_message():
    sealed = SealedMessage(encode(torch.zeros(16)))
    with pytest.raises(PermissionError):
        os.pwrite(sealed.fd, b"x", 0)
    with pytest.raises(PermissionError):
        os.ftruncate(sealed.fd, 4)


def test_an_unsealed_memfd_or_a_short_one_is_not_read_in_place():
    fd = os.memfd_create("not-sealed")
    os.write(fd, encode(torch.zeros(4)))
    with pytest.raises(ValueError, match="sealed"):
        map_sealed(fd, 8)
    sealed = SealedMessage(encode(torch.zeros(4)))
    with pytest.raises(ValueError, match="sealed"):
        map_sealed(os.dup(sealed.fd), sealed.length + 1)  # longer than what was written: past its end


def test_a_frame_that_claims_a_memfd_without_one_is_a_wire_error():
    grader, worker = _pair()
    with grader, worker:
        grader.sendall((IN_FD | 64).to_bytes(8, "little"))
        with pytest.raises(WireError, match="without its memfd"):
            recv_frame_with_fds(worker)


def test_a_worker_times_a_sealed_request_and_the_next_worker_sees_the_same_inputs():
    """The student's worker writes into its inputs; the reference's worker, timed on the same sealed request
    after it, still gets the inputs as drawn."""
    cells = [("cell", "def f(a):\n    a.add_(1)\n    return a.clone()\n")]
    calls = [((torch.zeros(8, 8),), {}) for _ in range(3)]
    staged = Staged(calls, [0, 2], SealedMessage(_bench_message(calls)))
    with WorkerSession(cells) as student, WorkerSession(cells) as reference:
        _, outs_student = timed(student, staged, 60)
        _, outs_reference = timed(reference, staged, 60)
    assert all(torch.equal(o, torch.ones(8, 8)) for o in outs_student + outs_reference)


def _bench_message(calls) -> bytes:
    return request(Op.BENCH, name="f", calls=Calls(calls), which=[0, 2])


def test_the_request_loop_answers_an_unreadable_memfd_frame_and_goes_on():
    grader, worker = _pair()
    loop = threading.Thread(target=serve_requests, args=(worker, lambda data, fds: encode({"len": len(data)})))
    loop.start()
    try:
        fd = os.memfd_create("not-sealed")
        os.write(fd, b"x" * 64)
        socket.send_fds(grader, [(IN_FD | 64).to_bytes(8, "little")], [fd])
        os.close(fd)
        first = decode(recv_frame(grader, time.monotonic() + 10, 1 << 20))
        sealed = SealedMessage(b"y" * 64)
        send_sealed(grader, sealed)
        second = decode(recv_frame(grader, time.monotonic() + 10, 1 << 20))
    finally:
        grader.close()
        loop.join(10)
    assert "sealed memfd" in first["error"] and second == {"len": 64}
