"""The formgrader's pages, as vecgrade's wrappers of nbgrader's API give them (graders/course/formgrader.py)."""
import pytest
from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI
from nbgrader.coursedir import CourseDirectory

from graders.course import formgrader
from graders.course.formgrader import NO_NAME
from graders.model.csvsafe import write_rows

A = "a1"


@pytest.fixture
def api(tmp_path):
    """A course: ada graded (no names in the gradebook), bob and carol (Carol Jones) submitted and not graded."""
    (tmp_path / "nbgrader_config.py").write_text("")
    for student in ("ada", "bob", "carol"):
        (tmp_path / "submitted" / student / A).mkdir(parents=True)
    (tmp_path / "autograded" / "ada" / A).mkdir(parents=True)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment(A)
        gb.add_student("ada")
        gb.add_student("carol", first_name="Carol", last_name="Jones")
        gb.add_submission(A, "ada")
    write_rows(tmp_path / "ungraded.csv", ["student", "assignment", "code", "reason"],
               [{"student": s, "assignment": A, "code": "refused", "reason": f"EmptyNotebookError for {s}"}
                for s in ("bob", "carol")])
    formgrader.install()
    return NbGraderAPI(coursedir=CourseDirectory(root=str(tmp_path), db_url=url))


def test_an_ungraded_submission_gives_its_reason_once_on_the_list_and_alone(api):
    listed = {s["student"]: s for s in api.get_submissions(A)}
    for student in ("bob", "carol"):
        shown = listed[student]["display_timestamp"]
        assert shown.count("not graded: ") == 1 and shown.count(f"EmptyNotebookError for {student}") == 1, shown
        assert api.get_submission(A, student)["display_timestamp"] == shown
    assert "not graded" not in (listed["ada"]["display_timestamp"] or "")  # control: graded, no reason


def test_a_student_without_names_is_shown_by_id_and_names_stay_as_they_are(api):
    listed = {s["student"]: s for s in api.get_submissions(A)}
    assert (listed["ada"]["last_name"], listed["ada"]["first_name"]) == ("ada", NO_NAME)  # graded
    assert (listed["bob"]["last_name"], listed["bob"]["first_name"]) == ("bob", NO_NAME)  # not in the gradebook
    assert (listed["carol"]["last_name"], listed["carol"]["first_name"]) == ("Jones", "Carol")  # control
    assert api.get_submission(A, "ada")["last_name"] == "ada"
    with Gradebook(api.coursedir.db_url) as gb:
        assert gb.find_student("ada").last_name is None  # for display only: the gradebook keeps no stand-in
