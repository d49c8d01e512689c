"""The instructor's commands, failing well without a graded class: a user's mistake is one line and exit 2,
and the help, the validate formats and the demo's submissions-only mode are wired as documented (the graded
class's commands: tests/test_cli.py)."""
import csv
import shutil

import nbformat
import pytest
from nbgrader.api import Gradebook
from typer.testing import CliRunner

from graders import KIT_ROOT
from graders.cli import app
from graders.course.demo import make_course
from graders.course.personas import load_roster
from graders.model.exercise import PARTS

from tests.testkit.cli import assert_user_error, vecgrade


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """A course that was never graded."""
    return make_course(tmp_path_factory.mktemp("fresh") / "course")


# --- failing well: no gradebook needed ---------------------------------------------------------------

def test_version():
    result = vecgrade("--version")
    assert result.exit_code == 0 and result.output.startswith("vecgrade ")


def test_unknown_assignment_lists_the_valid_ones(fresh):
    assert_user_error(vecgrade("report", "nosuch", "-c", fresh.root), "nosuch", "broadcasting, ")
    assert_user_error(vecgrade("status", "nosuch", "-c", fresh.root), "nosuch", "broadcasting")
    assert_user_error(vecgrade("grade", "nosuch", "-c", fresh.root), "nosuch", "broadcasting")
    assert_user_error(vecgrade("feedback", "nosuch", "-c", fresh.root), "nosuch", "broadcasting")


def test_unknown_exercise_or_format_lists_the_valid_ones(fresh):
    assert_user_error(vecgrade("validate", "broadcasting", "-e", "nosuch", "-c", fresh.root),
                      "nosuch", "batch_outer")
    assert_user_error(vecgrade("validate", "broadcasting", "--format", "html", "-c", fresh.root),
                      "html", "markdown", "csv")


def test_not_a_course_folder(tmp_path, fresh, monkeypatch):
    fix = "; cd into the course folder or pass --course/-c DIR"
    assert_user_error(vecgrade("report", "broadcasting", "-c", tmp_path), "nbgrader_config.py", fix)
    assert_user_error(vecgrade("status", "-c", tmp_path / "missing"), "not a course", fix)
    assert_user_error(vecgrade("grade", "broadcasting", "-c", tmp_path), "nbgrader_config.py", fix)
    monkeypatch.chdir(tmp_path)  # the default course is the working folder
    assert_user_error(vecgrade("status"), f"{tmp_path.resolve()} has no nbgrader_config.py: not a course directory{fix}")
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")  # nbgrader's, not vecgrade's
    assert_user_error(vecgrade("status"), "has no assignments/ folder: not a vecgrade course", fix)
    monkeypatch.chdir(fresh.root)
    assert vecgrade("status").exit_code == 0  # control: in the course folder


def test_report_without_gradebook_creates_none(fresh):
    assert_user_error(vecgrade("report", "broadcasting", "-c", fresh.root), "no gradebook")
    assert_user_error(vecgrade("export", "-c", fresh.root, "--to", fresh.root / "g.csv"), "no gradebook")
    assert not (fresh.root / "gradebook.db").exists()


def test_grade_without_submissions_says_where_they_go(fresh):
    assert not (fresh.root / "submitted").exists()
    assert_user_error(vecgrade("grade", "broadcasting", "-c", fresh.root), "no submissions in submitted/*/broadcasting/")


def test_grade_without_the_assignment_in_the_gradebook_names_the_fix(tmp_path):
    course = make_course(tmp_path / "course")
    notebook = course.root / "submitted" / "ada" / "broadcasting" / "broadcasting.ipynb"
    notebook.parent.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    fix = "nbgrader generate_assignment broadcasting --force"
    # no gradebook at all (deleted, or a move to PostgreSQL): nothing is created, nothing is graded
    assert_user_error(vecgrade("grade", "broadcasting", "-c", course.root),
                      "the gradebook has no assignment 'broadcasting'", fix)
    assert not (course.root / "gradebook.db").exists()
    with course.api(), Gradebook(course.db_url):  # an empty gradebook (nbgrader's API puts alembic on PATH)
        pass
    assert_user_error(vecgrade("grade", "broadcasting", "-c", course.root),
                      "the gradebook has no assignment 'broadcasting'", fix)
    assert not (course.root / "autograded").exists()


