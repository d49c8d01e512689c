"""`vecgrade export --format canvas|moodle [--roster R]`: each LMS's gradebook import, read back with Python's csv module
as the LMS reads it.

The gradebook is made with nbgrader's own API (no autograde): ada graded on both assignments, bob graded 0 on
broadcasting and absent from strides, cy submitted but not graded yet, dee refused (a row of ungraded.csv). A student
without a grade for an assignment gets an empty cell, never a 0; bob's real 0 stays a 0.
"""
import csv
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from typer.testing import CliRunner

from graders.cli import app
from graders.course.demo import make_course
from graders.course.export import (
    CANVAS_IDENTITY,
    CANVAS_POINTS,
    MOODLE_IDENTITY,
    ROSTER_COLUMNS,
    RosterError,
    read_roster,
)
from graders.course.grade import UNGRADED
from graders.course.results import max_points
from graders.model.csvsafe import write_rows

runner = CliRunner()
ASSIGNMENTS = ("broadcasting", "strides")


def vecgrade(*args):
    return runner.invoke(app, [str(a) for a in args])


def read_csv(path: Path) -> list[list[str]]:
    """The file as an LMS reads it: plain CSV rows."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _grade(gb: Gradebook, assignment: str, student: str, scores: dict[str, float]) -> None:
    gb.add_submission(assignment, student)
    for gid, score in scores.items():
        grade = gb.find_grade(gid, assignment, assignment, student)
        grade.auto_score = score
    gb.db.commit()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("lms") / "course")
    definitions = course.assignments
    with course.api(), Gradebook(course.db_url) as gb:
        for name in ASSIGNMENTS:
            gb.add_assignment(name)
            gb.add_notebook(name, name)
            for gid, points in max_points(definitions[name]).items():
                gb.add_grade_cell(gid, name, name, max_score=points, cell_type="code")
        gb.add_student("ada", first_name="Ada", last_name="Lovelace", email="ada@example.org", lms_user_id="9001")
        gb.add_student("bob")
        full = max_points(definitions["broadcasting"])
        _grade(gb, "broadcasting", "ada", full)
        _grade(gb, "broadcasting", "bob", {gid: 0.0 for gid in full})
        strides = max_points(definitions["strides"])
        _grade(gb, "strides", "ada", {gid: (p if i % 2 else 0.0) for i, (gid, p) in enumerate(strides.items())})
    for student in ("cy", "dee"):  # submitted; cy not graded yet, dee refused
        (course.root / "submitted" / student / "broadcasting").mkdir(parents=True)
    write_rows(course.root / UNGRADED, ["student", "assignment", "reason"],
               [{"student": "dee", "assignment": "broadcasting", "reason": "NotANotebookError: not a notebook"}])
    return course


@pytest.fixture(scope="module")
def points(course):
    return {name: sum(max_points(course.assignments[name]).values()) for name in ASSIGNMENTS}


def _g(value: float) -> str:
    return f"{value:g}"


def test_canvas_has_its_identity_columns_one_column_per_assignment_and_points_possible(course, points, tmp_path):
    dest = tmp_path / "canvas.csv"
    result = vecgrade("export", "-c", course.root, "--format", "canvas", "--to", dest)
    assert result.exit_code == 0, result.output
    rows = read_csv(dest)
    assert rows[0] == [*CANVAS_IDENTITY, *ASSIGNMENTS]
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert rows[1] == ["    Points Possible", "", "", "", "", _g(points["broadcasting"]), _g(points["strides"])]
    assert rows[1][0] == CANVAS_POINTS
    table = {r[3]: dict(zip(rows[0], r, strict=True)) for r in rows[2:]}  # by SIS Login ID: the nbgrader id here
    assert sorted(table) == ["ada", "bob", "cy", "dee"]
    ada = table["ada"]
    strides = max_points(course.assignments["strides"])
    ada_strides = sum(p for i, p in enumerate(strides.values()) if i % 2)
    assert (ada["Student"], ada["ID"], ada["broadcasting"], ada["strides"]) == (
        "Lovelace, Ada", "9001", _g(points["broadcasting"]), _g(ada_strides))
    assert table["bob"]["Student"] == "bob" and table["bob"]["broadcasting"] == "0"  # a real 0 is a 0


FULL_ROSTER = ("student_id,email,sis_user_id,sis_login_id\nada,ada@example.org,S-1,ada\nbob,bob@example.org,S-2,bob\n"
               "cy,cy@example.org,S-3,cy\ndee,dee@example.org,S-4,dee\n")


def test_canvas_and_moodle_leave_an_ungraded_cell_empty_never_zero(course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(FULL_ROSTER)
    for form in ("canvas", "moodle"):
        dest = tmp_path / f"{form}.csv"
        result = vecgrade("export", "-c", course.root, "--format", form, "--roster", roster, "--to", dest)
        assert result.exit_code == 0, result.output
        rows = read_csv(dest)
        login = rows[0].index("SIS Login ID" if form == "canvas" else "Username")
        table = {r[login]: dict(zip(rows[0], r, strict=True)) for r in rows[1:] if r[0] != CANVAS_POINTS}
        assert table["bob"]["strides"] == ""            # not submitted
        assert table["cy"]["broadcasting"] == ""        # submitted, not graded yet
        assert table["dee"]["broadcasting"] == ""       # refused: ungraded
        assert table["bob"]["broadcasting"] == "0"      # control: graded 0
        assert table["ada"]["broadcasting"] not in ("", "0")


def test_moodle_has_mappable_identifiers_and_no_max_points_row(course, points, tmp_path):
    dest = tmp_path / "moodle.csv"
    roster = tmp_path / "roster.csv"
    roster.write_text(FULL_ROSTER)
    assert vecgrade("export", "-c", course.root, "--format", "moodle", "--roster", roster, "--to", dest).exit_code == 0
    rows = read_csv(dest)
    assert rows[0] == [*MOODLE_IDENTITY, *ASSIGNMENTS]
    assert rows[0][:5] == ["First name", "Last name", "ID number", "Username", "Email address"]
    assert len(rows) == 1 + 4  # a row per student, nothing else: Moodle would read a max-points row as a student
    table = {r[3]: r for r in rows[1:]}
    assert all(username for username in table)  # Moodle aborts the whole import on a row it cannot map
    assert table["ada"][:5] == ["Ada", "Lovelace", "S-1", "ada", "ada@example.org"]
    assert table["ada"][5] == _g(points["broadcasting"])


def test_moodle_without_an_identifier_for_every_student_is_an_error_naming_them(course, tmp_path):
    """Moodle's import gives a row whose mapped identifier is empty the previous row's student: only ada has an
    e-mail in the gradebook, so bob, cy and dee would get ada's grade (or each other's) when mapped by e-mail."""
    dest = tmp_path / "moodle.csv"
    result = vecgrade("export", "-c", course.root, "--format", "moodle", "--to", dest)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith("error:") and len(line.splitlines()) == 1
    assert "Email address is empty for bob, cy, dee" in line and "--roster" in line
    assert not dest.exists()
    # control: ada alone has every identifier she has at all; the ID number column nobody has is left out
    result = vecgrade("export", "-c", course.root, "--format", "moodle", "--to", dest, "-s", "ada")
    assert result.exit_code == 0, result.output
    rows = read_csv(dest)
    assert rows[0] == ["First name", "Last name", "Username", "Email address", *ASSIGNMENTS]
    assert rows[1][:4] == ["Ada", "Lovelace", "ada", "ada@example.org"]


def test_the_roster_gives_the_lms_identities(course, points, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,first_name,last_name,email,canvas_id,sis_user_id,sis_login_id,section\n"
        "ada,,,a.lovelace@uni.example,,S-1,alovelace,Period 2\n"
        "bob,Bob,Babbage,bob@uni.example,1002,S-2,bbabbage,Period 2\n"
        "cy,Cy,Young,cy@uni.example,1003,S-3,cyoung,Period 3\n"
        'dee,=HYPERLINK("x"),Dee,dee@uni.example,1004,S-4,ddee,Period 3\n',
        encoding="utf-8")
    dest = tmp_path / "canvas.csv"
    result = vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest)
    assert result.exit_code == 0, result.output
    rows = read_csv(dest)
    table = {r[3]: r for r in rows[2:]}
    assert sorted(table) == ["alovelace", "bbabbage", "cyoung", "ddee"]
    # the gradebook's name and Canvas ID where the roster has none; the roster's email, SIS ids and section
    assert table["alovelace"][:5] == ["Lovelace, Ada", "9001", "S-1", "alovelace", "Period 2"]
    assert table["bbabbage"][:5] == ["Babbage, Bob", "1002", "S-2", "bbabbage", "Period 2"]
    assert table["bbabbage"][5] == "0"
    assert table["ddee"][0] == 'Dee, =HYPERLINK("x")'  # "Last, First" does not start a formula: as written
    moodle = tmp_path / "moodle.csv"
    assert vecgrade("export", "-c", course.root, "--format", "moodle", "--roster", roster, "--to", moodle).exit_code == 0
    rows = read_csv(moodle)
    table = {r[3]: r for r in rows[1:]}
    assert table["alovelace"][:5] == ["Ada", "Lovelace", "S-1", "alovelace", "a.lovelace@uni.example"]
    assert table["ddee"][0] == "'=HYPERLINK(\"x\")"  # a first name a spreadsheet would run is text


def test_a_gradebook_student_missing_from_the_roster_is_an_error_and_writes_nothing(course, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,sis_login_id\nada,alovelace\nbob,bbabbage\nzed,zz\n", encoding="utf-8")
    dest = tmp_path / "canvas.csv"
    result = vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith("error:") and len(line.splitlines()) == 1
    assert "no row for 2 student(s)" in line and "cy, dee" in line and "-s" in line
    assert not dest.exists()
    # control: only the students the roster has, and zed (not in the gradebook) is a note, not an error
    result = vecgrade("export", "-c", course.root, "--format", "canvas", "--roster", roster, "--to", dest,
                      "-s", "ada", "-s", "bob")
    assert result.exit_code == 0, result.output
    assert "note" in result.output and "zed" in result.output
    assert [r[3] for r in read_csv(dest)[2:]] == ["alovelace", "bbabbage"]


def test_roster_mistakes_are_one_line(course, tmp_path):
    bad = {"typo.csv": "student_id,emial\nada,a@x\n", "noid.csv": "name,email\nada,a@x\n",
           "twice.csv": "student_id\nada\nada\n", "blank.csv": "student_id,email\n,a@x\n"}
    words = {"typo.csv": "unknown column(s) emial", "noid.csv": "no student_id column",
             "twice.csv": "appears twice", "blank.csv": "empty student_id"}
    for name, text in bad.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(RosterError, match=words[name].replace("(", r"\(").replace(")", r"\)")):
            read_roster(tmp_path / name)
        result = vecgrade("export", "-c", course.root, "--format", "moodle", "--roster", tmp_path / name,
                          "--to", tmp_path / "out.csv")
        assert result.exit_code == 2 and words[name] in result.stderr, result.output
    assert not (tmp_path / "out.csv").exists()
    assert vecgrade("export", "-c", course.root, "--roster", tmp_path / "typo.csv",
                    "--to", tmp_path / "out.csv").exit_code == 2  # --roster with the parts export
    good = tmp_path / "good.csv"
    good.write_text("\ufeff" + ",".join(ROSTER_COLUMNS) + "\nada,,,,,,,\n\n")  # a spreadsheet's BOM, a blank line
    assert list(read_roster(good)) == ["ada"]


def test_unknown_format_lists_the_valid_ones_and_parts_stays_the_default(course, tmp_path):
    result = vecgrade("export", "-c", course.root, "--format", "blackboard", "--to", tmp_path / "x.csv")
    assert result.exit_code == 2 and "parts, canvas, moodle" in result.stderr
    default, parts = tmp_path / "default.csv", tmp_path / "parts.csv"
    assert vecgrade("export", "-c", course.root, "--to", default).exit_code == 0
    assert vecgrade("export", "-c", course.root, "--format", "parts", "--to", parts).exit_code == 0
    assert default.read_text() == parts.read_text()
    header = read_csv(default)[0]
    assert header[:4] == ["student_id", "first_name", "last_name", "email"] and "broadcasting total" in header
