"""The Canvas and Moodle files read as their importers read them: every student gets their own grade, or the export
refuses with one line naming who cannot be told apart.

The importers, as their documentation describes them:

- Moodle's "Import grades from CSV": the teacher maps one identity column (ID number, Username or Email address) to
  Moodle's users; a row whose identifier is empty keeps the previous row's user, an unknown one stops the import.
- Canvas's gradebook import: a student is found by ``ID``, else ``SIS User ID``, else ``SIS Login ID``, else the
  ``Student`` name; an assignment column ``Name (id)`` fills the assignment of that id, a bare name fills the
  assignment of exactly that title or creates a new one.

The class has non-ASCII names and two students of the same name.
"""
import csv
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from typer.testing import CliRunner

from graders.cli import app
from graders.course.demo import make_course
from graders.course.results import max_points

runner = CliRunner()
A = "broadcasting"
# student: (first, last, email, points lost)
CLASS = {"zoe": ("Zoë", "Ångström", "zoe@uni.example", 0), "li": ("雷", "李", "li@uni.example", 2),
         "ana1": ("Ana", "Ng", "ana1@uni.example", 4), "ana2": ("Ana", "Ng", "ana2@uni.example", 6)}


def vecgrade(*args):
    return runner.invoke(app, [str(a) for a in args])


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class ImportStopped(Exception):
    pass


def moodle_import(rows: list[dict[str, str]], column: str, users: dict[str, str]) -> dict[str, str]:
    """{Moodle user: the grade of ``A`` the import gives them}, mapping ``column`` to ``users`` ({value: user})."""
    out, user = {}, None
    for row in rows:
        value = row[column].strip()
        if value:
            if value not in users:
                raise ImportStopped(f"no user with {column} {value!r}")
            user = users[value]
        if user is None:
            raise ImportStopped("the first row has no user")
        out[user] = row[A]  # an empty identifier: the previous row's user
    return out


def canvas_import(rows: list[dict[str, str]], students: list[dict[str, str]], assignments: dict[str, str]
                  ) -> tuple[dict[str, dict[str, str]], list[str]]:
    """({Canvas assignment id or "new: <title>": {Canvas student: grade}}, the students not found) for ``students``
    (dicts with id, sis_user_id, login, name) and Canvas's ``assignments`` ({id: title})."""
    header = [h for h in rows[0] if h not in ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")]
    targets = {}
    for column in header:
        if column.endswith(")") and "(" in column:
            targets[column] = column[column.rindex("(") + 1:-1]
        else:
            titled = [i for i, title in assignments.items() if title == column]
            targets[column] = titled[0] if titled else f"new: {column}"
    out: dict[str, dict[str, str]] = {t: {} for t in targets.values()}
    missing = []
    for row in rows[1:]:
        if row["Student"].strip() == "Points Possible":
            continue
        found = None
        for key, field in (("ID", "id"), ("SIS User ID", "sis_user_id"), ("SIS Login ID", "login"),
                           ("Student", "name")):
            matches = [s for s in students if row[key] and s[field] == row[key]]
            if matches:
                found = matches[0]["id"]
                break
        if found is None:
            missing.append(row["Student"])
            continue
        for column, target in targets.items():
            out[target][found] = row[column]
    return out, missing


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("lms-import") / "course")
    points = max_points(course.assignments[A])
    with course.api(), Gradebook(course.db_url) as gb:
        gb.add_assignment(A)
        gb.add_notebook(A, A)
        for gid, p in points.items():
            gb.add_grade_cell(gid, A, A, max_score=p, cell_type="code")
        for student, (first, last, email, lost) in CLASS.items():
            gb.add_student(student, first_name=first, last_name=last, email=email)
            gb.add_submission(A, student)
            left = lost
            for gid, p in points.items():
                take = min(p, left)
                left -= take
                gb.find_grade(gid, A, A, student).auto_score = p - take
        gb.db.commit()
    return course


@pytest.fixture(scope="module")
def totals(course):
    top = sum(max_points(course.assignments[A]).values())
    return {s: f"{top - lost:g}" for s, (_, _, _, lost) in CLASS.items()}


def test_moodle_gives_every_student_their_own_grade_by_any_identifier(course, totals, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,sis_user_id,sis_login_id\n" + "".join(f"{s},ID-{s},u.{s}\n" for s in CLASS),
                      encoding="utf-8")
    dest = tmp_path / "moodle.csv"
    result = vecgrade("export", "-c", course.root, "--format", "moodle", "--roster", roster, "--to", dest)
    assert result.exit_code == 0, result.output
    rows = read_csv(dest)
    assert {r["First name"] for r in rows} == {"Zoë", "雷", "Ana"}  # non-ASCII names kept as written (UTF-8)
    for column, value in (("ID number", "ID-{}"), ("Username", "u.{}"), ("Email address", "{}@uni.example")):
        users = {value.format(s): s for s in CLASS}
        assert moodle_import(rows, column, users) == totals, column


