"""The instructor's commands on a small graded class (three honest personas, a submission nbgrader cannot read,
one with two notebooks under a formula-like folder name, and an empty notebook): status, feedback, export and the
HTML report. An ungraded submission never reads as a 0, and a student's folder name is never a formula (mistakes
without a graded class: tests/test_cli_mistakes.py)."""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from graders import KIT_ROOT
from graders.course.demo import submit_class
from graders.course.export import MAX_ROW
from graders.course.grade import UNGRADED, grade_class
from graders.course.observed import GATED, read_verdicts
from graders.course.personas import load_roster
from graders.model.csvsafe import read_rows, write_rows

from tests.testkit import generated_course
from tests.testkit.cli import assert_user_error, csv_cells, csv_rows, status_row, vecgrade

CLASS = ("ada", "bob", "gus")  # vectorized / loops / untouched
BROKEN = "zed"                 # a file that is not a notebook: nbgrader cannot grade it
TWO = '=HYPERLINK("evil.example","full marks")'  # two notebooks, in a folder named like a spreadsheet formula
EMPTY = "emp"                  # a valid notebook without cells
REFUSED = (BROKEN, TWO, EMPTY)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("graded") / "course", broadcasting)
    people = [p for p in load_roster(KIT_ROOT, broadcasting) if p.student in CLASS]
    students = submit_class(course, "broadcasting", people)
    folder = course.root / "submitted" / "{}" / "broadcasting"
    for student in REFUSED:
        Path(str(folder).format(student)).mkdir(parents=True)
    (Path(str(folder).format(BROKEN)) / "broadcasting.ipynb").write_text("not a notebook")
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    for name in ("broadcasting.ipynb", "broadcasting (1).ipynb"):
        shutil.copy(release, Path(str(folder).format(TWO)) / name)
    nbformat.write(nbformat.v4.new_notebook(), Path(str(folder).format(EMPTY)) / "broadcasting.ipynb")
    results = grade_class(course, "broadcasting", students + list(REFUSED))
    assert sorted(r.student for r in results if not r.success) == sorted(REFUSED)
    with course.api() as api:
        assert api.generate_feedback("broadcasting")["success"]  # plain nbgrader: nothing left behind trips it
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student("ada", first_name="Ada", last_name="Lovelace", email="ada@example.org")
    return course


@pytest.mark.e2e
def test_report_to_a_missing_folder(graded, tmp_path):
    dest = tmp_path / "missing" / "x.csv"
    assert_user_error(vecgrade("report", "broadcasting", "-c", graded.root, "--csv", dest), str(dest.parent))
    assert_user_error(vecgrade("report", "broadcasting", "-c", graded.root, "--html", tmp_path), "folder")
    assert not dest.parent.exists()


@pytest.mark.e2e
def test_an_unwritable_output_is_one_line_before_any_work(graded, tmp_path):
    """/proc takes no new file, even from root: the check is a real write beside the file, not a permission bit."""
    for args in (("report", "broadcasting", "--csv", "/proc/x.csv"), ("report", "broadcasting", "--html", "/proc/x.html"),
                 ("export", "--to", "/proc/g.csv")):
        result = vecgrade(*args, "-c", graded.root)
        assert_user_error(result, "cannot write /proc/", "choose another " + args[-2])
        assert result.stdout == "", result.stdout  # no table printed first
    good = vecgrade("report", "broadcasting", "--csv", tmp_path / "parts.csv", "--html", tmp_path / "r.html",
                    "-c", graded.root)
    assert good.exit_code == 0 and (tmp_path / "parts.csv").is_file() and (tmp_path / "r.html").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # the probes are gone
    assert vecgrade("export", "--to", tmp_path / "g.csv", "-c", graded.root).exit_code == 0


@pytest.mark.e2e
def test_grade_an_unknown_student(graded):
    assert_user_error(vecgrade("grade", "broadcasting", "-s", "nobody", "-c", graded.root), "nobody", "ada, ")