def test_demo_mistakes_are_one_line_and_touch_nothing(tmp_path):
    assert_user_error(vecgrade("demo", "--dir", tmp_path / "d", "--assignment", "nosuch"), "nosuch", "broadcasting")
    assert not (tmp_path / "d").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("a teacher's folder")
    assert_user_error(vecgrade("demo", "--dir", tmp_path / "mine"), "not a vecgrade demo")
    assert (tmp_path / "mine" / "notes.txt").exists()


def test_a_demo_class_missing_an_entry_stops_before_the_folder_is_made(tmp_path, monkeypatch):
    from graders.course import demo
    kit = tmp_path / "kit"
    for folder in ("assignments", "demo"):
        shutil.copytree(KIT_ROOT / folder, kit / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(KIT_ROOT / "nbgrader_config.py", kit)
    table = kit / "demo" / "broadcasting.py"
    text = table.read_text()
    assert demo.roster_problems(kit, demo.load_course(kit / "assignments")["broadcasting"]) == []  # control
    entry = next(line for line in text.splitlines() if "torch.softmax(x, dim=1)" in line)
    table.write_text(text.replace(entry + "\n", "", 1))  # ALTERNATIVE loses softmax_rows
    monkeypatch.setattr(demo, "KIT_ROOT", kit)
    result = vecgrade("demo", "--dir", tmp_path / "demo-course", "--assignment", "broadcasting")
    assert_user_error(result, "demo/broadcasting.py: ALTERNATIVE has no entry for 'softmax_rows'")
    assert not (tmp_path / "demo-course").exists()


def test_demo_never_removes_the_folder_it_runs_in(tmp_path, monkeypatch):
    course = make_course(tmp_path / "demo-course")
    (course.root / "inside").mkdir()
    monkeypatch.chdir(course.root / "inside")
    assert_user_error(vecgrade("demo", "--dir", course.root), "holds the folder you are in")
    assert (course.root / "inside").is_dir()


def test_the_wheel_line_keeps_its_commands_whole(fresh, monkeypatch):
    """``vecgrade[lab]`` is text, not rich markup, and the line is not wrapped inside a command."""
    from graders.course import wheel
    from graders.student import install
    monkeypatch.setattr(wheel, "build_wheel", lambda out: out / install.WHEEL)  # the line, without pip's minute
    result = vecgrade("build", "--wheel", "--check", "-c", fresh.root)
    line = next(line for line in result.stdout.splitlines() if line.startswith("wrote dist/"))
    assert f"`{install.FROM_WHEEL}`" in line and f"`{install.LAB}`" in line and "vecgrade[lab]" in install.LAB
    assert "[lab]" in line and len(line) > 160, line  # longer than the console: kept on one line


def test_status_of_a_fresh_course(fresh):
    result = vecgrade("status", "-c", fresh.root)
    assert result.exit_code == 0 and "broadcasting" in result.output and "detection" in result.output
    assert "nothing graded yet" in result.output and not (fresh.root / "gradebook.db").exists()


def test_feedback_before_grading(fresh):
    assert_user_error(vecgrade("feedback", "broadcasting", "-c", fresh.root), "nothing autograded",
                      "vecgrade grade broadcasting")


# --- a graded class ----------------------------------------------------------------------------------


def test_every_command_is_summed_up_in_one_line_of_the_help():
    """``vecgrade --help`` lists a command by its docstring's first paragraph, keeping its line breaks."""
    import inspect
    for command in app.registered_commands:
        summary = inspect.getdoc(command.callback).split("\n\n")[0]
        assert "\n" not in summary, (command.callback.__name__, summary)
    listed = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["--help"]).output
    row = next(line for line in listed.splitlines() if "│ feedback" in line)
    assert "(always forced)." in row, listed
    assert "Students without grades are skipped and named." in " ".join(vecgrade("feedback", "--help").output.split())


def test_a_mistake_in_the_command_line_itself_is_one_line(fresh):
    assert_user_error(vecgrade("grade"), "Missing argument", "grade --help")
    assert_user_error(vecgrade("grade", "broadcasting", "--bogus", "-c", fresh.root), "--bogus")
    assert_user_error(vecgrade("grade", "broadcasting", "--jobs", "0", "-c", fresh.root), "--jobs")
    assert_user_error(vecgrade("nosuch"), "No such command 'nosuch'")
    result = vecgrade()
    assert result.exit_code == 0 and "Usage" in result.output and "grade" in result.output


