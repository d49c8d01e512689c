"""The novice loops the benchmarks grade (tests/novice_loops.py): correct, and caught by "vectorized" and "fast".

A novice's first answer, element by element (nested loops over every element, ``.item()``, Python lists), is what
``benchmarks/teacher_throughput.py`` puts in a quarter of its class and ``benchmarks/fast_calibration.py`` times
beside the bars: each must be a right answer (it earns "correct"), and a loop (it earns neither "vectorized" nor
"fast"), else the benchmarks would time something else than the class they claim.
"""
import pytest
from novice_loops import ASSIGNMENT, NOVICE, answer, distinct

from graders.checks.submission import grade_submission
from graders.model.exercise import load_course

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")


def test_every_exercise_has_a_novice_loop_and_every_student_writes_it_differently():
    assert set(NOVICE) == {ex.name for ex in COURSE[ASSIGNMENT].exercises}
    for name in NOVICE:
        texts = {distinct(answer(name), n) for n in range(40)}
        assert len(texts) == 40, name
        bodies = {distinct(answer(name), n).split("\n", 1)[1] for n in range(10)}  # the comment line aside
        assert len(bodies) == 10, name


@pytest.mark.e2e
def test_novice_loops_are_correct_and_fail_vectorized_and_fast():
    assignment = COURSE[ASSIGNMENT]
    program = [("preamble", assignment.preamble)] + [
        (f"your `{ex.name}` cell", distinct(answer(ex.name), 7)) for ex in assignment.exercises]
    verdicts = grade_submission(assignment, program, seed=3)
    assert set(verdicts) == set(NOVICE)
    for name, v in verdicts.items():
        assert v["correct"].passed, (name, v["correct"].message)
        assert not v["vectorized"].passed, (name, v["vectorized"].message)
        assert not v["fast"].passed, (name, v["fast"].message)
