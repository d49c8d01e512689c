"""Issue 29, "tolerances that catch what they should": both ways, for every exercise of the course.

- Every honest formulation keeps "correct": each exercise's alternatives and half loops match the reference on
  every case "correct" checks (``Exercise.cases``) and at the sizes "vectorized" and "fast" compare at, within
  the exercise's tolerance for the result's dtype (``Exercise.tolerance``, ``compare.mismatch``), for several
  seeds; so do the honest class's answers (tests/honest_class.py: einsum, cdist, std_mean, logsumexp, einops,
  helpers, type hints, prints), and, through the grader, every alternative and half loop of two exercises
  with float64 cases.
- A visibly wrong answer loses it: the reference's result plus 1e-4 fails some case of every exercise with a
  float result; through the grader, ``pairwise_sq_dists`` + 0.015 (admitted by the old atol of 2e-2) and a
  ``batch_outer`` that returns float32 for float64 inputs only above 20 rows (the old hidden float64 cases had
  at most 16) fail "correct", while the honest alternatives pass it.
- An answer that takes float64, computes in float32 and returns float64 loses it: a float64 result is held to
  float64's precision (``Exercise.tolerance``), for every exercise with a float64 result, in process, and
  through the grader for ``pairwise_sq_dists``, ``standardize_columns`` and ``batched_bilinear``.
"""
from __future__ import annotations

import contextlib
import io

import pytest
import torch
from honest_class import ALTERNATIVES, EINOPS, FUNCTIONAL, HELPED, HELPERS_CELL, HINTED, PRINTS_INSIDE
from test_checks import RUN

from graders import KIT_ROOT
from graders.checks.compare import mismatch
from graders.checks.correct import FLOAT32_PRECISION
from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission
from graders.checks.submission import grade_submission
from graders.checks.vocabulary import clone_args
from graders.model.exercise import load_course
from graders.sandbox.session import WorkerSession

from tests.testkit import program

COURSE = load_course(KIT_ROOT / "assignments")
EXERCISES = [ex for a in COURSE.values() for ex in a.exercises]
IDS = [ex.name for ex in EXERCISES]


def compared_inputs(ex, seed: int) -> list[tuple[str, tuple, dict]]:
    gen = torch.Generator().manual_seed(seed)
    cases = [(c.label, c.args, c.kwargs) for c in ex.cases(gen)]
    sizes = (*ex.count_sizes, 2 * ex.count_sizes[-1], ex.bench_size)
    return cases + [(f"size {n}", ex.sized(gen, n), {}) for n in sizes]


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_every_honest_formulation_keeps_correct(ex):
    assert ex.alternatives and ex.half_loops
    for seed in (0, 1):
        for label, args, kwargs in compared_inputs(ex, seed):
            expected = ex.reference(*clone_args(args), **kwargs)
            for fn in (*ex.alternatives, *ex.half_loops):
                problem = mismatch(fn(*clone_args(args), **kwargs), expected, *ex.tolerance(expected.dtype),
                                   ex.magnitude(args))
                assert problem is None, f"{fn.__name__}, seed {seed}, {label}: {problem}"


HONEST_CLASS = [(name, source) for answers in (ALTERNATIVES, EINOPS, FUNCTIONAL, HELPED, HINTED, PRINTS_INSIDE)
                for name, source in answers.items()]


@pytest.mark.parametrize("name, source", HONEST_CLASS, ids=[f"{n}-{k}" for k, (n, _) in enumerate(HONEST_CLASS)])
def test_the_honest_class_keeps_correct(name, source):
    """tests/honest_class.py's answers, called here on what "correct" and the counter compare."""
    ex = COURSE["broadcasting"].exercise(name)
    scope: dict = {"torch": torch}
    exec(HELPERS_CELL + "\n" + source, scope)  # noqa: S102 - the corpus's own answers
    with contextlib.redirect_stdout(io.StringIO()):
        for seed in (0, 1):
            for label, args, kwargs in compared_inputs(ex, seed):
                out = scope[name](*clone_args(args), **kwargs)
                expected = ex.reference(*clone_args(args), **kwargs)
                problem = mismatch(out, expected, *ex.tolerance(expected.dtype), ex.magnitude(args))
                assert problem is None, f"seed {seed}, {label}: {problem}"


@pytest.mark.parametrize("ex", EXERCISES, ids=IDS)
def test_a_visible_offset_fails_correct(ex):
    outputs = [(c, ex.reference(*clone_args(c.args), **c.kwargs)) for c in ex.cases(torch.Generator().manual_seed(0))]
    floats = [(c, o) for c, o in outputs if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel()]
    if not floats:
        pytest.skip(f"{ex.name} has no float result")
    assert all(mismatch(o, o, *ex.tolerance(o.dtype), ex.magnitude(c.args)) is None for c, o in floats)
    assert any(mismatch(o + 1e-4, o, *ex.tolerance(o.dtype), ex.magnitude(c.args)) for c, o in floats)


def test_a_float64_result_is_held_to_float64s_precision():
    ex = COURSE["broadcasting"].exercise("pairwise_sq_dists")
    assert ex.tolerance(torch.float32) == ex.tolerance(torch.float16) == ex.tolerance(torch.int64) == (ex.rtol, ex.atol)
    assert ex.tolerance(torch.float64) == ex.tolerance(torch.complex128) == (ex.rtol * 2**-29, ex.atol * 2**-29)


