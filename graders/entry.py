"""The ``vecgrade`` entry point, safe on a student's install.

A student's install (the course's wheel, no extra) gives the tensors and the
self-check, not nbgrader or typer. Without them the instructor's commands cannot
run: instead of an import traceback the command says, in one line, what to
install. ``vecgrade --version`` needs nothing more and works everywhere, and so does
``vecgrade student-lab`` (``graders.student.lab``: it needs only the ``lab`` extra).
"""
from __future__ import annotations

import atexit
import importlib.util
import os
import sys
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from graders import __version__
from graders.model.exits import ExitCode
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
    if sys.argv[1:2] == ["student-lab"]:
        from graders.student import lab  # lazy: the instructor's commands never need it
        raise SystemExit(lab.main(sys.argv[2:]))
    missing = missing_instructor_modules()
    if missing:
        print(f"error: the instructor's commands need {', '.join(missing)}; install them with: {INSTRUCTOR} "
              "(vecgrade --version works without them)", file=sys.stderr)
        raise SystemExit(ExitCode.USAGE_ERROR)
    lighter_imports()
    from graders.cli import app  # lazy: typer and the instructor's modules exist only past the check above
    try:
        app()
    except SystemExit as exc:
        end(exc.code)
    end(ExitCode.OK)


def lighter_imports() -> None:
    """nbformat imports jsonschema, which imports rfc3987_syntax when it is installed (Jupyter's format extras) only
    to check the "iri" string format, and building its 39 grammars is a third of the grading command's imports
    (1.3 s of 5 s). Neither nbformat nor nbgrader checks string formats: without it, jsonschema leaves "iri"
    unchecked."""
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]


def end(code) -> NoReturn:
    """Exit with ``code`` as ``sys.exit`` would, the exit handlers run and the streams flushed, but without the
    interpreter's teardown of every module: with torch, nbgrader and SQLAlchemy loaded it took 0.8 s on a quiet
    machine (2.5 s on a busy one) after the command's last line, on every command. Only while no other thread
    runs that the interpreter would wait for; otherwise the interpreter ends it as usual."""
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        raise SystemExit(code)
    if code is None:
        status: int = ExitCode.OK
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = ExitCode.FAILED
    atexit._run_exitfuncs()  # what the interpreter runs first when it exits: temporary folders, fork servers, logs
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
