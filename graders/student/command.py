"""The ``vecgrade`` entry point, safe on a student's install.

``pip install vecgrade`` (no extra) gives a student the tensors and the
self-check, not nbgrader or typer. Without them the command line cannot run;
instead of an import traceback it says, in one line, what to install.
"""
from __future__ import annotations

import importlib.util
import sys

INSTRUCTOR_MODULES = ("nbgrader", "typer", "rich", "nbformat", "nbclient")
INSTALL_HINT = 'pip install "vecgrade[instructor]"'


def missing_instructor_modules() -> list[str]:
    return [name for name in INSTRUCTOR_MODULES if importlib.util.find_spec(name) is None]


def main() -> None:
    missing = missing_instructor_modules()
    if missing:
        print(f"vecgrade: the instructor's commands need {', '.join(missing)}; install them with: {INSTALL_HINT}",
              file=sys.stderr)
        raise SystemExit(2)
    from graders.cli import app
    app()