@pytest.mark.e2e
def test_refused_submissions_say_what_to_do_and_leave_nothing_behind(graded):
    why = {r["student"]: r["reason"] for r in read_rows(graded.root / UNGRADED)}
    assert set(why) == set(REFUSED)
    assert why[TWO] == (f"UnknownNotebookError: remove or rename broadcasting (1).ipynb in submitted/{TWO}/broadcasting/ "
                        "(the assignment's notebook: broadcasting.ipynb), then vecgrade grade broadcasting -s "
                        f"{shlex.quote(TWO)}")
    assert why[EMPTY].startswith("EmptyNotebookError: broadcasting.ipynb in submitted/emp/broadcasting/ is an empty "
                                 "notebook (no cells): not graded") and why[EMPTY].endswith("-s emp")
    assert why[BROKEN] == ("NotANotebookError: broadcasting.ipynb in submitted/zed/broadcasting/ is not a notebook "
                           "(not JSON): not graded; put the student's real notebook there, then vecgrade grade "
                           "broadcasting -s zed")
    for student in REFUSED:
        assert not (graded.root / "autograded" / student).exists(), student
    assert not set(REFUSED) & set(graded.part_scores(graded.assignments["broadcasting"]))  # not a 0 either


@pytest.mark.e2e
def test_an_empty_submission_folder_says_what_to_put_there_and_counts_only_while_it_exists(graded, tmp_path):
    folder = graded.root / "submitted" / "nob" / "broadcasting"
    folder.mkdir(parents=True)
    try:
        result = vecgrade("grade", "broadcasting", "-s", "nob", "-c", graded.root)
        assert result.exit_code == 1 and "Traceback" not in result.output
        fix = ("NoNotebookError: no notebook in submitted/nob/broadcasting/: put broadcasting.ipynb there, then "
               "vecgrade grade broadcasting -s nob")
        assert f"could not grade nob: {fix}" in result.stdout
        assert {r["student"]: r["reason"] for r in read_rows(graded.root / UNGRADED)}["nob"] == fix
        assert status_row(graded)[2:5] == ["7", "3", "4"]  # submitted, graded, ungraded: nob counts
        dest = tmp_path / "grades.csv"
        assert vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest).exit_code == 0
        assert "nob" in {r["student_id"] for r in csv_rows(dest)}
    finally:
        shutil.rmtree(folder.parent)
    assert status_row(graded)[2:5] == ["6", "3", "3"]  # the folder is gone: so is its row, everywhere
    assert "could not grade nob" not in vecgrade("status", "-c", graded.root).output
    assert vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest).exit_code == 0
    assert "nob" not in {r["student_id"] for r in csv_rows(dest)}
    report = vecgrade("report", "broadcasting", "-c", graded.root)
    assert report.exit_code == 0 and "nob" not in report.output
    assert "nob" in {r["student"] for r in read_rows(graded.root / UNGRADED)}  # until the next grading drops it


@pytest.mark.e2e
def test_report_csv_shows_ungraded_not_zero(graded, tmp_path):
    dest = tmp_path / "parts.csv"
    result = vecgrade("report", "broadcasting", "-c", graded.root, "--csv", dest)
    assert result.exit_code == 0, result.output
    rows = {r["student"]: r for r in read_rows(dest)}
    assert set(rows) == {*CLASS, *REFUSED}
    assert rows["ada"]["status"] == "graded" and float(rows["ada"]["total"]) == 16
    assert float(rows["gus"]["total"]) == 0 and float(rows["gus"]["batch_outer_correct"]) == 0  # a real 0
    assert rows[BROKEN]["status"].startswith("ungraded: ") and "JSON" in rows[BROKEN]["status"]
    assert rows[BROKEN]["total"] == "" and rows[BROKEN]["batch_outer_correct"] == ""
    assert rows[EMPTY]["status"].startswith("ungraded: EmptyNotebookError")
    assert "ungraded" in result.output and f"no marks for {BROKEN}" in result.output


@pytest.mark.e2e
def test_no_csv_cell_starts_a_formula(graded, tmp_path):
    """A student's folder name reaches every CSV vecgrade writes, marked as text."""
    parts, grades = tmp_path / "parts.csv", tmp_path / "grades.csv"
    assert vecgrade("report", "broadcasting", "-c", graded.root, "--csv", parts).exit_code == 0
    assert vecgrade("export", "broadcasting", "-c", graded.root, "--to", grades).exit_code == 0
    for path in (parts, grades, graded.root / UNGRADED):
        cells = [c for row in csv_cells(path) for c in row]
        assert "'" + TWO in cells, path  # the name is there, as text
        risky = [c for c in cells if c.startswith(("=", "+", "@", "\t", "\r")) or
                 (c.startswith("-") and not c.lstrip("-").replace(".", "", 1).isdigit())]
        assert not risky, (path, risky)


