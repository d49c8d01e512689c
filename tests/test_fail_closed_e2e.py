"""Through nbgrader: without confinement, grading refuses to run unless the sandbox was turned off on purpose."""
import nbformat
import pytest

from graders import KIT_ROOT
from graders.course.grade import grade_class
from graders.course.personas import load_roster
from graders.engine.startup import JailUnusable
from graders.sandbox import policy

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e  # nbgrader autograde on a generated course


@pytest.fixture
def course_without_unshare(tmp_path, broadcasting, monkeypatch):
    course = generated_course(tmp_path / "course", broadcasting)
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    ada = load_roster(KIT_ROOT, broadcasting)[0]
    dest = course.root / "submitted" / ada.student / "broadcasting" / "broadcasting.ipynb"
    dest.parent.mkdir(parents=True)
    nbformat.write(ada.notebook(release, broadcasting), dest)
    empty = tmp_path / "bin"
    empty.mkdir()
    policy._namespaces_work.cache_clear()
    monkeypatch.setenv("PATH", str(empty))  # util-linux's unshare is not on it
    yield course, ada.student
    policy._namespaces_work.cache_clear()


def test_grading_refuses_when_unshare_is_missing(course_without_unshare):
    course, student = course_without_unshare
    with pytest.raises(JailUnusable, match="unshare"):  # before any submission: one line, nothing graded
        grade_class(course, "broadcasting", [student])
    assert student not in course.part_scores(course.assignments["broadcasting"])  # no points, no grade rows


def test_only_an_explicit_choice_grades_unconfined(course_without_unshare):
    course, student = course_without_unshare
    [result] = grade_class(course, "broadcasting", [student], confined=False)  # Sandbox.enabled = False
    assert result.success, result.reason
    scores = course.part_scores(course.assignments["broadcasting"])[student]
    assert sum(scores.values()) > 0
