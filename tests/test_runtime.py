"""The runtime evidence holds against a process that lies, hangs or hides its work; honest answers keep marks."""
import socket
import struct
import subprocess
import sys
import time

import pytest
from test_checks import REF, RUN, TOY, checks_with_static_view

from graders.checks.submission import GradingRun, grade_submission
from graders.checks.vectorized import forbidden_ops_used
from graders.checks.vocabulary import Timeouts
from graders.sandbox.wire import recv_frame

from tests.testkit import program


def test_a_header_and_one_byte_do_not_block_the_reader():
    mine, theirs = socket.socketpair()
    with mine, theirs:
        theirs.sendall(struct.pack("<Q", 1000) + b"x")
        with pytest.raises(TimeoutError):
            recv_frame(mine, time.monotonic() + 0.3, 10_000)
    mine, theirs = socket.socketpair()
    with mine, theirs:
        theirs.sendall(struct.pack("<Q", 1000) + b"x" * 1000)  # the whole message, in time, is read
        assert recv_frame(mine, time.monotonic() + 5, 10_000) == b"x" * 1000


FORGED_HEADER = ("import os, struct\n"
                 "def batch_outer(a):\n"
                 "    for fd in range(3, 64):\n"
                 "        try:\n"
                 "            os.write(fd, struct.pack('<Q', 1 << 20) + b'x')\n"
                 "        except OSError:\n"
                 "            pass\n"
                 "    return a[:, :, None] * a[:, None, :]\n")


def test_a_forged_reply_header_costs_only_the_deadline(broadcasting):
    cells = program(broadcasting, batch_outer=FORGED_HEADER,
                    softmax_rows=broadcasting.exercise("softmax_rows").reference_source())
    result = grade_submission(broadcasting, cells, only=["batch_outer", "softmax_rows"],
                              timeouts=Timeouts(call=1.0), run=RUN)
    assert not result["batch_outer"]["correct"].passed
    assert "did not return within 1 s" in result["batch_outer"]["correct"].message
    assert all(v.passed for v in result["softmax_rows"].values()), result["softmax_rows"]


THREADED = ("import threading\n"
            "def batch_outer(a):\n"
            "    out = torch.empty(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)\n"
            "    def rows():\n"
            "        for b in range(a.shape[0]):\n"
            "            out[b] = a[b, :, None] * a[b, None, :]\n"
            "    t = threading.Thread(target=rows)\n"
            "    t.start()\n"
            "    t.join()\n"
            "    return out\n")


def test_a_row_loop_in_a_thread_is_caught(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, THREADED, REF)
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and ("thread" in verdict.message or "grows" in verdict.message), verdict.message


FIXED_SIZES = ("def batch_outer(a):\n"
               "    if a.shape[0] in (4, 16):\n"
               "        return a[:, :, None] * a[:, None, :]\n"
               "    return torch.stack([r[:, None] * r[None, :] for r in a])\n")


def test_an_answer_that_loops_except_at_fixed_sizes_is_caught(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, FIXED_SIZES, REF)
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed, verdict.message
    worker, checks = checks_with_static_view(broadcasting, REF, REF)
    with worker:
        honest = checks.vectorized()
    assert honest.passed, honest.message


PADDED = ("def batch_outer(a):\n"
          "    z = a.new_zeros(1)\n"
          "    for _ in range(400):\n"
          "        z = z + 0\n"
          "    return a[:, :, None] * a[:, None, :] + z\n")


def test_padding_ops_cannot_hide_a_loop_under_the_growth_allowance(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, PADDED, REF)
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and "more than" in verdict.message, verdict.message


def test_attention_routes_to_a_forbidden_softmax_variant(broadcasting):
    assert forbidden_ops_used(("_softmax",), {"_safe_softmax": 1, "mul": 2}) == ["_safe_softmax"]
    assert forbidden_ops_used(("_softmax",), {"mul": 2, "exp": 1}) == []
    sdpa = ("def softmax_rows(x):\n    eye = torch.eye(x.shape[1], dtype=x.dtype)\n"  # softmax(x I) I: rows of any shape
            "    return torch.nn.functional.scaled_dot_product_attention(x[None], eye[None], eye[None], scale=1.0)[0]\n")
    innocent = "def softmax_rows(x):\n    return x\n"
    worker, checks = checks_with_static_view(broadcasting, sdpa, innocent, name="softmax_rows")
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and "softmax" in verdict.message, verdict.message
    # on [1, N, 1, D] queries the fused CPU kernel runs, and no softmax op shows (a red-team answer passed this way)
    worker, checks = checks_with_static_view(broadcasting, FLASH, innocent, name="softmax_rows")
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and "attention" in verdict.message, verdict.message
    worker, checks = checks_with_static_view(broadcasting, innocent, innocent, name="softmax_rows")
    with worker:  # control: the same check passes a program that runs no attention
        assert "attention" not in checks.vectorized().message