@pytest.mark.e2e
def test_a_negative_mark_exports_as_a_number(graded, tmp_path):
    with Gradebook(graded.db_url) as gb:
        grade = gb.find_grade("batch_outer_fast", "broadcasting", "broadcasting", "bob")
        grade.manual_score = -0.5  # a penalty entered in the formgrader
        gb.db.commit()
    try:
        dest = tmp_path / "grades.csv"
        assert vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest).exit_code == 0
        header, *rows = csv_cells(dest)
        bob = dict(zip(header, next(r for r in rows if r[0] == "bob"), strict=True))
        assert bob["broadcasting/batch_outer_fast"] == "-0.5" and float(bob["broadcasting total"]) == 7.5
    finally:
        with Gradebook(graded.db_url) as gb:
            gb.find_grade("batch_outer_fast", "broadcasting", "broadcasting", "bob").manual_score = None
            gb.db.commit()


@pytest.mark.e2e
def test_status_counts_and_reasons(graded):
    # released: generate_assignment writes release/broadcasting; submitted 6, graded 3, 3 ungraded, feedback current
    assert status_row(graded) == ["broadcasting", "yes", "6", "3", "3", "0", "0", "0", "0", "0"]
    output = vecgrade("status", "-c", graded.root).output
    for student in REFUSED:
        assert f"could not grade {student}: " in output
    assert "remove or rename broadcasting (1).ipynb" in output


@pytest.mark.e2e
def test_status_reads_graded_from_the_gradebook_as_report_does(graded, tmp_path):
    """autograded/ left behind by a deleted gradebook is not "graded": status says what report says."""
    assert status_row(graded)[3] == "3"  # control: with its gradebook
    book = graded.root / "gradebook.db"
    book.rename(tmp_path / "gradebook.db")
    try:
        assert (graded.root / "autograded" / "ada" / "broadcasting").is_dir()
        result = vecgrade("status", "broadcasting", "-c", graded.root)
        assert result.exit_code == 0, result.output
        assert status_row(graded)[3:6] == ["0", "3", "ada, bob, gus"]  # graded, ungraded, not graded yet
        gone = f"no gradebook in {graded.root}: nothing graded yet (run `vecgrade grade ASSIGNMENT`)"
        assert gone in result.stdout
        assert_user_error(vecgrade("report", "broadcasting", "-c", graded.root), gone)
        assert not book.exists()  # status created none
    finally:
        (tmp_path / "gradebook.db").rename(book)


@pytest.mark.e2e
def test_reasons_are_printed_as_text_never_as_markup(graded):
    """A reason quotes the student's file names: rich markup in one is shown, not obeyed."""
    record = graded.root / UNGRADED
    before = record.read_bytes()
    rows = read_rows(record) + [{"student": "ghost", "assignment": "broadcasting",
                                 "reason": "UnknownNotebookError: remove [link=https://evil.example]x[/link].ipynb"}]
    write_rows(record, ["student", "assignment", "reason"], rows)
    (graded.root / "submitted" / "ghost" / "broadcasting").mkdir(parents=True)  # a row counts while its folder is there
    try:
        for args in (("status", "broadcasting"), ("report", "broadcasting")):
            output = vecgrade(*args, "-c", graded.root).output
            assert "[link=https://evil.example]x[/link].ipynb" in " ".join(output.split()), output
    finally:
        record.write_bytes(before)
        shutil.rmtree(graded.root / "submitted" / "ghost")


@pytest.mark.e2e
def test_feedback_missing_or_out_of_date_until_regenerated(graded):
    autograded = graded.root / "autograded" / "bob" / "broadcasting" / "broadcasting.ipynb"
    html = graded.root / "feedback" / "bob" / "broadcasting" / "broadcasting.html"
    earlier = autograded.stat().st_mtime - 60
    os.utime(html, (earlier, earlier))  # as if bob was regraded after his feedback was written
    shutil.rmtree(graded.root / "feedback" / "gus")  # as if gus's feedback was never written
    assert status_row(graded)[6:8] == ["gus", "bob"]  # no feedback yet / out of date
    assert vecgrade("feedback", "broadcasting", "-c", graded.root).exit_code == 0
    assert status_row(graded)[6:8] == ["0", "0"]


