"""Nothing computed before a timed call can serve it (issue 38): a shape-only exercise is timed on a new shape of
equal work in every call, so a memo, a table built at import or a freed output found again cannot answer it;
the state finding names the habit where the program shows it (tests/test_static_state.py)."""
import math

import pytest
import torch

from graders.checks.equal_work import TOLERANCE, equal_work, equal_work_sizes, shape_only
from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission
from graders.checks.submission import GradingRun, grade_submission
from graders.checks.timing import inputs
from graders.model.exercise import load_assignment, load_course

from tests.testkit import ROOT

STRIDES = load_assignment(ROOT / "assignments" / "strides.py")
NHWC = STRIDES.exercise("nhwc_to_nchw_offsets")
RUN = GradingRun(seed=11)

ELEMENT_LOOP = ("def _slow(shape):\n    N, H, W, C = shape\n    out = torch.empty(N, C, H, W, dtype=torch.int64)\n"
                "    for n in range(N):\n        for c in range(C):\n            for h in range(H):\n"
                "                for w in range(W):\n"
                "                    out[n, c, h, w] = n * H * W * C + h * W * C + w * C + c\n    return out\n")
HONEST = ("def nhwc_to_nchw_offsets(shape):\n    N, H, W, C = shape\n"
          "    n = torch.arange(N)[:, None, None, None] * (H * W * C)\n    c = torch.arange(C)[:, None, None]\n"
          "    h = torch.arange(H)[:, None] * (W * C)\n    w = torch.arange(W) * C\n    return n + c + h + w\n")
# the red team's forms: state the static check sees (each with its finding), and what no static check can see
STATIC_MEMOS = {
    "augmented alias": ELEMENT_LOOP + "_MEMO = {}\ndef nhwc_to_nchw_offsets(shape):\n    key = tuple(shape)\n"
                       "    c = _MEMO\n    if key not in c:\n        c |= {key: _slow(shape)}\n    return c[key].clone()\n",
    "helper writing into its argument": ELEMENT_LOOP + "_MEMO = {}\ndef remember(store, key, out):\n"
                                        "    store[key] = out\n    return out\n"
                                        "def nhwc_to_nchw_offsets(shape):\n    key = tuple(shape)\n"
                                        "    if key in _MEMO:\n        return _MEMO[key].clone()\n"
                                        "    return remember(_MEMO, key, _slow(shape)).clone()\n",
    "own method on a default instance": ELEMENT_LOOP + "class Memo:\n    def __init__(self):\n        self.d = {}\n"
                                        "    def get(self, key, make):\n        if key not in self.d:\n"
                                        "            self.d[key] = make()\n        return self.d[key].clone()\n"
                                        "def nhwc_to_nchw_offsets(shape, _m=Memo()):\n"
                                        "    return _m.get(tuple(shape), lambda: _slow(shape))\n",
}
IMPORT_TABLE = (ELEMENT_LOOP + HONEST.replace("def nhwc_to_nchw_offsets", "def _fast") +
                "TABLE = {(2, 48, 48, 3): _fast((2, 48, 48, 3))}\n"
                "def nhwc_to_nchw_offsets(shape):\n    key = tuple(int(s) for s in shape)\n"
                "    return TABLE[key].clone() if key in TABLE else _slow(shape)\n")
# no state at all: the output of the call before, freed, is found again where torch.empty puts the next ones (a
# few candidates: the allocator does not always hand back the last freed block first); a shape it has not met is
# computed by a loop over the rows, fast enough for the first call of a request to finish in time, so that only
# the drawn shapes stop it (test_the_freed_buffer_trick_would_earn_fast_if_the_timed_shape_repeated)
ROW_LOOP = ("def _slow(shape):\n    N, H, W, C = shape\n    out = torch.empty(N, C, H, W, dtype=torch.int64)\n"
            "    base = torch.arange(N)[:, None, None] * (H * W * C) + torch.arange(C)[:, None] + torch.arange(W) * C\n"
            "    for h in range(H):\n        out[:, :, h] = base + h * W * C\n    return out\n")
FREED_BUFFER = (ROW_LOOP + "def nhwc_to_nchw_offsets(shape):\n    N, H, W, C = (int(s) for s in shape)\n"
                "    if N * C * H * W > 1000 and W > 8:\n"
                "        for out in [torch.empty(N, C, H, W, dtype=torch.int64) for _ in range(8)]:\n"
                "            flat = out.view(-1)\n"
                "            if int(flat[5]) == 5 * C and int(flat[H * W]) == 1 \\\n"
                "                    and int(flat[-1]) == N * H * W * C - 1:\n"
                "                flat[:4] = torch.arange(4) * C  # where the allocator kept its own pointers\n"
                "                return out\n"
                "    return _slow(shape)\n")

def test_equal_work_keeps_the_type_the_element_count_and_the_small_sizes():
    gen = torch.Generator().manual_seed(0)
    drawn = [equal_work_sizes((2, 48, 48, 3), gen) for _ in range(2000)]
    assert all(isinstance(d, tuple) and len(d) == 4 for d in drawn)
    assert all(abs(math.prod(d) / math.prod((2, 48, 48, 3)) - 1) <= TOLERANCE for d in drawn)
    assert len(set(drawn)) > 1000  # a memo keyed on the shape rarely meets one twice
    assert isinstance(equal_work_sizes([4, 8], gen), list) and isinstance(equal_work_sizes(torch.Size([4, 8]), gen),
                                                                            torch.Size)
    assert equal_work_sizes((1, 0, 5), gen) == (1, 0, 5) and equal_work_sizes((1, 1, 7), gen) == (1, 1, 7)


