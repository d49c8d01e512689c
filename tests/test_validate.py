"""`vecgrade validate` on the course, and the loop class.

Per exercise: the reference and two alternatives pass; the loop version, the half loop and a
Python-list version fail "vectorized"; the stub fails "correct". Speed expectations (the
alternatives fast, the half loop and the list version not) are reported as ``speed_problems``:
they depend on the timing method and the machine, so this test does not time anything.
"""
import dataclasses

import pytest
import torch

from graders.course.validate import python_list_source, validate_assignment
from graders.model.exercise import load_course

from conftest import ROOT

COURSE = load_course(ROOT / "assignments")


@pytest.mark.e2e
@pytest.mark.parametrize("name", list(COURSE))
def test_validate_is_green_and_the_loop_class_is_caught(name):
    rows = validate_assignment(COURSE[name], seed=11)
    assert {r.exercise.name for r in rows} == {ex.name for ex in COURSE[name].exercises}
    problems = {r.exercise.name: r.problems for r in rows if r.problems}
    assert not problems, problems
    for row in rows:   # the loop class, stated directly
        assert len(row.alternatives) >= 2
        assert all(a["correct"].passed and a["vectorized"].passed for a in row.alternatives), row.exercise.name
        assert row.half_loop["correct"].passed and not row.half_loop["vectorized"].passed
        assert not row.python_list["vectorized"].passed


def batch_outer_loop(a):  # a "loop version" that is in fact vectorized
    return a[:, :, None] * a[:, None, :]


def batch_outer(a):  # a "reference" that is in fact a loop
    B, F = a.shape
    out = torch.empty(B, F, F, dtype=a.dtype)
    for b in range(B):
        for i in range(F):
            for j in range(F):
                out[b, i, j] = a[b, i] * a[b, j]
    return out


def batch_outer_wrong(a):  # an "alternative" that is not correct
    return a[:, :, None] + a[:, None, :]


def test_validate_reports_broken_definitions(broadcasting):
    ex = broadcasting.exercise("batch_outer")
    vectorized_half_loop = dataclasses.replace(ex, half_loop=batch_outer_loop)
    for changed, expected in ((dataclasses.replace(ex, loop=batch_outer_loop), "the loop version passes vectorized"),
                              (dataclasses.replace(ex, reference=batch_outer), "reference fails vectorized"),
                              (dataclasses.replace(ex, alternatives=(batch_outer_wrong,) + tuple(ex.alternatives)),
                               "alternative `batch_outer_wrong` fails correct"),
                              (dataclasses.replace(ex, alternatives=ex.alternatives[:1]), "at least 2 needed"),
                              (vectorized_half_loop, "the half loop passes vectorized")):
        [row] = validate_assignment(dataclasses.replace(broadcasting, exercises=(changed,)))
        assert any(expected in p for p in row.problems), row.problems
    [good] = validate_assignment(dataclasses.replace(broadcasting, exercises=(ex,)))
    timed = "reference fails fast"   # a timing, not a definition: this unit test must not depend on the load
    assert not [p for p in good.problems if not p.startswith(timed)], good.problems


def test_derived_python_list_version_is_correct_but_iterates(broadcasting):
    ex = broadcasting.exercise("softmax_rows")
    namespace = {"torch": torch}
    exec(python_list_source(ex), namespace)
    x = torch.randn(4, 5)
    assert torch.allclose(namespace["softmax_rows"](x), ex.reference(x))
    assert "for v in" in python_list_source(ex) and ".tolist()" in python_list_source(ex)