@pytest.mark.e2e
def test_feedback_skips_students_without_grades(graded):
    """A folder in autograded/ without gradebook rows (left by an older run) made nbgrader's generate_feedback
    fail for the whole class; vecgrade names it and writes everyone else's."""
    leftover = graded.root / "autograded" / BROKEN / "broadcasting"
    shutil.copytree(graded.root / "autograded" / "ada" / "broadcasting", leftover)
    try:
        with graded.api() as api:
            assert not api.generate_feedback("broadcasting")["success"]  # control: plain nbgrader trips on it
        result = vecgrade("feedback", "broadcasting", "-c", graded.root)
        assert result.exit_code == 0, result.output
        skipped = [line for line in result.output.splitlines() if line.startswith("skipped")]
        assert len(skipped) == 1 and BROKEN in skipped[0] and "ada" not in skipped[0], result.output
        assert f"feedback for {len(CLASS)} student(s)" in result.output
        assert not (graded.root / "feedback" / BROKEN / "broadcasting").exists()
    finally:
        shutil.rmtree(leftover.parent)


@pytest.mark.e2e
def test_the_formgrader_lists_every_submission_with_its_reason(graded):
    with graded.api() as api:
        submissions = {s["student"]: s for s in api.get_submissions("broadcasting")}
        assert api.get_assignment("broadcasting")["num_submissions"] == len(submissions) == len(CLASS) + len(REFUSED)
        for student in REFUSED:
            assert not submissions[student]["autograded"]  # the formgrader's "needs autograding"
            assert "not graded: " in submissions[student]["display_timestamp"], submissions[student]
        assert "remove or rename" in submissions[TWO]["display_timestamp"]
        assert submissions["ada"]["autograded"] and "not graded" not in (submissions["ada"]["display_timestamp"] or "")
        assert api.get_submission("broadcasting", EMPTY)["display_timestamp"].count("not graded: ") == 1


@pytest.mark.e2e
def test_export_rows_status_and_max_points(graded, tmp_path):
    dest = tmp_path / "grades.csv"
    result = vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest)
    assert result.exit_code == 0, result.output
    rows = csv_rows(dest)
    top, people = rows[0], {r["student_id"]: r for r in rows[1:]}
    assert top["student_id"] == MAX_ROW and top["broadcasting/batch_outer_correct"] == "2"
    assert top["broadcasting total"] == "16" and top["broadcasting status"] == ""
    assert (people["ada"]["first_name"], people["ada"]["email"]) == ("Ada", "ada@example.org")
    assert people["ada"]["broadcasting status"] == "graded" and people["ada"]["broadcasting total"] == "16"
    assert people["bob"]["broadcasting/batch_outer_vectorized"] == "0"
    assert people[BROKEN]["broadcasting status"].startswith("ungraded: ")
    assert {v for k, v in people[BROKEN].items() if k.startswith("broadcasting/")} == {""}
    assert "changed after" not in result.output


@pytest.mark.e2e
def test_an_assignment_never_graded_is_one_line_in_report_as_in_feedback(graded, tmp_path):
    line = f"nothing autograded for strides in {graded.root} yet (run `vecgrade grade strides`)"
    assert_user_error(vecgrade("report", "strides", "-c", graded.root), line)
    assert_user_error(vecgrade("feedback", "strides", "-c", graded.root), line)
    assert vecgrade("report", "broadcasting", "-c", graded.root).exit_code == 0  # control: graded, a table
    dest = tmp_path / "grades.csv"  # the LMS file of an assignment nobody submitted: every row "not submitted"
    result = vecgrade("export", "strides", "-c", graded.root, "--to", dest)
    assert result.exit_code == 0 and "not graded yet" not in result.output, result.output
    assert {r["strides status"] for r in csv_rows(dest)[1:]} == {"not submitted"}


@pytest.mark.e2e
def test_export_names_the_submissions_not_graded_yet(graded, tmp_path):
    dest = tmp_path / "grades.csv"
    result = vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest)
    assert result.exit_code == 0 and "not graded yet" not in result.output  # control: everyone graded or refused
    folder = graded.root / "submitted" / "late" / "broadcasting"
    folder.mkdir(parents=True)
    shutil.copy(graded.root / "release" / "broadcasting" / "broadcasting.ipynb", folder)
    try:
        result = vecgrade("export", "broadcasting", "-c", graded.root, "--to", dest)
        assert result.exit_code == 0, result.output
        assert ("note: broadcasting: 1 submission(s) not graded yet, exported with empty marks (late); run "
                "`vecgrade grade broadcasting`, then export again") in result.stdout
        late = next(r for r in csv_rows(dest) if r["student_id"] == "late")
        assert late["broadcasting status"] == "not graded yet" and late["broadcasting total"] == ""
    finally:
        shutil.rmtree(folder.parent)


