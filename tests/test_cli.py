"""The instructor's commands: user errors get one line and exit 2; status, feedback, export and the HTML
report on a small graded class (three honest personas and one submission nbgrader cannot read).

An ungraded submission must never read as a 0 anywhere.
"""
import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from typer.testing import CliRunner

from graders import KIT_ROOT
from graders.cli import app
from graders.course.demo import make_course, submit_class
from graders.course.export import MAX_ROW
from graders.course.grade import grade_class
from graders.course.personas import load_roster
from graders.course.results import read_verdicts

from conftest import generated_course

runner = CliRunner()
CLASS = ("ada", "bob", "gus")  # vectorized / loops / untouched
BROKEN = "zed"                 # a file that is not a notebook: nbgrader cannot grade it


def vecgrade(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_user_error(result, *words):
    """Exit 2, one line on stderr naming the problem, no traceback."""
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A course that was never graded."""
    return make_course(tmp_path_factory.mktemp("fresh") / "course")


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("graded") / "course", broadcasting)
    people = [p for p in load_roster(KIT_ROOT, broadcasting) if p.student in CLASS]
    students = submit_class(course, "broadcasting", people)
    broken = course.root / "submitted" / BROKEN / "broadcasting" / "broadcasting.ipynb"
    broken.parent.mkdir(parents=True)
    broken.write_text("not a notebook")
    results = grade_class(course, "broadcasting", students + [BROKEN])
    assert [r.student for r in results if not r.success] == [BROKEN]
    with course.api() as api:
        assert api.generate_feedback("broadcasting")["success"]
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student("ada", first_name="Ada", last_name="Lovelace", email="ada@example.org")
    return course


# --- failing well: no gradebook needed ---------------------------------------------------------------

def test_version():
    result = vecgrade("--version")
    assert result.exit_code == 0 and result.output.startswith("vecgrade ")


def test_unknown_assignment_lists_the_valid_ones(fresh):
    assert_user_error(vecgrade("report", "nosuch", "-c", fresh.root), "nosuch", "broadcasting, ")
    assert_user_error(vecgrade("status", "nosuch", "-c", fresh.root), "nosuch", "broadcasting")


def test_unknown_exercise_lists_the_valid_ones(fresh):
    assert_user_error(vecgrade("validate", "broadcasting", "-e", "nosuch", "-c", fresh.root),
                      "nosuch", "batch_outer")


def test_not_a_course_folder(tmp_path):
    assert_user_error(vecgrade("report", "broadcasting", "-c", tmp_path), "nbgrader_config.py")
    assert_user_error(vecgrade("status", "-c", tmp_path / "missing"), "not a course")


def test_report_without_gradebook_creates_none(fresh):
    assert_user_error(vecgrade("report", "broadcasting", "-c", fresh.root), "no gradebook")
    assert_user_error(vecgrade("export", "-c", fresh.root, "--to", fresh.root / "g.csv"), "no gradebook")
    assert not (fresh.root / "gradebook.db").exists()


def test_status_of_a_fresh_course(fresh):
    result = vecgrade("status", "-c", fresh.root)
    assert result.exit_code == 0 and "broadcasting" in result.output and "detection" in result.output


# --- a graded class ----------------------------------------------------------------------------------

def test_report_to_a_missing_folder(graded, tmp_path):
    dest = tmp_path / "missing" / "x.csv"
    assert_user_error(vecgrade("report", "broadcasting", "-c", graded.root, "--csv", dest), str(dest.parent))
    assert_user_error(vecgrade("report", "broadcasting", "-c", graded.root, "--html", tmp_path), "folder")
    assert not dest.parent.exists()


def test_report_csv_shows_ungraded_not_zero(graded, tmp_path):
    dest = tmp_path / "parts.csv"
    result = vecgrade("report", "broadcasting", "-c", graded.root, "--csv", dest)
    assert result.exit_code == 0, result.output
    rows = {r["student"]: r for r in csv.DictReader(open(dest))}
    assert set(rows) == {*CLASS, BROKEN}
    assert rows["ada"]["status"] == "graded" and float(rows["ada"]["total"]) == 16
    assert float(rows["gus"]["total"]) == 0 and float(rows["gus"]["batch_outer_correct"]) == 0  # a real 0
    assert rows[BROKEN]["status"].startswith("ungraded: ") and "JSON" in rows[BROKEN]["status"]
    assert rows[BROKEN]["total"] == "" and rows[BROKEN]["batch_outer_correct"] == ""
    assert "ungraded" in result.output and f"no marks for {BROKEN}" in result.output


def status_row(course) -> list[str]:
    """The table row of ``vecgrade status broadcasting``: the cells as text."""
    result = vecgrade("status", "broadcasting", "-c", course.root)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("│ broadcasting"))
    return [c.strip() for c in row.split("│")[1:-1]]


def test_status_counts_and_reasons(graded):
    # released: generate_assignment writes release/broadcasting; submitted 4, graded 3, 1 ungraded, feedback current
    assert status_row(graded) == ["broadcasting", "yes", "4", "3", "1", "0", "0"]
    assert f"could not grade {BROKEN}: " in vecgrade("status", "-c", graded.root).output


def test_feedback_out_of_date_until_regenerated(graded):
    autograded = graded.root / "autograded" / "bob" / "broadcasting" / "broadcasting.ipynb"
    html = graded.root / "feedback" / "bob" / "broadcasting" / "broadcasting.html"
    earlier = autograded.stat().st_mtime - 60
    os.utime(html, (earlier, earlier))  # as if bob was regraded after his feedback was written
    assert status_row(graded)[-1] == "bob"
    assert vecgrade("feedback", "broadcasting", "-c", graded.root).exit_code == 0
    assert status_row(graded)[-1] == "0"


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_export_rows_status_and_max_points(graded, tmp_path):
    dest = tmp_path / "grades.csv"
    result = vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest)
    assert result.exit_code == 0, result.output
    rows = _read(dest)
    top, people = rows[0], {r["student_id"]: r for r in rows[1:]}
    assert top["student_id"] == MAX_ROW and top["broadcasting/batch_outer_correct"] == "2"
    assert top["broadcasting total"] == "16"
    assert (people["ada"]["first_name"], people["ada"]["email"]) == ("Ada", "ada@example.org")
    assert people["ada"]["broadcasting status"] == "graded" and people["ada"]["broadcasting total"] == "16"
    assert people["bob"]["broadcasting/batch_outer_vectorized"] == "0"
    assert people[BROKEN]["broadcasting status"].startswith("ungraded: ")
    assert {v for k, v in people[BROKEN].items() if k.startswith("broadcasting/")} == {""}


def test_export_unknown_student(graded, tmp_path):
    assert_user_error(vecgrade("export", "-c", graded.root, "-s", "nobody", "--to", tmp_path / "g.csv"),
                      "nobody", "ada")


def test_nbgrader_exporter_plugin_writes_the_same_file(graded, tmp_path):
    ours, theirs = tmp_path / "vecgrade.csv", tmp_path / "nbgrader.csv"
    assert vecgrade("export", "-c", graded.root, "--to", ours).exit_code == 0
    nbgrader = Path(sys.executable).with_name("nbgrader")
    run = subprocess.run([str(nbgrader), "export", "--exporter=graders.course.export.PartsExportPlugin",
                          f"--to={theirs}"], cwd=graded.root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert _read(theirs) == _read(ours) and len(_read(ours)) == 1 + len(CLASS) + 1


def test_speedups_and_failures_read_from_the_grade_cells(graded, broadcasting):
    verdicts = read_verdicts(graded, broadcasting, list(CLASS))
    for ex in broadcasting.exercises:
        # ada's speedup is read; bob's loop is stopped before a speedup exists, or measured below the bar;
        # gus's stub gets no speed verdict
        speeds = sorted(verdicts.speedups[ex.name], reverse=True)
        assert 1 <= len(speeds) <= 2 and speeds[0] >= ex.speedup and all(s < ex.speedup for s in speeds[1:])
        assert any("vectorized" in msg for msg in verdicts.failures[ex.name])
        assert any(msg.startswith("correct: ") for msg in verdicts.failures[ex.name])


def test_html_report_is_self_contained(graded, tmp_path):
    dest = tmp_path / "report.html"
    assert vecgrade("report", "broadcasting", "-c", graded.root, "--html", dest).exit_code == 0
    page = dest.read_text()
    assert page.count('src="data:image/png;base64,') == 3
    assert "<script" not in page and "<link" not in page and 'src="http' not in page  # nothing to fetch
    assert '<h2 id="ungraded">' in page and f"<td>{BROKEN}</td>" in page


def test_late_submission_shows_in_status_column(graded, tmp_path):
    """Runs last: it sets a due date and makes bob's submission two hours late."""
    import datetime
    due = datetime.datetime(2026, 1, 1, 12, 0)
    with Gradebook(graded.db_url) as gb:
        gb.update_or_create_assignment("broadcasting", duedate=due)
        gb.find_submission("broadcasting", "bob").timestamp = due + datetime.timedelta(hours=2)
        gb.find_submission("broadcasting", "ada").timestamp = due - datetime.timedelta(hours=1)
        gb.db.commit()
    dest = tmp_path / "grades.csv"
    assert vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest).exit_code == 0
    people = {r["student_id"]: r for r in _read(dest)}
    assert people["bob"]["broadcasting status"] == "graded, late 2.0 h"
    assert people["ada"]["broadcasting status"] == "graded"
    assert people["bob"]["broadcasting total"] == "8"  # late is reported, not a penalty of ours
