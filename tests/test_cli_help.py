"""Every command's ``--help`` works and ``vecgrade --help`` lists every command, ``student-lab`` included (which runs
before typer is imported, so it answers ``--help`` itself)."""
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from graders.cli import app
from graders.model.exits import ExitCode
from graders.student import lab

from tests.testkit import ROOT

RUN_COMMAND = "import sys; from graders.entry import main; sys.argv[0] = 'vecgrade'; main()"
COMMANDS = [c.name or getattr(c.callback, "__name__", "").replace("_", "-") for c in app.registered_commands]


def test_vecgrade_help_lists_every_command_student_lab_included():
    listed = CliRunner(env={"COLUMNS": "200"}).invoke(app, ["--help"]).output
    assert "student-lab" in COMMANDS
    for name in COMMANDS:
        assert f"│ {name} " in listed, name


@pytest.mark.parametrize("name", COMMANDS)
def test_every_commands_help_works(name):
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and "error" not in result.output.lower().split("usage:")[0]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_student_lab_help_through_the_entry_point(flag):
    """``vecgrade student-lab --help`` as a student runs it (graders.entry, before typer): the help, exit 0, and
    nothing written; a wrong argument stays one error line (the control)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": "/nonexistent/vecgrade-help-test"}
    result = subprocess.run([sys.executable, "-c", RUN_COMMAND, "student-lab", flag], capture_output=True, text=True,
                            env=env, cwd=ROOT, timeout=120)
    assert result.returncode == ExitCode.OK and result.stderr == "", result.stderr
    assert result.stdout.startswith("Usage: vecgrade student-lab [--user]") and "--user" in result.stdout
    wrong = subprocess.run([sys.executable, "-c", RUN_COMMAND, "student-lab", "--everyone"], capture_output=True,
                           text=True, env=env, cwd=ROOT, timeout=120)
    assert wrong.returncode == ExitCode.USAGE_ERROR
    assert wrong.stderr.strip() == "error: vecgrade student-lab takes no argument but --user (got --everyone)"
    assert lab.SUMMARY in result.stdout
