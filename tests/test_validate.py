"""`vecgrade validate` on the course: each reference passes, each loop fails vectorized, each stub fails correct."""
import dataclasses

import pytest
import torch

from conftest import ROOT
from graders.model.exercise import load_course
from graders.course.validate import validate_assignment

COURSE = load_course(ROOT / "assignments")


@pytest.mark.parametrize("name", list(COURSE))
def test_validate_is_green(name):
    rows = validate_assignment(COURSE[name], seed=11)
    assert {r.exercise.name for r in rows} == {ex.name for ex in COURSE[name].exercises}
    problems = {r.exercise.name: r.problems for r in rows if r.problems}
    assert not problems, problems


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


def test_validate_reports_broken_definitions(broadcasting):
    ex = broadcasting.exercise("batch_outer")
    for changed, expected in ((dataclasses.replace(ex, loop=batch_outer_loop), "the loop version passes vectorized"),
                              (dataclasses.replace(ex, reference=batch_outer), "reference fails vectorized")):
        [row] = validate_assignment(dataclasses.replace(broadcasting, exercises=(changed,)))
        assert any(expected in p for p in row.problems), row.problems
