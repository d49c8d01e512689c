"""The ``vecgrade`` command run in-process (typer's CliRunner), what a user's mistake must look like, and the
files and tables the commands write, read back."""
import csv
from pathlib import Path

from typer.testing import CliRunner

from graders.cli import app
from graders.model.exits import ExitCode

runner = CliRunner()


def vecgrade(*args):
    """``vecgrade ARGS`` in this process (each argument as text)."""
    return runner.invoke(app, [str(a) for a in args])


def assert_user_error(result, *words):
    """Exit 2, one line on stderr naming the problem (containing each of ``words``), no traceback."""
    assert result.exit_code == ExitCode.USAGE_ERROR, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


def status_row(course) -> list[str]:
    """The table row of ``vecgrade status broadcasting``: the cells as text."""
    result = vecgrade("status", "broadcasting", "-c", course.root)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("│ broadcasting"))
    return [c.strip() for c in row.split("│")[1:-1]]


def csv_cells(path: Path) -> list[list[str]]:
    """A CSV file's cells as a spreadsheet reads them."""
    with open(path, newline="") as f:
        return list(csv.reader(f))


def csv_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows, by its header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
