"""The self-check and the grader agree: Validate fails where a part would fail, and passes a correct notebook.

The same submissions of ``broadcasting`` go through ``nbgrader validate`` (nbgrader's
``Validator``, which runs the grade cells, and so the self-check, in a kernel) and
through ``nbgrader autograde`` (the trusted verdicts). On each part the visible
examples can decide (correct, vectorized, and fast while it is gated on correct),
both reach the same verdict.
"""
import re
import shutil

import nbformat
import pytest
from nbgrader.validator import Validator

from graders.course.grade import grade_class
from graders.model.exercise import PARTS
from graders.model.notebook import answer_id

pytestmark = pytest.mark.e2e

HELPER_CELL = ("def outer_rows(a):  # right on every input, empty batches included, but it iterates\n"
               "    return torch.cat([a.new_empty(0, a.shape[1], a.shape[1])]\n"
               "                     + list(map(lambda r: (r[:, None] * r[None, :])[None], a)))\n")
WRONG_OUTER = "def batch_outer(a):\n    return a[:, None, :] * a[:, None, :]\n"


def loop_answer(ex) -> str:
    return ex.loop_source().replace(f"def {ex.loop_name}(", f"def {ex.name}(")


def submissions(assignment) -> dict[str, dict]:
    """student -> {"answers": {exercise: source}, "before": {exercise: extra cell before its answer}}."""
    reference = {ex.name: ex.reference_source() for ex in assignment.exercises}
    return {
        "stub": {"answers": {}, "before": {}},
        "loops": {"answers": {ex.name: loop_answer(ex) for ex in assignment.exercises}, "before": {}},
        "correct": {"answers": reference, "before": {}},
        "helper": {"answers": {**reference, "batch_outer": "def batch_outer(a):\n    return outer_rows(a)\n"},
                   "before": {"batch_outer": HELPER_CELL}},
        "wrong": {"answers": {**reference, "batch_outer": WRONG_OUTER}, "before": {}},
    }


def submission_notebook(release, assignment, answers, before):
    nb = nbformat.from_dict(nbformat.reads(nbformat.writes(release), as_version=4))
    cells = []
    for cell in nb.cells:
        name = next((ex.name for ex in assignment.exercises
                     if cell.metadata.get("nbgrader", {}).get("grade_id") == answer_id(ex.name)), None)
        if name in before:
            cells.append(nbformat.v4.new_code_cell(before[name]))
        if name in answers:
            cell.source = answers[name]
        cells.append(cell)
    nb.cells = cells
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from graders.model.exercise import load_assignment

    from tests.testkit import ROOT, generated_course
    assignment = load_assignment(ROOT / "assignments" / "broadcasting.py")
    course = generated_course(tmp_path_factory.mktemp("parity") / "course", assignment)
    release_dir = course.root / "release" / "broadcasting"
    release = nbformat.read(release_dir / "broadcasting.ipynb", as_version=4)
    for student, sub in submissions(assignment).items():
        folder = course.root / "submitted" / student / "broadcasting"
        shutil.copytree(release_dir, folder)
        nbformat.write(submission_notebook(release, assignment, sub["answers"], sub["before"]),
                       folder / "broadcasting.ipynb")
    return course, assignment


@pytest.fixture(scope="module")
def validated(course):
    """nbgrader's Validator (what `nbgrader validate` and JupyterLab's Validate run) on every submission."""
    course_dir, assignment = course
    return {student: Validator().validate(str(course_dir.root / "submitted" / student / "broadcasting" /
                                              "broadcasting.ipynb"))
            for student in submissions(assignment)}


def self_check_verdicts(validation: dict, assignment) -> dict[str, bool]:
    """{grade_id: passed}: a grade cell passes unless the Validator lists it as failed."""
    failed = {line for cell in validation.get("failed", []) for line in cell["source"].splitlines()}
    return {ex.grade_id(p): f"grade_part({ex.name!r}, {p!r})" not in failed
            for ex in assignment.exercises for p in PARTS}


@pytest.mark.parametrize("student", ["stub", "loops"])
def test_validate_fails_on_the_stub_and_on_loops(validated, student):
    results = validated[student]
    assert results.get("failed"), results
    errors = " ".join(f["raw_error"] for f in results["failed"])
    assert ("Incorrect" if student == "stub" else "NotVectorized") in errors


def test_validate_passes_a_correct_vectorized_notebook(validated):
    assert validated["correct"] == {}


@pytest.fixture(scope="module")
def grader_scores(course):
    course_dir, assignment = course
    students = list(submissions(assignment))
    results = grade_class(course_dir, "broadcasting", students)
    assert all(r.success for r in results), [(r.student, r.reason) for r in results if not r.success]
    return course_dir.part_scores(assignment)


@pytest.mark.parametrize("student", ["stub", "loops", "correct", "helper", "wrong"])
def test_self_check_and_autograde_agree_on_every_part_the_examples_decide(course, validated, grader_scores, student):
    course_dir, assignment = course
    local = self_check_verdicts(validated[student], assignment)
    for ex in assignment.exercises:
        graded = {p: grader_scores[student][ex.grade_id(p)] == ex.points.of(p) for p in PARTS}
        mine = {p: local[ex.grade_id(p)] for p in PARTS}
        assert mine["correct"] == graded["correct"], (ex.name, mine, graded)
        assert mine["vectorized"] == graded["vectorized"], (ex.name, mine, graded)
        if not mine["fast"]:  # the self-check only fails "fast" while the answer is incorrect
            assert not graded["fast"], (ex.name, mine, graded)


@pytest.mark.parametrize("student", ["loops", "helper"])
def test_a_failed_vectorized_part_gives_the_graders_finding_and_line(course, validated, grader_scores, student):
    """Cells are numbered differently (notebook position vs. `In [N]`); the line in the cell and the reason agree."""
    course_dir, _ = course
    autograded = nbformat.read(course_dir.root / "autograded" / student / "broadcasting" / "broadcasting.ipynb",
                               as_version=4)
    graders_message = next(o.evalue for c in autograded.cells if c.cell_type == "code" for o in c.outputs
                           if c.metadata.get("nbgrader", {}).get("grade_id") == "batch_outer_vectorized")
    mine = next(f["raw_error"] for f in validated[student]["failed"]
                if "grade_part('batch_outer', 'vectorized')" in f["source"])
    finding = re.search(r", lines? [\d, ]+: [^;]+; [^;(]+", graders_message)  # lines, what, why of the first one
    assert finding and finding.group(0).rstrip() in mine, (graders_message, mine)
