"""Issue 27: never a silent 0, never lost marks. An accident of the run is `not_graded`: it writes no 0 and
replaces no earlier mark or file; `vecgrade grade` names the student, says why and exits 1; a jail that cannot run
torch under the configured limits is refused before any submission is touched, in one `error:` line."""
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from graders.course.grade import grade_class, ungraded
from graders.engine.coordinator import Engine
from graders.model.notebook import answer_id, grade_id_of
from graders.model.verdict import Reason
from graders.sandbox.session import WorkerFailure
from graders.sandbox.shell_session import ShellSession

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e
VECGRADE = str(Path(sys.executable).with_name("vecgrade"))
A = "broadcasting"


def _submit(course, student: str, nb) -> None:
    dest = course.root / "submitted" / student / A
    dest.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest / f"{A}.ipynb")


def _answered(course, assignment):
    nb = nbformat.read(course.root / "release" / A / f"{A}.ipynb", as_version=4)
    for cell in nb.cells:
        for ex in assignment.exercises:
            if grade_id_of(cell) == answer_id(ex.name):
                cell.source = ex.reference_source()
    return nb


@pytest.fixture
def graded(tmp_path, broadcasting):
    """ada, graded in full: the marks and files any later accident must leave as they are."""
    course = generated_course(tmp_path / "course", broadcasting)
    _submit(course, "ada", _answered(course, broadcasting))
    [first] = grade_class(course, A, ["ada"])
    assert first.success, first.reason
    marks = course.part_scores(broadcasting)["ada"]
    assert sum(v or 0 for v in marks.values()) > 0
    autograded = course.root / "autograded" / "ada" / A / f"{A}.ipynb"
    return course, marks, autograded.read_text()


def _unchanged(course, broadcasting, marks, autograded_text):
    assert course.part_scores(broadcasting)["ada"] == marks  # no 0 written, no row dropped
    assert (course.root / "autograded" / "ada" / A / f"{A}.ipynb").read_text() == autograded_text


def test_a_refused_resubmission_keeps_the_earlier_marks_and_files(graded, broadcasting):
    course, marks, autograded_text = graded
    _submit(course, "ada", nbformat.v4.new_notebook())  # an empty notebook: refused
    [result] = grade_class(course, A, ["ada"])
    assert not result.success and result.code is Reason.REFUSED, result
    assert "empty notebook" in result.reason
    _unchanged(course, broadcasting, marks, autograded_text)
    assert "empty notebook" in ungraded(course, A)["ada"]
    rows = (course.root / "ungraded.csv").read_text()
    assert "refused" in rows  # the reason code travels with the reason


def test_a_kernel_that_cannot_start_is_not_graded_and_writes_no_zero(graded, broadcasting, monkeypatch):
    course, marks, autograded_text = graded

    def cannot(self):
        raise WorkerFailure("the notebook's kernel could not start")

    # the kernel fails after the preflight passed (a machine that broke mid-run): the preflight itself refuses a
    # kernel that cannot start before any submission (test_a_memory_limit_below_torchs_is_refused...)
    monkeypatch.setattr(Engine, "preflight", lambda self: None)
    monkeypatch.setattr(ShellSession, "start", cannot)
    [result] = grade_class(course, A, ["ada"], jobs=1)  # in this process: the patched kernel is the one used
    assert not result.success and "kernel could not start" in result.reason, result
    _unchanged(course, broadcasting, marks, autograded_text)
    monkeypatch.undo()
    [again] = grade_class(course, A, ["ada"], jobs=1)  # control: the same submission, graded cleanly
    assert again.success, again.reason


def test_a_memory_limit_below_torchs_is_refused_before_grading_in_one_line(tmp_path, broadcasting):
    course = generated_course(tmp_path / "course", broadcasting, extra_config="c.Sandbox.memory_mb = 8")
    _submit(course, "ada", _answered(course, broadcasting))
    run = subprocess.run([VECGRADE, "grade", A, "-c", str(course.root), "--jobs", "1"], capture_output=True,
                         text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "c.Sandbox.memory_mb = 8" in lines[0], lines
    assert "Traceback" not in run.stderr + run.stdout
    assert "ada" not in course.part_scores(broadcasting)  # nothing graded, no 0


def test_the_command_names_each_student_not_graded_and_exits_1(graded, broadcasting):
    course, marks, autograded_text = graded
    _submit(course, "ada", nbformat.v4.new_notebook())
    run = subprocess.run([VECGRADE, "grade", A, "-c", str(course.root), "--jobs", "1"], capture_output=True,
                         text=True, timeout=300, env={**os.environ, "COLUMNS": "300"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "could not grade ada: EmptyNotebookError" in run.stdout and "graded 0 of 1" in run.stdout, run.stdout
    assert "ada,broadcasting,refused," in (course.root / "ungraded.csv").read_text()
    _unchanged(course, broadcasting, marks, autograded_text)