@pytest.mark.e2e
def test_export_unknown_student(graded, tmp_path):
    assert_user_error(vecgrade("export", "-c", graded.root, "-s", "nobody", "--to", tmp_path / "g.csv"),
                      "nobody", "ada")


@pytest.mark.e2e
def test_nbgrader_exporter_plugin_writes_the_same_file(graded, tmp_path):
    ours, theirs = tmp_path / "vecgrade.csv", tmp_path / "nbgrader.csv"
    assert vecgrade("export", "-c", graded.root, "--to", ours).exit_code == 0
    nbgrader = Path(sys.executable).with_name("nbgrader")
    run = subprocess.run([str(nbgrader), "export", "--exporter=graders.course.export.PartsExportPlugin",
                          f"--to={theirs}"], cwd=graded.root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert csv_rows(theirs) == csv_rows(ours) and len(csv_rows(ours)) == 1 + len(CLASS) + len(REFUSED)


@pytest.mark.e2e
def test_speedups_and_failures_read_from_the_grade_cells(graded, broadcasting):
    verdicts = read_verdicts(graded.root, broadcasting, list(CLASS))
    for ex in broadcasting.exercises:
        # every timed answer: ada's (measured, passed) and bob's loop (stopped early, or measured below the
        # bar: failed); gus's stub is not timed
        speeds = verdicts.speeds[ex.name]
        assert len(speeds) == 2 and sum(s.passed for s in speeds) == 1, speeds
        ada = next(s for s in speeds if s.passed)
        assert ada.speedup is not None and ada.speedup >= ex.speedup
        bob = next(s for s in speeds if not s.passed)
        assert bob.speedup is None or bob.speedup < ex.speedup
        failures = verdicts.frequent(ex.name)
        assert any(f.part == "vectorized" for f in failures)
        assert any(f.part == "correct" and f.gates for f in failures)  # gus: its cause, counted once
        assert all(GATED not in f.message() for f in failures)
        assert all(f.message().strip() and f.reason.value for f in failures)  # grouped by reason code


@pytest.mark.e2e
def test_html_report_is_self_contained(graded, tmp_path):
    dest = tmp_path / "report.html"
    result = vecgrade("report", "broadcasting", "-c", graded.root, "--html", dest)
    assert result.exit_code == 0, result.output
    page = dest.read_text()
    assert page.count('src="data:image/png;base64,') == 3
    assert "<script" not in page and "<link" not in page and 'src="http' not in page  # nothing to fetch
    assert '<h2 id="ungraded">' in page and f"<td>{BROKEN}</td>" in page
    assert GATED not in page and "# s" not in page and "not written yet: `batch_outer` still raises NotImplementedError" in page
    assert "changed after the class was graded" not in page


@pytest.mark.e2e
def test_a_changed_assignment_is_said_in_the_export_and_the_report(graded, tmp_path):
    """As if the class was graded when batch_outer_correct was worth 3 points (nbgrader keeps the graded cells)."""
    with Gradebook(graded.db_url) as gb:
        gb.find_grade_cell("batch_outer_correct", "broadcasting", "broadcasting").max_score = 3
        gb.db.commit()
    try:
        grades, page = tmp_path / "grades.csv", tmp_path / "report.html"
        result = vecgrade("export", "broadcasting", "-c", graded.root, "--to", grades)
        assert result.exit_code == 0 and "broadcasting changed after the class was graded" in result.output
        assert "`nbgrader generate_assignment broadcasting --force`, then `vecgrade grade broadcasting`" in " ".join(
            result.output.split())
        assert "batch_outer_correct: 3 points when graded, 2 now" in csv_rows(grades)[0]["broadcasting status"]
        result = vecgrade("report", "broadcasting", "-c", graded.root, "--html", page)
        assert result.exit_code == 0 and "changed after the class was graded" in result.output
        assert "changed after the class was graded" in page.read_text()
    finally:
        with Gradebook(graded.db_url) as gb:
            gb.find_grade_cell("batch_outer_correct", "broadcasting", "broadcasting").max_score = 2
            gb.db.commit()


@pytest.mark.e2e
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
    people = {r["student_id"]: r for r in csv_rows(dest)}
    assert people["bob"]["broadcasting status"] == "graded, late 2.0 h"
    assert people["ada"]["broadcasting status"] == "graded"
    assert people["bob"]["broadcasting total"] == "8"  # late is reported, not a penalty of ours