def test_a_moodle_file_with_an_empty_identifier_is_refused_where_moodle_would_misplace_a_grade(course, totals,
                                                                                               tmp_path):
    roster = tmp_path / "roster.csv"  # li has no e-mail: mapped by e-mail, Moodle would give li's row to zoe
    roster.write_text("student_id,email,sis_login_id\nzoe,zoe@uni.example,zoe\nli,,li\nana1,,ana1\n"
                      "ana2,ana2@uni.example,ana2\n", encoding="utf-8")
    with Gradebook(course.db_url) as gb:  # the gradebook's e-mail fills a roster's empty cell: clear li's and ana1's
        for s in ("li", "ana1"):
            gb.update_or_create_student(s, email=None)
    try:
        dest = tmp_path / "moodle.csv"
        result = vecgrade("export", "-c", course.root, "--format", "moodle", "--roster", roster, "--to", dest)
        assert result.exit_code == 2, result.output
        line = result.stderr.strip()
        assert line.startswith("error:") and len(line.splitlines()) == 1
        assert "Email address is empty for ana1, li" in line and not dest.exists()
        # what the file would have been: the importer gives li's and ana1's rows to another student
        rows = [{"Email address": CLASS[s][2] if s not in ("li", "ana1") else "", A: totals[s]}
                for s in ("zoe", "li", "ana2", "ana1")]
        got = moodle_import(rows, "Email address", {CLASS[s][2]: s for s in CLASS})
        assert got["zoe"] == totals["li"] != totals["zoe"] and got["ana2"] == totals["ana1"] != totals["ana2"]
        # control: the students every identifier covers export, and import as deserved
        result = vecgrade("export", "-c", course.root, "--format", "moodle", "--roster", roster, "--to", dest,
                          "-s", "zoe", "-s", "ana2")
        assert result.exit_code == 0, result.output
        got = moodle_import(read_csv(dest), "Email address", {CLASS[s][2]: s for s in CLASS})
        assert got == {s: totals[s] for s in ("zoe", "ana2")}
    finally:
        with Gradebook(course.db_url) as gb:
            for s in ("li", "ana1"):
                gb.update_or_create_student(s, email=CLASS[s][2])


def _canvas_students(ids: bool) -> list[dict[str, str]]:
    return [{"id": s, "sis_user_id": f"S-{s}" if ids else "", "login": f"login-{s}",
             "name": f"{CLASS[s][1]}, {CLASS[s][0]}"} for s in CLASS]


def test_canvas_students_of_the_same_name_need_an_id_of_their_own(course, totals, tmp_path):
    dest = tmp_path / "canvas.csv"
    result = vecgrade("export", "-c", course.root, "--format", "canvas", "--to", dest)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith("error:") and "ana1, ana2 share a name" in line and not dest.exists()
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,sis_user_id\n" + "".join(f"{s},S-{s}\n" for s in CLASS), encoding="utf-8")
    result = vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest)
    assert result.exit_code == 0, result.output
    got, missing = canvas_import(read_csv(dest), _canvas_students(True), {"4711": A})
    assert missing == [] and got == {"4711": totals}  # by exact title, each Ana her own grade
    assert {r["Student"] for r in read_csv(dest)[1:]} == {"Ångström, Zoë", "李, 雷", "Ng, Ana"}


def test_canvas_columns_carry_the_assignment_id_when_the_course_knows_it(course, totals, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,sis_user_id\n" + "".join(f"{s},S-{s}\n" for s in CLASS), encoding="utf-8")
    dest = tmp_path / "canvas.csv"
    canvas = {"4711": "Homework 1: broadcasting"}  # the Canvas assignment's title is not the nbgrader name
    assert vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest).exit_code == 0
    got, _ = canvas_import(read_csv(dest), _canvas_students(True), canvas)
    assert list(got) == [f"new: {A}"]  # without the id Canvas makes a new assignment (as the docs say)
    config = course.root / "nbgrader_config.py"
    before = config.read_text()
    try:
        config.write_text(before + '\nc.CanvasExport.assignment_ids = {"broadcasting": "4711"}\n')
        result = vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest)
        assert result.exit_code == 0, result.output
        rows = read_csv(dest)
        assert f"{A} (4711)" in rows[0]
        got, missing = canvas_import(rows, _canvas_students(True), canvas)
        assert missing == [] and got == {"4711": totals}
        config.write_text(before + '\nc.CanvasExport.assignment_ids = {"broadcasting": "Homework 1"}\n')
        result = vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest)
        assert result.exit_code == 2 and "is not a number" in result.stderr
    finally:
        config.write_text(before)
