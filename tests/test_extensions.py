"""``vecgrade extend`` (graders/course/extensions.py, graders/cli/extend.py): an extension before and after the
student's submission is in nbgrader's gradebook, kept when autograde later records the submission, and the
mistakes as one ``error:`` line."""
from __future__ import annotations

import datetime
import shutil

import pytest
from nbgrader.api import Gradebook, MissingEntry

from graders.course.extensions import ExtensionError, extensions, grant, is_placeholder
from graders.course.results import class_marks
from graders.coursedir.course import Course

from tests.testkit import generated_course
from tests.testkit.cli import assert_user_error, vecgrade

pytestmark = pytest.mark.e2e  # each test builds a course with nbgrader's apps

A = "broadcasting"
DUE = datetime.datetime(2026, 3, 1, 12, 0)


@pytest.fixture(scope="module")
def built(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("ext") / "course", broadcasting)
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment(A, duedate=DUE)
    return course


@pytest.fixture
def course(built, tmp_path) -> Course:
    shutil.copytree(built.root, tmp_path / "course", symlinks=True)
    return Course(tmp_path / "course")


def test_an_extension_before_the_submission_is_in_the_gradebook_survives_autograde(course, broadcasting):
    with Gradebook(course.db_url) as gb:
        with pytest.raises(MissingEntry):  # control: nbgrader's own call needs the submission first
            gb.grant_extension(A, "ada", hours=48)
        e = grant(gb, A, "ada", 48)
        assert e.hours == 48 and not e.graded and e.until == DUE + datetime.timedelta(hours=48)
        assert is_placeholder(gb.find_submission(A, "ada"))
        assert class_marks(gb, course, broadcasting) == []  # no graded 0 in report or export
        # what nbgrader's autograde does with the submission it grades, 30 hours late
        late = (DUE + datetime.timedelta(hours=30)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        gb.update_or_create_submission(A, "ada", timestamp=late)
        sub = gb.find_submission(A, "ada")
        assert sub.extension == datetime.timedelta(hours=48) and sub.total_seconds_late == 0
        assert not is_placeholder(sub)
        assert [r.student for r in class_marks(gb, course, broadcasting)] == ["ada"]
        assert [x.student for x in extensions(gb, A)] == ["ada"] and extensions(gb, A)[0].graded


def test_an_extension_after_the_submission_and_its_removal(course):
    late = (DUE + datetime.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student("bob")
        gb.update_or_create_submission(A, "bob", timestamp=late)
        assert gb.find_submission(A, "bob").total_seconds_late == 7200  # control
        grant(gb, A, "bob", 3)
        assert gb.find_submission(A, "bob").total_seconds_late == 0
        grant(gb, A, "bob", 0)
        assert gb.find_submission(A, "bob").total_seconds_late == 7200 and extensions(gb, A) == []
        grant(gb, A, "cy", 5)
        grant(gb, A, "cy", 0)  # a row made only for the extension goes with it
        with pytest.raises(MissingEntry):
            gb.find_submission(A, "cy")
        for hours in (-1, float("nan"), float("inf"), 10**6):
            with pytest.raises(ExtensionError):
                grant(gb, A, "bob", hours)
        gb.update_or_create_assignment(A, duedate=None)
        with pytest.raises(ExtensionError, match="no due date to extend"):  # nbgrader's autograde would fail
            grant(gb, A, "bob", 1)
        with pytest.raises(ExtensionError, match="generate_assignment"):
            grant(gb, A.replace("broad", "narrow"), "bob", 1)


def test_the_command_grants_lists_and_refuses_mistakes(course):
    root = course.root
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student("ada")
    done = vecgrade("extend", A, "ada", "--hours", "24", "-c", root)
    assert done.exit_code == 0, done.output
    assert "ada: +24 h, due 2026-03-02 12:00 UTC (the assignment: 2026-03-01 12:00 UTC)" in done.stdout
    listed = vecgrade("extend", A, "--list", "-c", root)
    assert listed.exit_code == 0 and "ada: +24 h" in listed.stdout
    assert_user_error(vecgrade("extend", A, "nobody", "--hours", "24", "-c", root), "no student 'nobody'",
                      "nbgrader db student add nobody")
    assert_user_error(vecgrade("extend", "nope", "ada", "--hours", "24", "-c", root), "no assignment 'nope'")
    assert_user_error(vecgrade("extend", A, "ada", "--hours", "-3", "-c", root), "--hours must be between 0")
    assert_user_error(vecgrade("extend", A, "ada", "-c", root), "--hours N")
    assert_user_error(vecgrade("extend", A, "-c", root), "--list")
    with Gradebook(course.db_url) as gb:
        assert [e.hours for e in extensions(gb, A)] == [24.0]  # the mistakes changed nothing


def test_a_refused_submission_drops_its_marks_but_keeps_the_extension(course, broadcasting):
    from graders.course.grade import _drop_ungraded_rows
    late = (DUE + datetime.timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    with Gradebook(course.db_url) as gb:
        for student in ("ada", "bob"):
            gb.update_or_create_student(student)
            gb.update_or_create_submission(A, student, timestamp=late)
        grant(gb, A, "ada", 24)
    _drop_ungraded_rows(course, A, ["ada", "bob"])  # what grading does with submissions it could not grade
    with Gradebook(course.db_url) as gb:
        with pytest.raises(MissingEntry):
            gb.find_submission(A, "bob")  # control: no extension, no row
        ada = gb.find_submission(A, "ada")
        assert is_placeholder(ada) and ada.extension == datetime.timedelta(hours=24)
        assert class_marks(gb, course, broadcasting) == []  # never a 0
