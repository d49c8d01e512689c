"""Every grade that leaves the course is the one nbgrader holds: its late penalty and manual grades included.

A course set up as nbgrader's docs ("Late submission plugin") say: a ``late.py`` beside ``nbgrader_config.py`` with
their ``SubMarks`` (one point per hour late) and ``c.AssignLatePenalties.plugin_class = 'late.SubMarks'``, an
assignment due in the past. The gradebook is made with nbgrader's API, and nbgrader's own ``AssignLatePenalties``
(the step ``nbgrader autograde`` runs last) assigns the penalties. nbgrader's ``CsvExportPlugin`` (what ``nbgrader
export`` runs) is the truth every vecgrade output is held to: the report (table, CSV, HTML), ``vecgrade export`` as
parts, Canvas and Moodle. A course without the plugin is the control: no penalty, the totals are the parts' sum.
"""
import csv
import datetime
import sys
from pathlib import Path

import pytest
from nbformat.v4 import new_notebook
from nbgrader.api import Gradebook
from nbgrader.plugins.export import CsvExportPlugin
from nbgrader.preprocessors import AssignLatePenalties
from typer.testing import CliRunner

from graders.cli import app
from graders.course.demo import make_course
from graders.course.results import max_points

runner = CliRunner()
A = "broadcasting"
DUE = datetime.datetime(2025, 1, 31, 12, 0)
LATE_PLUGIN = '''from __future__ import division
from nbgrader.plugins import BasePlugin


class SubMarks(BasePlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        """Penalty of 1 mark per hour late"""
        hours_late = total_seconds_late / 3600
        return round(hours_late, 0)
'''
# student: (hours after the due date (None: on time), a part graded by hand)
CLASS = {"ada": (None, False), "bob": (2.4, False), "cy": (40.0, False), "dee": (3.0, True)}


def vecgrade(*args):
    return runner.invoke(app, [str(a) for a in args])


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _course(root: Path, plugin: bool):
    course = make_course(root)
    if plugin:
        (course.root / "late.py").write_text(LATE_PLUGIN)
        with open(course.root / "nbgrader_config.py", "a") as f:
            f.write("\nc.AssignLatePenalties.plugin_class = 'late.SubMarks'\n")
    points = max_points(course.assignments[A])
    with course.api(), Gradebook(course.db_url) as gb:
        gb.add_assignment(A, duedate=DUE)
        gb.add_notebook(A, A)
        for gid, p in points.items():
            gb.add_grade_cell(gid, A, A, max_score=p, cell_type="code")
        for i, (student, (hours, by_hand)) in enumerate(CLASS.items()):
            gb.add_student(student, first_name=student.title(), last_name="Ng", email=f"{student}@uni.example")
            stamp = DUE + datetime.timedelta(hours=hours) if hours else DUE - datetime.timedelta(hours=1)
            gb.add_submission(A, student, timestamp=stamp)
            for j, (gid, p) in enumerate(points.items()):
                gb.find_grade(gid, A, A, student).auto_score = 0.0 if (i + j) % 5 == 0 else p
            if by_hand:
                first = gb.find_grade(next(iter(points)), A, A, student)
                first.manual_score, first.extra_credit = 1.5, 0.5
            gb.db.commit()
    # nbgrader's own step assigns the penalties, configured by the course's nbgrader_config.py
    sys.path.insert(0, str(course.root))
    try:
        with course.inside():
            for student in CLASS:
                step = AssignLatePenalties(config=course.config())
                step.preprocess(new_notebook(), {"nbgrader": {"notebook": A, "assignment": A, "student": student,
                                                              "db_url": course.db_url}})
    finally:
        sys.path.remove(str(course.root))
        sys.modules.pop("late", None)
    return course


@pytest.fixture(scope="module", params=[True, False], ids=["late-plugin", "no-plugin"])
def course(request, tmp_path_factory):
    return _course(tmp_path_factory.mktemp("late") / "course", request.param), request.param


def _truth(course, tmp_path) -> dict[str, dict[str, str]]:
    """nbgrader's export, by student: raw_score, late_submission_penalty, score."""
    dest = tmp_path / "nbgrader.csv"
    with course.inside(), Gradebook(course.db_url) as gb:
        CsvExportPlugin(to=str(dest)).export(gb)
    return {r["student_id"]: r for r in read_csv(dest) if r["assignment"] == A}


