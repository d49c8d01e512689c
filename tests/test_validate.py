"""`vecgrade validate` on the course, and the loop class.

Per exercise: the reference and two alternatives pass all three parts; the loop version, each
half loop (one per growing axis) and a Python-list version fail "vectorized", and the half loops
and the list version fail "fast" too; the stub fails "correct". The bench sizes keep the half loops
and list versions at 5x the reference's time or more (``benchmarks/calibrate.py``), against an
allowance of 3x.
"""
import dataclasses

import pytest
import torch

from graders.course.validate import python_list_source, validate_assignment
from graders.model.exercise import load_course

from tests.testkit import ROOT

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
        assert len(row.half_loops) == len(row.exercise.half_loops) >= 1
        for fn, half in zip(row.exercise.half_loops, row.half_loops, strict=True):
            assert half["correct"].passed and not half["vectorized"].passed, fn.__name__
            assert not half["fast"].passed, (fn.__name__, half["fast"].message)
        assert not row.python_list["vectorized"].passed
        assert not row.python_list["fast"].passed, (row.exercise.name, row.python_list["fast"].message)


def batch_outer_loop(a):  # a "loop version" that is in fact vectorized
    return a[:, :, None] * a[:, None, :]


def batch_outer(a):  # a "reference" that is in fact a loop
    return torch.cat([(row[:, None] * row)[None] for row in a] + [a.new_empty(0, a.shape[1], a.shape[1])])


def batch_outer_fast_half_loop(a):  # a "half loop" that loops over nothing that costs: as fast as the reference
    for _ in range(1):
        out = a[:, :, None] * a[:, None, :]
    return out


def batch_outer_wrong(a):  # an "alternative" that is not correct
    return a[:, :, None] + a[:, None, :]


def test_validate_reports_broken_definitions(broadcasting):
    ex = broadcasting.exercise("batch_outer")
    # one bad half loop among good ones is caught, and named
    vectorized_half_loop = dataclasses.replace(ex, half_loops=(*ex.half_loops, batch_outer_loop))
    fast_half_loop = dataclasses.replace(ex, half_loops=(batch_outer_fast_half_loop, *ex.half_loops))
    for changed, expected in ((dataclasses.replace(ex, loop=batch_outer_loop), "the loop version passes vectorized"),
                              (dataclasses.replace(ex, reference=batch_outer), "reference fails vectorized"),
                              (dataclasses.replace(ex, alternatives=(batch_outer_wrong,) + tuple(ex.alternatives)),
                               "alternative `batch_outer_wrong` fails correct"),
                              (dataclasses.replace(ex, alternatives=ex.alternatives[:1]), "at least 2 needed"),
                              (vectorized_half_loop, "the half loop `batch_outer_loop` passes vectorized"),
                              (fast_half_loop, "the half loop `batch_outer_fast_half_loop` passes fast"),
                              (dataclasses.replace(ex, half_loops=()), "no half_loop")):
        [row] = validate_assignment(dataclasses.replace(broadcasting, exercises=(changed,)))
        assert any(expected in p for p in row.problems), row.problems
    [good] = validate_assignment(dataclasses.replace(broadcasting, exercises=(ex,)))
    # timings of vectorized answers against each other may tip under load: only the definitions are asserted
    assert not [p for p in good.problems if "fails fast" not in p], good.problems


def test_half_loop_is_shorthand_for_the_first_of_the_half_loops(broadcasting):
    ex = broadcasting.exercise("batch_outer")
    one = dataclasses.replace(ex, half_loop=batch_outer_loop, half_loops=ex.half_loops[1:])
    assert one.half_loop is None and tuple(one.half_loops) == (batch_outer_loop, *ex.half_loops[1:])


def test_derived_python_list_version_is_correct_but_iterates(broadcasting):
    ex = broadcasting.exercise("softmax_rows")
    namespace = {"torch": torch}
    exec(python_list_source(ex), namespace)
    x = torch.randn(4, 5)
    assert torch.allclose(namespace["softmax_rows"](x), ex.reference(x))
    assert "for v in" in python_list_source(ex) and ".tolist()" in python_list_source(ex)


def test_validate_says_as_each_program_is_graded(broadcasting):
    """`vecgrade validate` once printed nothing for minutes between two assignments' tables: each program of the
    loop class reports as its grading finishes, in order, counted."""
    lines: list[str] = []
    ex = broadcasting.exercise("batch_outer")
    only_one = dataclasses.replace(ex, half_loops=ex.half_loops[:1], alternatives=ex.alternatives[:2])
    one = dataclasses.replace(broadcasting, exercises=(only_one,))
    [row] = validate_assignment(one, only=["batch_outer"], progress=lines.append)
    whats = ["the reference", "the loop version", "the stub", "the Python-list version", "half loop 1",
             "alternative 1", "alternative 2"]
    assert len(lines) == len(whats), lines
    for i, (line, what) in enumerate(zip(lines, whats, strict=True), 1):
        assert line.startswith(f"broadcasting: {what} graded on 1 exercise(s), {i} of {len(whats)} ("), line
    assert row.exercise.name == "batch_outer"
