"""The course-wide report (``vecgrade report --html`` without an assignment) in Chromium: every assignment's totals as
nbgrader's gradebook holds them, the late penalty beside the total, a part graded by hand flagged, and a total's link
opening that student's feedback page.

The gradebook is made with nbgrader's API (two assignments with due dates, four students, one part graded by hand
with extra credit), the penalties assigned by nbgrader's own ``AssignLatePenalties`` under the late-submission plugin
its docs show (``late.py``'s ``SubMarks``, one point per hour late). The expected cells are computed here from the
gradebook (``score - late_submission_penalty``, as ``nbgrader export``), never from vecgrade's code.
"""
from __future__ import annotations

import datetime
import sys

import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook
from nbgrader.preprocessors import AssignLatePenalties
from typer.testing import CliRunner

from graders.cli import app
from graders.course.demo import make_course
from graders.model.catalogue import max_points

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

LATE_PLUGIN = '''from nbgrader.plugins import BasePlugin


class SubMarks(BasePlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        """Penalty of 1 mark per hour late"""
        hours_late = total_seconds_late / 3600
        return round(hours_late, 0)
'''
DUE = {"broadcasting": datetime.datetime(2026, 2, 1, 12, 0), "strides": datetime.datetime(2026, 3, 1, 12, 0)}
# assignment -> student -> hours after the due date (None: before it)
HANDED_IN = {"broadcasting": {"ada": None, "bob": 2.4, "cy": 40.0, "dee": None},
             "strides": {"ada": 3.0, "bob": None}}
BY_HAND = ("broadcasting", "dee")  # its first part graded by hand, with extra credit
NO_PAGE = ("broadcasting", "cy")   # graded, but no feedback page written yet: no link


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("course-report") / "course")
    (course.root / "late.py").write_text(LATE_PLUGIN)
    with open(course.root / "nbgrader_config.py", "a") as f:
        f.write("\nc.AssignLatePenalties.plugin_class = 'late.SubMarks'\n")
    with course.api(), Gradebook(course.db_url) as gb:
        for name, people in HANDED_IN.items():
            points = max_points(course.catalogue[name])
            gb.add_assignment(name, duedate=DUE[name])
            gb.add_notebook(name, name)
            for gid, p in points.items():
                gb.add_grade_cell(gid, name, name, max_score=p, cell_type="code")
            for i, (student, hours) in enumerate(people.items()):
                gb.update_or_create_student(student, first_name=student.title(), last_name="Ng")
                late = datetime.timedelta(hours=hours if hours is not None else -1)
                gb.add_submission(name, student, timestamp=DUE[name] + late)
                for j, (gid, p) in enumerate(points.items()):
                    gb.find_grade(gid, name, name, student).auto_score = 0.0 if (i + j) % 4 == 0 else p
                if (name, student) == BY_HAND:
                    first = gb.find_grade(next(iter(points)), name, name, student)
                    first.manual_score, first.extra_credit = 1.5, 0.5
                gb.db.commit()
    sys.path.insert(0, str(course.root))  # nbgrader's own step assigns the penalties, as autograde's last step
    try:
        with course.inside():
            for name, people in HANDED_IN.items():
                for student in people:
                    AssignLatePenalties(config=course.config()).preprocess(new_notebook(), {"nbgrader": {
                        "notebook": name, "assignment": name, "student": student, "db_url": course.db_url}})
    finally:
        sys.path.remove(str(course.root))
        sys.modules.pop("late", None)
    for name, people in HANDED_IN.items():
        for student in people:
            if (name, student) != NO_PAGE:
                page = course.paths.feedback_page(name, student)
                page.parent.mkdir(parents=True, exist_ok=True)
                page.write_text(f"<html><body><h1>feedback of {student} on {name}</h1></body></html>")
    return course


def expected(course) -> dict[tuple[str, str], tuple[float, float, bool]]:
    """{(assignment, student): (nbgrader's total, its penalty, a part graded by hand)} from the gradebook."""
    out = {}
    with Gradebook(course.db_url) as gb:
        for name, people in HANDED_IN.items():
            for student in people:
                sub = gb.find_submission(name, student)
                by_hand = any(g.manual_score is not None or g.extra_credit for nb in sub.notebooks for g in nb.grades)
                out[name, student] = (max(0.0, sub.score - sub.late_submission_penalty), sub.late_submission_penalty,
                                      by_hand)
    return out


def test_the_course_report_shows_every_total_with_its_penalty_and_opens_the_students_page(page, course, tmp_path):
    truth = expected(course)
    assert truth["broadcasting", "bob"][1] == 2 and truth["strides", "ada"][1] == 3  # control: penalties taken
    assert truth["broadcasting", "cy"][0] == 0 < truth["broadcasting", "cy"][1]      # more than the score: all of it
    dest = tmp_path / "report" / "course.html"
    dest.parent.mkdir()
    result = CliRunner().invoke(app, ["report", "-c", str(course.root), "--html", str(dest)])
    assert result.exit_code == 0, result.output
    page.goto(dest.as_uri())

    summary = page.locator("table.assignments tr")
    assert summary.count() == 1 + len(HANDED_IN)
    for i, name in enumerate(HANDED_IN, start=1):
        cells = summary.nth(i).locator("td").all_inner_texts()
        people = HANDED_IN[name]
        assert cells[0] == name and cells[1] == DUE[name].strftime("%Y-%m-%d %H:%M UTC"), cells
        assert int(cells[3]) == len(people)
        assert int(cells[6]) == sum(1 for s in people if truth[name, s][1] > 0)   # late penalties
        assert int(cells[7]) == sum(1 for s in people if truth[name, s][2])       # graded by hand

    header = page.locator("table.course tr").first.locator("th").all_inner_texts()
    assert header == ["student", *HANDED_IN, "total", "of"]
    students = sorted({s for people in HANDED_IN.values() for s in people})
    rows = page.locator("table.course tr")
    assert rows.count() == 1 + len(students)
    for r, student in enumerate(students, start=1):
        cells = rows.nth(r).locator("td")
        texts = cells.all_inner_texts()
        assert texts[0] == student
        for c, name in enumerate(HANDED_IN, start=1):
            if (name, student) not in truth:
                assert texts[c] == "" and cells.nth(c).locator("a").count() == 0, (name, student)  # not submitted
                continue
            total, penalty, by_hand = truth[name, student]
            shown = f"{total:g}" + (f" (late -{penalty:g})" if penalty else "") + ("*" if by_hand else "")
            assert texts[c] == shown, (name, student, texts[c])
            assert ("late" in (cells.nth(c).get_attribute("class") or "")) == (penalty > 0)
            assert cells.nth(c).locator("a.feedback").count() == (0 if (name, student) == NO_PAGE else 1)
        assert float(texts[-2]) == pytest.approx(sum(truth[n, student][0] for n in HANDED_IN if (n, student) in truth))

    # bob's broadcasting total opens bob's page on broadcasting, not another student's or assignment's
    bob = rows.nth(students.index("bob") + 1).locator("td").nth(1).locator("a.feedback")
    bob.click()
    page.wait_for_load_state()
    assert page.url == course.paths.feedback_page("broadcasting", "bob").resolve().as_uri()
    assert page.locator("h1").inner_text() == "feedback of bob on broadcasting"
