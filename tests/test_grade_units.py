"""The coordinator's small parts, without nbgrader runs: whom it grades, where it records, how a verdict scores."""
import logging

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from graders.course.grade import UNGRADED, SubmissionResult, record_ungraded, ungraded
from graders.coursedir.course import Course
from graders.model.csvsafe import read_rows, write_rows
from graders.model.verdict import Reason, failed, passed
from graders.pipeline.intake import graded_path
from graders.pipeline.verdicts import TrustedVerdicts, cell_score


@pytest.fixture
def course(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    for student in ("ada", "bob"):
        (tmp_path / "submitted" / student / "broadcasting").mkdir(parents=True)
    (tmp_path / "submitted" / "cy" / "einops").mkdir(parents=True)
    return Course(tmp_path)


def test_submitted_students_are_the_students_not_the_assignment(course):
    assert course.submitted_students("broadcasting") == ["ada", "bob"]
    assert course.submitted_students("einops") == ["cy"]
    assert course.submitted_students("nosuch") == []


def test_db_url_is_sqlite_in_the_course_unless_the_config_says_otherwise(course):
    assert course.db_url == f"sqlite:///{course.root / 'gradebook.db'}"
    (course.root / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.db_url = 'postgresql+psycopg2://u@h:5432/db'\n")
    assert course.db_url == "postgresql+psycopg2://u@h:5432/db"


def _cell(verdict=None, output="stream", points=2):
    cell = new_code_cell("check()", metadata={"nbgrader": {"grade": True, "grade_id": "ex_fast", "points": points}})
    cell.outputs = [new_output("stream", name="stdout", text="ok\n") if output == "stream" else
                    new_output("error", ename="TooSlow", evalue="slow", traceback=[])]
    if verdict is not None:
        cell.metadata["vecgrade"] = verdict.to_json()
    return nbformat.from_dict(cell)


def test_a_vecgrade_part_is_scored_from_its_verdict_never_from_its_outputs_type():
    log = logging.getLogger("test")
    # a failed verdict whose output looks like a pass scores 0; a passed one whose output is an error scores
    assert cell_score(_cell(failed("fast", Reason.TOO_SLOW, "slow"), output="stream"), log) == 0.0
    assert cell_score(_cell(passed("fast", "ok"), output="error"), log) == 2.0
    # a grade cell with no verdict is scored as nbgrader scores it: by its output
    assert cell_score(_cell(None, output="stream"), log) == 2.0
    assert cell_score(_cell(None, output="error"), log) == 0.0


def test_a_verdict_a_student_wrote_into_a_cells_metadata_is_removed_before_grading(tmp_path):
    nb = new_notebook(cells=[_cell(passed("fast", "ok"), output="error")])
    step = TrustedVerdicts(assignments_dir=str(tmp_path))  # no definitions there: the cells are left to nbgrader
    out, _ = step.preprocess(nb, {"nbgrader": {"assignment": "broadcasting", "student": "mallory"}})
    assert "vecgrade" not in out.cells[0].metadata
    assert cell_score(out.cells[0], logging.getLogger("test")) == 0.0  # its error output, as nbgrader scores it


def test_each_students_graded_notebook_has_a_place_of_its_own_inside_the_folder(tmp_path):
    ada, bob = graded_path(tmp_path, "ada", "broadcasting"), graded_path(tmp_path, "bob", "broadcasting")
    assert ada != bob and ada.name == bob.name == "broadcasting.ipynb"
    assert graded_path(tmp_path, "../../etc", "broadcasting").resolve().parent.parent == tmp_path.resolve()


def test_an_ungraded_row_counts_only_while_its_submission_is_there(course):
    write_rows(course.root / UNGRADED, ["student", "assignment", "reason"],
               [{"student": "ada", "assignment": "broadcasting", "reason": "NoNotebookError: no notebook"},
                {"student": "zed", "assignment": "broadcasting", "reason": "NoNotebookError: no notebook"},
                {"student": "cy", "assignment": "einops", "reason": "EmptyNotebookError: no cells"}])
    assert ungraded(course, "broadcasting") == {"ada": "NoNotebookError: no notebook"}  # zed's folder is gone
    assert ungraded(course, "einops") == {"cy": "EmptyNotebookError: no cells"}
    record_ungraded(course, "broadcasting", [SubmissionResult("bob", False, 0.0, "NotANotebookError: not JSON")])
    kept = {(r["student"], r["assignment"]) for r in read_rows(course.root / UNGRADED)}
    assert kept == {("ada", "broadcasting"), ("bob", "broadcasting"), ("cy", "einops")}  # zed's row is dropped