@pytest.mark.parametrize("form", ["table", "markdown", "csv"])
def test_validate_prints_each_format_and_fails_on_a_problem(fresh, monkeypatch, form):
    """The command's wiring, on rows built from verdicts (the display itself: tests/test_validate_view.py)."""
    from graders.course import validate
    from graders.course.validate import Row
    from graders.model.verdict import Reason, failed, passed

    def verdicts(passes):
        return {p: passed(p, "") if f == "p" else failed(p, Reason.WRONG_VALUE, f"fails {p}")
                for p, f in zip(PARTS, passes, strict=True)}

    def fake(assignment, seed=0, only=None, progress=None):
        if progress is not None:
            progress(f"{assignment.name}: the reference graded on 1 exercise(s), 1 of 1 (0 s)")
        ex = assignment.exercise("batch_outer")
        bad_ex = assignment.exercise("softmax_rows")
        good = Row(assignment.name, ex, verdicts("ppp"), verdicts("pff"), verdicts("fff"),
                   [verdicts("ppp"), verdicts("ppp")], [verdicts("pff") for _ in ex.half_loops], verdicts("pff"))
        bad = Row(assignment.name, bad_ex, verdicts("ppf"), verdicts("pff"), verdicts("fff"),
                  [verdicts("ppp"), verdicts("ppp")], [verdicts("pff") for _ in bad_ex.half_loops], verdicts("pff"))
        return [good, bad] if only is None else [good]

    monkeypatch.setattr(validate, "validate_assignment", fake)
    ok = vecgrade("validate", "broadcasting", "-e", "batch_outer", "--format", form, "-c", fresh.root)
    assert ok.exit_code == 0 and "batch_outer" in ok.stdout, ok.output
    failing = vecgrade("validate", "broadcasting", "--format", form, "-c", fresh.root)
    assert failing.exit_code == 1 and "softmax_rows" in failing.stdout, failing.output
    assert "broadcasting: the reference graded on 1 exercise(s), 1 of 1" in ok.stderr  # progress, on stderr only
    assert "graded on" not in ok.stdout
    if form == "csv":
        rows = list(csv.reader(failing.stdout.splitlines()))
        assert len(rows) == 3 and rows[0][0] == "assignment" and {r[1] for r in rows[1:]} == {"batch_outer",
                                                                                              "softmax_rows"}
    if form == "table":
        assert "softmax_rows: reference fails fast" in " ".join(failing.stdout.split())


def test_demo_submissions_only_puts_the_demo_class_into_an_existing_course(tmp_path):
    """The README's workflow has a step that makes submissions: the demo class's notebooks in submitted/ of the
    course in --course, made from its release notebook; a course without that notebook, or an unknown assignment,
    is one line and exit 2 with nothing written."""
    from graders.course.build import notebook_path, write_source
    course = make_course(tmp_path / "course")
    broadcasting = course.assignments["broadcasting"]
    no_release = vecgrade("demo", "--submissions-only", "-c", course.root)
    assert_user_error(no_release, "release/broadcasting/broadcasting.ipynb does not exist",
                      "nbgrader generate_assignment broadcasting")
    assert not (course.root / "submitted").exists()
    assert_user_error(vecgrade("demo", "--submissions-only", "--assignment", "nosuch", "-c", course.root),
                      "no assignment 'nosuch'", "broadcasting")
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"  # as generate_assignment leaves it
    release.parent.mkdir(parents=True)
    shutil.copy(write_source(course.root, broadcasting), release)
    assert notebook_path(course.root, broadcasting).exists()
    done = vecgrade("demo", "--submissions-only", "-c", course.root)
    assert done.exit_code == 0, done.output
    students = [p.student for p in load_roster(KIT_ROOT, broadcasting)]
    assert sorted(p.name for p in (course.root / "submitted").iterdir()) == sorted(students)
    assert f"for {len(students)} simulated students" in done.stdout and "vecgrade grade broadcasting" in done.stdout
    ada = nbformat.read(course.root / "submitted" / "ada" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    ex = broadcasting.exercises[0]
    assert any(ex.reference_body().strip().splitlines()[-1].strip() in c.source for c in ada.cells)
    assert not (course.root / "demo-course").exists()  # --dir is not made
