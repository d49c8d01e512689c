"""The coordinator's small parts, without nbgrader runs: whom it grades, where it records, what it puts back."""
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from graders.course.grade import UNGRADED, SubmissionResult, record_ungraded, ungraded
from graders.coursedir.course import Course
from graders.model.csvsafe import read_rows, write_rows
from graders.pipeline.precomputed import PrecomputedMissing, PutBackPrecomputed, notebook_key, result_path


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


def _nb(source="x = 1", grade_id="ex1"):
    cell = new_code_cell(source, metadata={"nbgrader": {"grade": True, "grade_id": grade_id, "points": 1}})
    return new_notebook(cells=[cell])


def test_the_key_follows_sources_and_nbgrader_metadata_not_outputs():
    nb = _nb()
    key = notebook_key(nb)
    with_output = _nb()
    with_output.cells[0].outputs = [new_output("stream", name="stdout", text="hi\n")]
    assert notebook_key(with_output) == key
    assert notebook_key(_nb(source="x = 2")) != key
    assert notebook_key(_nb(grade_id="ex2")) != key


def test_put_back_uses_the_result_for_this_notebook_and_student_and_refuses_any_other(tmp_path):
    graded = _nb()
    graded.cells[0].outputs = [new_output("stream", name="stdout", text="correct: passed.\n")]
    path = result_path(str(tmp_path), "ada", notebook_key(graded))
    path.parent.mkdir()
    nbformat.write(graded, path)
    step = PutBackPrecomputed(results_dir=str(tmp_path))
    ada, bob = ({"unique_key": "broadcasting", "nbgrader": {"student": s}} for s in ("ada", "bob"))
    out, _ = step.preprocess(_nb(), ada)
    assert out.cells[0].outputs[0].text == "correct: passed.\n"
    with pytest.raises(PrecomputedMissing, match="broadcasting.ipynb"):
        step.preprocess(_nb(source="x = 2"), ada)  # another version of the notebook
    with pytest.raises(PrecomputedMissing, match="broadcasting.ipynb"):
        step.preprocess(_nb(), bob)  # the same notebook, another student's: never ada's result


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
