"""Issue 8, "An honest class": ordinary habits cost no mark on an exercise whose function does not reach them.

Seventeen students (tests/honest_class.py), every answer correct and vectorized, each with one habit, are
graded end to end through nbgrader's autograde (NbGraderAPI.autograde, the course's config) on ``broadcasting``. The marks asserted are exact: full
everywhere, except the exercise a student left unfinished (a syntax error, a NameError), which earns 0.
"""
from dataclasses import dataclass

import nbformat
import pytest
from honest_class import CELL_TIMEOUT_S, SLOW_SLEEP_S, roster

from graders.course.demo import deserved_marks, submit_class
from graders.course.marks import exercise_marks
from graders.model.exercise import PARTS

from tests.testkit import make_demo_class

pytestmark = pytest.mark.e2e

ASSIGNMENT = "broadcasting"


@dataclass
class Result:
    student: str
    success: bool
    reason: str


def verdict_message(course, student: str, grade_id: str) -> str:
    """What the autograded notebook says under one grade cell: the verdict a teacher would read."""
    path = course.root / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    if not path.exists():
        return f"(no autograded notebook for {student})"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            texts = [o.get("text", "") or "".join(str(v) for v in o.get("data", {}).values())
                     or f"{o.get('ename', '')}: {o.get('evalue', '')}" for o in cell.get("outputs", [])]
            return " | ".join(t.strip() for t in texts if t.strip())[:600]
    return f"(no cell {grade_id})"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    people = roster()
    # a small per-cell budget so the slow experiment is cut off cheaply; it sleeps far beyond it
    assert SLOW_SLEEP_S > 10 * CELL_TIMEOUT_S
    config = f"c.ResilientExecute.timeout = {CELL_TIMEOUT_S}"
    course, _ = make_demo_class(tmp_path_factory.mktemp("honest") / "course", ASSIGNMENT, extra_config=config)
    students = submit_class(course, ASSIGNMENT, people)
    # nbgrader's own autograde with the course's config (TrustedVerdicts and all), one student at a time
    results = []
    with course.api() as api:
        for student in students:
            result = api.autograde(ASSIGNMENT, student, force=True, create=True)
            results.append(Result(student, bool(result.get("success")), str(result.get("error") or "")[-600:]))
    return course, people, results


def test_the_class_is_large_and_honest():
    people = roster()
    assert len(people) >= 15
    assert len({p.student for p in people}) == len(people)


def test_every_notebook_is_graded(graded):
    course, people, results = graded
    assert sorted(r.student for r in results) == sorted(p.student for p in people)
    assert all(r.success for r in results), [(r.student, r.reason) for r in results if not r.success]


def test_exact_marks_for_every_student_and_part(graded):
    course, people, _ = graded
    assignment = course.assignments[ASSIGNMENT]
    scores = course.part_scores(assignment)
    wrong = []
    for persona in people:
        got = scores.get(persona.student, {})
        for ex in assignment.exercises:
            have, deserve = exercise_marks(ex, got), deserved_marks(ex, persona)
            for part, h, d in zip(PARTS, have, deserve, strict=True):
                if h != d:
                    wrong.append(f"{persona.student} ({persona.about}) {ex.name} {part}: got {h}, deserves {d}; "
                                 f"verdict: {verdict_message(course, persona.student, ex.grade_id(part))}")
    assert not wrong, "\n".join(wrong)


def test_the_unfinished_exercises_really_score_nothing(graded):
    """The other direction: the broken exercise is not waved through with the rest of the notebook."""
    course, _, _ = graded
    scores = course.part_scores(course.assignments[ASSIGNMENT])
    for student, exercise in (("syd", "standardize_columns"), ("nat", "softmax_rows")):
        assert all(scores[student][f"{exercise}_{p}"] == 0.0 for p in PARTS), (student, scores[student])