def test_the_gradebook_holds_the_documented_penalties(course, tmp_path):
    course, plugin = course
    truth = _truth(course, tmp_path)
    penalties = {s: float(r["late_submission_penalty"]) for s, r in truth.items()}
    if plugin:  # 2.4 h: 2 points; 40 h: more than the score, so nbgrader takes the score; 3 h: 3 points
        assert penalties["ada"] == 0 and penalties["bob"] == 2 and penalties["dee"] == 3
        assert penalties["cy"] == float(truth["cy"]["raw_score"]) > 0 and float(truth["cy"]["score"]) == 0
    else:
        assert set(penalties.values()) == {0.0}


def test_every_export_gives_nbgraders_total_and_shows_the_penalty(course, tmp_path):
    course, plugin = course
    truth = _truth(course, tmp_path)
    with Gradebook(course.db_url) as gb:
        expected = {}
        for s in CLASS:
            sub = gb.find_submission(A, s)
            expected[s] = max(0.0, sub.score - sub.late_submission_penalty)
            assert expected[s] == pytest.approx(float(truth[s]["score"]))
    penalty = {s: float(truth[s]["late_submission_penalty"]) for s in CLASS}

    parts = tmp_path / "grades.csv"
    assert vecgrade("export", "-c", course.root, "--to", parts).exit_code == 0
    rows = {r["student_id"]: r for r in read_csv(parts)}
    for s in CLASS:
        assert float(rows[s][f"{A} total"]) == pytest.approx(expected[s]), s
        assert float(rows[s][f"{A} late penalty"]) == pytest.approx(penalty[s]), s
        assert float(rows[s][f"{A} score"]) == pytest.approx(float(truth[s]["raw_score"])), s
    by_hand = max_points(course.assignments[A])
    assert rows["dee"][f"{A} graded by hand"] == next(iter(by_hand)) and rows["ada"][f"{A} graded by hand"] == ""

    report_csv, report_html = tmp_path / "parts.csv", tmp_path / "report.html"
    result = vecgrade("report", A, "-c", course.root, "--csv", report_csv, "--html", report_html)
    assert result.exit_code == 0, result.output
    table = {r["student"]: r for r in read_csv(report_csv)}
    for s in CLASS:
        assert float(table[s]["total"]) == pytest.approx(expected[s]), s
        assert float(table[s]["late penalty"]) == pytest.approx(penalty[s]), s
    page = report_html.read_text()
    assert "late penalty" in page and "2025-01-31 12:00 UTC" in page
    if plugin:
        assert ">-2</td>" in page and ">-3</td>" in page  # bob's and dee's penalties, shown as taken
    assert "1.5*" in page or "2*" in page  # dee's part graded by hand is flagged

    for form, key in (("canvas", "SIS Login ID"), ("moodle", "Username")):
        dest = tmp_path / f"{form}.csv"
        result = vecgrade("export", "-c", course.root, "--format", form, "--to", dest)
        assert result.exit_code == 0, result.output
        lms = {r[key]: r for r in read_csv(dest) if r[key]}
        for s in CLASS:
            assert float(lms[s][A]) == pytest.approx(expected[s]), (form, s)


def test_without_a_penalty_the_total_is_the_sum_of_the_parts(course, tmp_path):
    course, plugin = course
    if plugin:
        pytest.skip("the control course only")
    parts = tmp_path / "grades.csv"
    assert vecgrade("export", "-c", course.root, "--to", parts).exit_code == 0
    ids = list(max_points(course.assignments[A]))
    for r in read_csv(parts)[1:]:
        assert float(r[f"{A} total"]) == pytest.approx(sum(float(r[f"{A}/{g}"]) for g in ids))
        assert r[f"{A} late penalty"] == "0"


def test_the_course_page_shows_each_total_with_its_penalty_and_links_the_feedback(course, tmp_path):
    course, plugin = course
    truth = _truth(course, tmp_path)
    page = course.paths.feedback_page(A, "dee")
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("<html>dee's feedback</html>")
    try:
        dest = tmp_path / "course.html"
        result = vecgrade("report", "-c", course.root, "--html", dest)
        assert result.exit_code == 0, result.output
        html = dest.read_text()
        for s in CLASS:
            assert f"{float(truth[s]['score']):g}" in html, s
        assert 'class="feedback" href="' in html and "dee" in html
        href = html.split('class="feedback" href="')[1].split('"')[0]
        assert (dest.parent / href).resolve() == page.resolve()  # the link opens dee's page
        bob = f"{float(truth['bob']['score']):g}"
        assert (f"{bob} (late -2)" in html) == plugin  # the penalty beside the total, only where one was taken
        assert "2025-01-31 12:00 UTC" in html
        assert "*" in html  # dee's part graded by hand
        assert vecgrade("report", "-c", course.root, "--csv", tmp_path / "x.csv").exit_code == 2  # one line: use export
    finally:
        page.unlink()