def in_float32(args: tuple) -> tuple:
    return tuple(a.float() if isinstance(a, torch.Tensor) and a.dtype == torch.float64 else a for a in args)


WITH_FLOAT64 = [ex for ex in EXERCISES if any(ex.reference(*clone_args(c.args), **c.kwargs).dtype == torch.float64
                                              for c in ex.cases(torch.Generator().manual_seed(0)))]


@pytest.mark.parametrize("ex", WITH_FLOAT64, ids=[ex.name for ex in WITH_FLOAT64])
def test_computing_in_float32_fails_a_float64_case(ex):
    """The reference itself, run on its float64 inputs cast to float32 and its result cast back, misses some
    float64 case by float32's rounding, which float64's tolerance does not admit."""
    cases = ex.cases(torch.Generator().manual_seed(0))
    wrong = []
    for c in cases:
        expected = ex.reference(*clone_args(c.args), **c.kwargs)
        if expected.dtype == torch.float64:
            out = ex.reference(*clone_args(in_float32(c.args)), **c.kwargs).to(expected.dtype)
            wrong.append(mismatch(out, expected, *ex.tolerance(expected.dtype), ex.magnitude(c.args)))
    assert any(wrong), f"{ex.name}: every float64 case matched when computed in float32"


def test_the_benchmark_size_is_checked_in_float64_where_float64_is_taken():
    cases = COURSE["broadcasting"].exercise("batch_outer").cases(torch.Generator().manual_seed(0))
    assert cases[-1].args[0].dtype == torch.float64 and cases[-1].args[0].shape[0] > 20
    one_hot = COURSE["indexing"].exercise("one_hot").cases(torch.Generator().manual_seed(0))
    assert not any(a.dtype == torch.float64 for a in one_hot[-1].args if isinstance(a, torch.Tensor))


CHEATS = [
    ("pairwise_sq_dists", "def pairwise_sq_dists(x, y):\n    return ((x[:, None] - y[None]) ** 2).sum(-1) + 0.015\n",
     "max abs error"),
    ("batch_outer", "def batch_outer(a):\n    out = a[:, :, None] * a[:, None, :]\n"
     "    return out.float() if a.shape[0] > 20 else out\n", "output dtype torch.float32, expected torch.float64"),
]


@pytest.mark.parametrize("name, source, expect", CHEATS, ids=[c[0] for c in CHEATS])
def test_the_cheats_fail_correct(broadcasting, name, source, expect):
    got = grade_submission(broadcasting, program(broadcasting, **{name: source}), only=[name], run=RUN)[name]
    assert not got["correct"].passed and expect in got["correct"].message, got["correct"].message
    assert FLOAT32_PRECISION not in got["correct"].message  # wrong at any precision


IN_FLOAT32 = [  # float64 in, float32 inside, float64 out: the dtype is right, the precision is float32's
    ("broadcasting", "def pairwise_sq_dists(x, y):\n    x32, y32 = x.float(), y.float()\n"
     "    return ((x32[:, None] - y32[None]) ** 2).sum(-1).to(x.dtype)\n"),
    ("broadcasting", "def standardize_columns(x, eps=1e-5):\n    x32 = x.to(torch.float32)\n"
     "    return ((x32 - x32.mean(0)) / (x32.std(0, unbiased=False) + eps)).to(x.dtype)\n"),
    ("einops", "def batched_bilinear(x, W, y):\n"
     "    return torch.einsum('bi,oij,bj->bo', x.float(), W.float(), y.float()).to(x.dtype)\n"),
]


@pytest.mark.parametrize("assignment, source", IN_FLOAT32, ids=["pairwise_sq_dists", "standardize_columns",
                                                                 "batched_bilinear"])
def test_an_answer_computed_in_float32_fails_correct(assignment, source):
    name = source.split("(")[0].removeprefix("def ")
    got = grade_submission(COURSE[assignment], program(COURSE[assignment], **{name: source}), only=[name],
                           run=RUN)[name]
    assert not got["correct"].passed and "max abs error" in got["correct"].message, got["correct"].message
    assert "float64" in got["correct"].message and FLOAT32_PRECISION in got["correct"].message


HONEST = [("pairwise_sq_dists", "def pairwise_sq_dists(x, y):\n"
           "    return (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * x @ y.T\n"),
          ("pairwise_sq_dists", "def pairwise_sq_dists(x, y):\n    return torch.cdist(x, y) ** 2\n"),
          ("batch_outer", "def batch_outer(a):\n    return torch.einsum('bi,bj->bij', a, a)\n")]


HONEST += [(ex.name, ex.source_as(fn)) for name in ("pairwise_sq_dists", "standardize_columns")
           for ex in [COURSE["broadcasting"].exercise(name)] for fn in (*ex.alternatives, *ex.half_loops)]


@pytest.mark.parametrize("name, source", HONEST, ids=["expanded", "cdist", "einsum", *(
    f"{n}-{k}" for k, (n, _) in enumerate(HONEST[3:]))])
def test_the_honest_twins_pass_correct(broadcasting, name, source):
    worker = WorkerSession([("preamble", broadcasting.preamble), ("cell", source)])
    worker.start()
    with worker:
        checks = ExerciseChecks(broadcasting.exercise(name), worker, RUN.reference(broadcasting),
                                Submission([("cell", source)]), seed=7, run=RUN)
        verdict = checks.correct()
    assert verdict.passed, verdict.message
