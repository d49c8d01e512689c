"""``vecgrade``'s exit codes: each one's meaning from a command, both ways; no literal exit code in the package;
the instructor's guide lists the codes from the enum."""
import ast
import importlib.util
from pathlib import Path

from typer.testing import CliRunner

from graders import KIT_ROOT
from graders.cli import app
from graders.course import build
from graders.course.demo import make_course
from graders.model.exits import ExitCode, table

ROOT = Path(__file__).resolve().parent.parent
EXITS = {"exit", "_exit", "Exit", "SystemExit"}  # sys.exit, os._exit, typer.Exit, SystemExit
runner = CliRunner()


def vecgrade(*args):
    return runner.invoke(app, [str(a) for a in args])


def literal_exits(source: str) -> list[int]:
    """The lines of ``source`` that end a process with a number (or a message) written there, not a named code."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in EXITS:
            if not node.args or isinstance(node.args[0], ast.Constant):
                found.append(node.lineno)
    return found


def test_no_literal_exit_code_is_left_in_the_package():
    files = sorted((ROOT / "graders").rglob("*.py"))
    assert len(files) > 50
    left = {str(f.relative_to(ROOT)): lines for f in files if (lines := literal_exits(f.read_text()))}
    assert left == {}


def test_a_literal_exit_code_is_found():
    bad = "import sys, os, typer\nsys.exit(1)\nos._exit(0)\nraise typer.Exit()\nraise SystemExit('no')\nexit(3)\n"
    assert literal_exits(bad) == [2, 3, 4, 5, 6]
    good = "import sys, typer\nsys.exit(ExitCode.FAILED)\nraise typer.Exit(code)\nos._exit(status % 256)\n"
    assert literal_exits(good) == []


def test_ok_and_usage_error(tmp_path):
    assert vecgrade("--version").exit_code == ExitCode.OK
    result = vecgrade("status", "--course", tmp_path)  # not a course folder
    assert result.exit_code == ExitCode.USAGE_ERROR and result.stderr.startswith("error:"), result.output
    assert vecgrade("build", "--check", "--course", KIT_ROOT).exit_code == ExitCode.OK  # the same command, rightly


def test_failed_is_a_check_that_failed(tmp_path):
    course = make_course(tmp_path / "course")  # its source/ notebooks not built yet
    stale = vecgrade("build", "--check", "--course", course.root)
    assert stale.exit_code == ExitCode.FAILED and "out of date" in stale.output, stale.output
    assert vecgrade("build", "--course", course.root).exit_code == ExitCode.OK
    assert vecgrade("build", "--check", "--course", course.root).exit_code == ExitCode.OK


def test_interrupted(monkeypatch):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "is_stale", interrupt)
    assert vecgrade("build", "--check", "--course", KIT_ROOT).exit_code == ExitCode.INTERRUPTED
    monkeypatch.undo()
    assert vecgrade("build", "--check", "--course", KIT_ROOT).exit_code == ExitCode.OK


def test_the_guide_lists_every_code_from_the_enum():
    spec = importlib.util.spec_from_file_location("vecgrade_docs_hooks_exits", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = (ROOT / "docs" / "instructor.md").read_text()
    assert hooks.EXIT_CODES in page
    filled = hooks.on_page_markdown(page, None, None, None)
    assert hooks.EXIT_CODES not in filled and table() in filled
    for code in ExitCode:
        assert f"| {code.value} | `{code.name}` | {code.meaning} |" in table()
