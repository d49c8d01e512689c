"""Issue 29, "count where it matters": the work is counted at the benchmark size and on the largest hidden cases'
inputs, not only at small multiples of 4, so a loop that runs at some sizes only loses "vectorized", while an
honest answer whose work is fixed in size (a hidden case's padding or extra axes add a few ops) keeps it."""
from __future__ import annotations

import pytest
import torch
from test_checks import REF, RUN, checks_with_static_view

from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission
from graders.checks.vectorized import SHAPES, count_sizes, counted_cases
from graders.model.verdict import Reason
from graders.sandbox.session import WorkerSession

ROWS_LOOP = ("def batch_outer(a):\n"
             "    if {condition}:\n"
             "        return torch.stack([row[:, None] * row[None, :] for row in a.unbind(0)]).reshape(\n"
             "            a.shape[0], a.shape[1], a.shape[1])\n"
             "    return a[:, :, None] * a[:, None, :]\n")


def test_the_benchmark_size_is_counted(broadcasting):
    ex = broadcasting.exercise("batch_outer")
    for seed in range(5):
        sizes = count_sizes(ex, torch.Generator().manual_seed(seed))
        assert ex.bench_size in sizes and sizes == sorted(set(sizes)) and len(sizes) >= 3


def test_the_largest_hidden_cases_of_distinct_shapes_are_counted(broadcasting):
    cases = counted_cases(broadcasting.exercise("batch_outer"), torch.Generator().manual_seed(0))
    shapes = [tuple(case.args[0].shape) for case in cases]
    assert len(cases) == SHAPES and len(set(shapes)) == SHAPES
    assert any(shape[0] % 4 for shape in shapes), shapes  # a size the drawn sizes never take


@pytest.mark.parametrize("condition", ["a.shape[0] % 4", "a.shape[0] == 24"], ids=["not-multiple-of-4", "bench-size"])
def test_a_loop_at_some_sizes_only_fails_vectorized(broadcasting, condition):
    worker, checks = checks_with_static_view(broadcasting, ROWS_LOOP.format(condition=condition), REF)
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and verdict.reason == Reason.GROWS, verdict.message


HONEST = [("broadcasting", "batch_outer", REF),
          ("broadcasting", "batch_outer", "def batch_outer(a):\n    return torch.einsum('bi,bj->bij', a, a)\n")]


@pytest.mark.parametrize("assignment, name, source", HONEST, ids=["reference", "einsum"])
def test_an_honest_answer_keeps_vectorized(broadcasting, assignment, name, source):
    worker, checks = checks_with_static_view(broadcasting, source, source, name=name)
    with worker:
        verdict = checks.vectorized()
    assert verdict.passed, verdict.message
    assert broadcasting.exercise(name).bench_size in verdict.figures["sizes"]


def test_hidden_forms_that_add_ops_keep_vectorized():
    """conv2d_indexing's reference does up to 4 ops more on hidden cases with padding than at the sizes."""
    from graders import KIT_ROOT
    from graders.model.exercise import load_assignment
    indexing = load_assignment(KIT_ROOT / "assignments" / "indexing.py")
    source = indexing.exercise("conv2d_indexing").reference_source()
    worker, checks = checks_with_static_view(indexing, source, source, name="conv2d_indexing")
    with worker:
        verdict = checks.vectorized()
    assert verdict.passed, verdict.message


CDIST = "def pairwise_sq_dists(x, y):\n    return torch.cdist(x, y) ** 2\n"
ELEMENT_LOOP = ("def pairwise_sq_dists(x, y):\n"
                "    return torch.tensor([[float(((a - b) ** 2).sum()) for b in y] for a in x],\n"
                "                        dtype=x.dtype).reshape(x.shape[0], y.shape[0])\n")


def counted(assignment, source: str, static_source: str, seed: int):
    """``vectorized`` of ``source`` for `pairwise_sq_dists`, the AST seeing ``static_source``, at ``seed``."""
    worker = WorkerSession([("preamble", assignment.preamble), ("cell", source)])
    worker.start()
    with worker:
        return ExerciseChecks(assignment.exercise("pairwise_sq_dists"), worker, RUN.reference(assignment),
                              Submission([("cell", static_source)]), seed=seed, run=RUN).vectorized()


@pytest.mark.parametrize("seed", range(4))
def test_every_size_is_counted_with_the_same_long_axis(broadcasting, seed):
    """One long axis per call (issue 38): every counted size draws the same axis, so a library that takes another
    path on another shape is not read as growth (`torch.cdist` uses a matrix product past 25 rows: 2 ops with the
    coordinates long, 9 with the rows long, read as [2, 9, 2, 9] over the sizes before), while an element loop the
    AST does not see still grows along whichever axis is drawn."""
    honest = counted(broadcasting, CDIST, CDIST, seed)
    assert honest.passed, honest.message
    hidden = counted(broadcasting, ELEMENT_LOOP, CDIST, seed)
    assert not hidden.passed and hidden.reason == Reason.GROWS, hidden.message
