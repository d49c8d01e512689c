"""The contract every exercise of the course keeps, checked for all of them at once.

- Its hidden cases are reproducible: the same run seed draws the same cases, another seed other ones.
- What a student could hand in fails where it should: the stub fails "correct"; the loop version
  is correct but neither vectorized nor fast; the demo class's wrong answer fails "correct".

The programs are ``vecgrade validate``'s and the wrong answers the demo's (``demo/<assignment>.py``),
graded by ``grade_submission`` as in a real run. A new exercise is covered without editing this file.
"""
from __future__ import annotations

from functools import cache

import pytest
import torch

from graders import KIT_ROOT
from graders.checks.submission import exercise_seed, grade_submission
from graders.course.personas import load_roster
from graders.course.validate import loop_program, stub_program
from graders.model.exercise import load_course

COURSE = load_course(KIT_ROOT / "assignments")
EXERCISES = [(a.name, ex.name) for a in COURSE.values() for ex in a.exercises]
IDS = [f"{a}.{e}" for a, e in EXERCISES]


def draw(assignment: str, exercise: str, seed: int) -> list:
    ex = COURSE[assignment].exercise(exercise)
    return ex.cases(torch.Generator().manual_seed(exercise_seed(seed, ex.name)))


def same(x, y) -> bool:
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape \
            and x.stride() == y.stride() and torch.equal(x, y)
    if isinstance(x, (list, tuple)):
        return type(x) is type(y) and len(x) == len(y) and all(map(same, x, y))
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    return type(x) is type(y) and x == y


def same_cases(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    return all(ca.label == cb.label and same(ca.args, cb.args) and same(ca.kwargs, cb.kwargs)
               for ca, cb in zip(a, b, strict=True))


@pytest.mark.parametrize("assignment, exercise", EXERCISES, ids=IDS)
def test_hidden_cases_are_reproducible_for_a_seed(assignment, exercise):
    first = draw(assignment, exercise, 1234)
    assert first, "an exercise without hidden cases"
    assert same_cases(first, draw(assignment, exercise, 1234))
    assert not same_cases(first, draw(assignment, exercise, 4321)), "another seed must draw other cases"


def test_the_case_comparison_can_tell_cases_apart():
    first = draw("broadcasting", "batch_outer", 1)
    changed = list(first)
    changed[0] = type(first[0])(first[0].label, tuple(a + 1 for a in first[0].args))
    assert same_cases(first, list(first)) and not same_cases(first, changed)


@cache
def verdicts(assignment: str, kind: str) -> dict:
    a = COURSE[assignment]
    if kind == "wrong":
        cy = next(p for p in load_roster(KIT_ROOT, a) if p.student == "cy")
        answers = {ex.name: cy.answers(ex) for ex in a.exercises}
        cells = [("preamble", a.preamble)] + [(f"your `{name}` cell", src) for name, src in answers.items() if src]
    else:
        cells = {"stub": stub_program, "loop": loop_program}[kind](a)
    return grade_submission(a, cells, seed=0)


@pytest.mark.parametrize("assignment, exercise", EXERCISES, ids=IDS)
def test_the_stub_fails_correct(assignment, exercise):
    got = verdicts(assignment, "stub")[exercise]
    assert not got["correct"].passed and not got["vectorized"].passed and not got["fast"].passed


@pytest.mark.timing
@pytest.mark.parametrize("assignment, exercise", EXERCISES, ids=IDS)
def test_the_loop_is_correct_but_neither_vectorized_nor_fast(assignment, exercise):
    got = verdicts(assignment, "loop")[exercise]
    assert got["correct"].passed, got["correct"].message
    assert not got["vectorized"].passed, "the loop version passes vectorized"
    assert not got["fast"].passed, got["fast"].message


@pytest.mark.parametrize("assignment, exercise", EXERCISES, ids=IDS)
def test_the_demo_wrong_answer_fails_correct(assignment, exercise):
    got = verdicts(assignment, "wrong")[exercise]
    assert not got["correct"].passed, f"the demo's wrong {exercise} passes: {got['correct'].message}"
