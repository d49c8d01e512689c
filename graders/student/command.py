"""The ``vecgrade`` entry point, safe on a student's install.

A student's install (the course's wheel, no extra) gives the tensors and the
self-check, not nbgrader or typer. Without them the instructor's commands cannot
run: instead of an import traceback the command says, in one line, what to
install. ``vecgrade --version`` needs nothing more and works everywhere.
"""
from __future__ import annotations

import importlib.util
import sys
from importlib.metadata import PackageNotFoundError, version

from graders import __version__
from graders.student.install import INSTRUCTOR

INSTRUCTOR_MODULES = ("nbgrader", "typer", "rich", "nbformat", "nbclient")


def missing_instructor_modules() -> list[str]:
    return [name for name in INSTRUCTOR_MODULES if importlib.util.find_spec(name) is None]


def version_line() -> str:
    """``vecgrade <version>``: the installed distribution's, else the package's own (a plain checkout)."""
    try:
        return f"vecgrade {version('vecgrade')}"
    except PackageNotFoundError:
        return f"vecgrade {__version__}"


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        print(version_line())
        return
    missing = missing_instructor_modules()
    if missing:
        print(f"error: the instructor's commands need {', '.join(missing)}; install them with: {INSTRUCTOR} "
              "(vecgrade --version works without them)", file=sys.stderr)
        raise SystemExit(2)
    from graders.cli import app  # lazy: typer and the instructor's modules exist only past the check above
    app()