FLASH = ("def softmax_rows(x):\n    N, D = x.shape\n"
         "    q = torch.zeros(1, N, 1, D, dtype=x.dtype)\n    q[..., 0] = 1\n"
         "    k = torch.zeros(1, N, D, D, dtype=x.dtype)\n    k[..., 0] = x\n"
         "    v = torch.eye(D, dtype=x.dtype).expand(1, N, D, D)\n"
         "    return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=1.0)[0, :, 0]\n")


# -- in-place and view, with a process that lies --------------------------------------------------
LIE = ("    import sys\n"  # the body of the function itself patches the worker's replies with every old flag
       "    m = sys.modules['__main__']\n"
       "    enc = m.encode_reply\n"
       "    def lying(obj, regions=()):\n"
       "        if isinstance(obj, dict) and isinstance(obj.get('ok'), dict):\n"
       "            obj['ok'].update(same_as_arg0=True, shares_arg0=True, args_after=[obj['ok'].get('out')])\n"
       "        return enc(obj, regions)\n"
       "    m.encode_reply = lying\n")


def toy(name, source):
    cells = [("preamble", "import torch"), ("cell", source)]
    return grade_submission(TOY, cells, only=[name], run=RUN)[name]["correct"]


def test_a_new_tensor_fails_in_place_even_when_the_process_lies():
    lying = toy("double_", "def double_(a):\n" + LIE + "    return torch.where(a > 0, 2 * a, a)\n")
    assert not lying.passed and "not changed in place" in lying.message
    honest = toy("double_", "def double_(a):\n" + LIE + "    a[a > 0] *= 2\n    return a\n")
    assert honest.passed, honest.message


def test_a_copy_fails_the_view_requirement_even_when_the_process_lies():
    lying = toy("windows", "def windows(x, k):\n" + LIE + "    return x.unfold(0, k, 1).clone()\n")
    assert not lying.passed and "returned a copy" in lying.message
    honest = toy("windows", "def windows(x, k):\n" + LIE + "    return x.unfold(0, k, 1)\n")
    assert honest.passed, honest.message


def test_a_slow_cell_is_stopped_and_loading_goes_on(broadcasting):
    slow = "import time\ndef slow():\n    while True:\n        time.sleep(0.1)\nSCALE = slow()\n"
    answer = "def batch_outer(a):\n    return a[:, :, None] * a[:, None, :] * SCALE\n"
    cells = [("preamble", broadcasting.preamble), ("scratch", slow), ("answer", answer)]
    result = grade_submission(broadcasting, cells, only=["batch_outer"], timeouts=Timeouts(cell=1.0), run=RUN)
    # the reached slow cell was stopped before it bound SCALE, and the answer's cell still loaded
    assert "raised NameError" in result["batch_outer"]["correct"].message, result["batch_outer"]["correct"].message
    unrelated = [("preamble", broadcasting.preamble), ("scratch", "import time\nwhile True:\n    time.sleep(0.1)\n"),
                 ("answer", REF)]
    result = grade_submission(broadcasting, unrelated, only=["batch_outer"], timeouts=Timeouts(cell=1.0), run=RUN)
    assert result["batch_outer"]["correct"].passed  # a slow cell the answer does not reach never runs there


def test_the_notebook_budget_stops_grading():
    with GradingRun(seed=1) as run:
        result = run.grade(TOY, [("preamble", "import torch"), ("cell", "def double_(a):\n    return a\n")],
                           notebook_timeout=0.0)
    assert all("time budget" in v.message for parts in result.values() for v in parts.values())
    assert not any(v.passed for parts in result.values() for v in parts.values())


def test_confined_children_grade_and_a_hang_costs_one_exercise(broadcasting, tmp_path):
    from graders.sandbox.policy import Sandbox
    sandbox = Sandbox(course_root=str(tmp_path))
    if not sandbox.status()[0]:
        pytest.skip(sandbox.status()[1])
    hang = "def batch_outer(a):\n    while True:\n        pass\n"
    cells = program(broadcasting, batch_outer=hang, softmax_rows=broadcasting.exercise("softmax_rows").reference_source())
    result = grade_submission(broadcasting, cells, only=["batch_outer", "softmax_rows"], sandbox=sandbox,
                              timeouts=Timeouts(call=1.0), run=RUN)
    assert "did not return within 1 s" in result["batch_outer"]["correct"].message
    assert all(v.passed for v in result["softmax_rows"].values()), result["softmax_rows"]


def test_the_templates_warm_up_counts_without_importing_the_compiler():
    """The counter's dispatch mode must not pull in torch._dynamo (1.2 s per grading process), and still count."""
    script = ("import sys, torch\n"
              "from graders.sandbox import worker\n"
              "worker._warm_up()\n"
              "w = worker.Worker()\n"
              "w.load_cell('c', 'def f(a):\\n    return (a[:, None] * a[None]).sum(-1)\\n', 30)\n"
              "n = w.count('f', (torch.randn(4, 3),), (torch.randn(5, 3),), {}, 10_000)\n"
              "print(sum(n['ops'].values()), 'torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) >= 3 and out[1] == "False"