def test_only_shape_only_arguments_are_drawn_again():
    gen = torch.Generator().manual_seed(1)
    data = (torch.ones(3), (2, 3))
    assert not shape_only(data) and shape_only(((2, 48, 48, 3),)) and not shape_only((3, 0.5))
    assert equal_work((7, "mean", (4, 4)), gen)[:2] == (7, "mean")


def test_a_shape_only_exercise_is_timed_on_a_new_shape_in_every_call_and_request():
    first = RUN.bench_inputs(NHWC, "repetition 0", 64)
    second = RUN.bench_inputs(NHWC, "repetition 1", 64)
    shapes = [args[0] for args, _ in first.calls + second.calls]
    assert len(set(shapes)) >= 100, shapes  # not (2, 48, 48, 3) every time: it was, before issue 38
    assert all(abs(math.prod(s) / (2 * 48 * 48 * 3) - 1) <= TOLERANCE for s in shapes)  # the same work
    assert RUN.bench_inputs(NHWC, "repetition 0", 64) is first  # every student (and the reference) meets the same


@pytest.mark.parametrize("name", sorted(STATIC_MEMOS))
def test_the_static_memo_forms_fail_fast_by_their_state_finding(name):
    submission = Submission([("preamble", "import torch\n"), ("answer", STATIC_MEMOS[name])])
    verdict = ExerciseChecks(NHWC, None, None, submission).fast()  # nothing is run
    assert not verdict.passed and "keeps state between calls" in verdict.message, verdict.message


def test_the_honest_answer_and_a_module_level_constant_have_no_state_finding():
    honest = "SCALE = 1\n" + HONEST.replace("return n + c", "return SCALE * n + c")
    submission = Submission([("preamble", "import torch\n"), ("answer", honest)])
    assert submission.outside_findings(NHWC.name) == []


def grade(source):
    cells = [("preamble", "import torch\n"), ("answer", source)]
    return grade_submission(STRIDES, cells, only=[NHWC.name], run=RUN)[NHWC.name]


@pytest.mark.timing
@pytest.mark.parametrize("source", [IMPORT_TABLE, FREED_BUFFER, *STATIC_MEMOS.values()],
                         ids=["import-time table", "freed buffer", *STATIC_MEMOS])
def test_nothing_computed_before_a_timed_call_earns_fast(source):
    result = grade(source)
    assert result["correct"].passed, result["correct"].message
    assert not result["fast"].passed, result["fast"].message


@pytest.mark.timing
def test_the_honest_answer_is_fast_on_the_drawn_shapes():
    result = grade(HONEST)
    assert all(v.passed for v in result.values()), {p: v.message for p, v in result.items()}


def _fingerprint(args) -> str:
    return repr([(a.dtype, tuple(a.shape), a.numpy().tobytes()) if isinstance(a, torch.Tensor) else a for a in args])


COURSE = load_course(ROOT / "assignments")
EVERY = [ex for a in COURSE.values() for ex in a.exercises]


@pytest.mark.parametrize("ex", EVERY, ids=lambda ex: ex.name)
def test_no_two_timed_calls_of_any_exercise_have_the_same_inputs(ex):
    """Data or shape, every exercise's timed calls differ from one another (what a memo would need to hit)."""
    gen = torch.Generator().manual_seed(2)
    seen = [_fingerprint(inputs(ex, gen)) for _ in range(16)]
    assert len(set(seen)) == len(seen), ex.name


FREED_BUFFER_DEMO = """
import sys, torch
from graders.checks.equal_work import equal_work_sizes
ns = {"torch": torch}
exec(sys.argv[1], ns)
slow, ran = ns["_slow"], []
ns["_slow"] = lambda shape: (ran.append(tuple(shape)), slow(shape))[1]
exec(sys.argv[2], honest := {"torch": torch})

def calls(shapes):
    ran.clear()
    right = 0
    for shape in shapes:
        out = ns["nhwc_to_nchw_offsets"](shape)
        right += torch.equal(out, honest["nhwc_to_nchw_offsets"](shape))
        del out  # freed: where the next torch.empty of its size is put
    return len(shapes) - len(ran), right

gen = torch.Generator().manual_seed(0)
print(*calls([(2, 48, 48, 3)] * 8), *calls([equal_work_sizes((2, 48, 48, 3), gen) for _ in range(8)]))
"""


def test_the_freed_buffer_trick_works_on_a_repeated_shape_and_not_on_drawn_ones():
    """The attack is real: with no state in the program, a repeated shape is answered from the freed output of the
    call before (found again by torch.empty, its tags intact) without computing; on shapes of equal work drawn per
    call (what the grader times, graders.checks.equal_work) it never is. Run in a fresh process: the allocator's
    state is the point."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", FREED_BUFFER_DEMO, FREED_BUFFER, HONEST], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, check=True)
    served_repeated, right_repeated, served_drawn, right_drawn = map(int, done.stdout.split())
    assert served_repeated >= 4 and right_repeated == 8, done.stdout  # most repeats answered from freed memory
    assert served_drawn == 0 and right_drawn == 8, done.stdout  # every drawn shape computed, every answer right


@pytest.mark.timing
def test_the_freed_buffer_trick_would_earn_fast_if_the_timed_shape_repeated(monkeypatch):
    """The control of test_nothing_computed_before_a_timed_call_earns_fast[freed buffer]: timed on the benchmark
    shape in every call (as before issue 38), the same answer earns "fast"; only the drawn shapes stop it."""
    import graders.checks.timing as timing
    monkeypatch.setattr(timing, "shape_only", lambda args: False)
    cells = [("preamble", "import torch\n"), ("answer", FREED_BUFFER)]
    with GradingRun(seed=12) as run:
        result = grade_submission(STRIDES, cells, only=[NHWC.name], run=run)[NHWC.name]
    assert result["correct"].passed, result["correct"].message
    assert result["fast"].passed, result["fast"].message
