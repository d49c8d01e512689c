"""What every ``vecgrade`` command shares: the ``app`` its commands register with, the console, one line per
mistake (``fail``: ``error:`` on stderr and ``ExitCode.USAGE_ERROR``) and the checks of a command's arguments
(a course folder, a name among the valid ones, a gradebook, a writable output).

Imports only typer and rich at the top, as every module of ``graders.cli`` does: ``vecgrade --help`` loads
no torch, nbgrader or Dask; a command imports what it needs when it runs.
"""
from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from graders.model.exits import ExitCode

console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, soft_wrap=True)


def _say_error(message: str) -> None:
    """The one line of a mistake; the message is text (a student's folder name may hold rich markup)."""
    errors.print(f"[red]error:[/red] {escape(message)}", highlight=False)


def say(line: str, markup: bool = True) -> None:
    """One line of output: never wrapped inside a command it quotes, never highlighted. The caller escapes
    (``rich.markup.escape``) every dynamic part of ``line``: a path or a pip extra like ``vecgrade[lab]`` is text."""
    console.print(line, soft_wrap=True, highlight=False, markup=markup)


def fail(message: str) -> NoReturn:
    """A user's mistake: one ``error:`` line on stderr and ``ExitCode.USAGE_ERROR``."""
    _say_error(message)
    raise typer.Exit(ExitCode.USAGE_ERROR)


class OneLineErrors(TyperGroup):
    """A mistake in the command line itself (a missing argument, an unknown option or command) is one
    ``error:`` line and exit 2 too, instead of click's framed usage message."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as exc:  # click's errors, as typer vendors them (UsageError and the like)
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:  # `vecgrade` alone: the help
                typer.echo(ctx.get_help())
                sys.exit(ExitCode.OK)
            _say_error(exc.format_message() + (f" (see `{ctx.command_path} --help`)" if ctx is not None else ""))
            sys.exit(ExitCode.USAGE_ERROR)
        except typer.Abort:  # Ctrl-C, or the end of input at a prompt
            sys.exit(ExitCode.INTERRUPTED)
        sys.exit(code if isinstance(code, int) else ExitCode.OK)


app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True,
                  help="Build, check and grade the vecgrade course (plain nbgrader underneath).")
COURSE = typer.Option(Path("."), "--course", "-c", help="Course directory (holds nbgrader_config.py).")


def _version(value: bool) -> None:
    if value:
        try:
            say(escape(f"vecgrade {version('vecgrade')}"))
        except PackageNotFoundError:
            say("vecgrade (not installed)")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def main(_: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                help="Print the version and exit.")):
    """Build, check and grade the vecgrade course (plain nbgrader underneath)."""


COURSE_FIX = "cd into the course folder or pass --course/-c DIR"


def open_course(root: Path):
    from graders.coursedir.course import Course
    try:
        course = Course(root)
    except FileNotFoundError as exc:
        fail(f"{exc}; {COURSE_FIX}")
    if not (course.root / "assignments").is_dir():
        fail(f"{course.root} has no assignments/ folder: not a vecgrade course; {COURSE_FIX}")
    return course


def choose(kind: str, name: str, valid, where: str = "") -> None:
    """One line naming what exists instead of a KeyError or an empty result."""
    if name not in valid:
        fail(f"no {kind} {name!r}{where}; choose one of: {', '.join(valid) or '(none)'}")


def find_assignment(course, name: str):
    """The assignment's definitions, imported (torch and all): every assignment's, once (``Course.assignments``
    imports them again on each use)."""
    assignments = course.assignments
    choose("assignment", name, list(assignments))
    return assignments[name]


def find_entry(course, name: str):
    """The assignment's entry in the definitions' catalogue (names and points, no torch: ``Course.catalogue``)."""
    catalogue = course.catalogue
    choose("assignment", name, list(catalogue))
    return catalogue[name]


def gradebook(course):
    from graders.course.results import NoGradebook, open_gradebook
    try:
        return open_gradebook(course)
    except NoGradebook as exc:
        fail(str(exc))


def writable(path: Path, option: str) -> Path:
    """Fail before any work when a file cannot be written where ``option`` asks (and create nothing). The honest
    test is a write: a temporary file made and removed beside it, as the writers make theirs (a read-only or
    virtual file system such as /proc fails it even for root); an existing file must open for writing too."""
    where, fix = f"cannot write {path}", f"choose another {option} path"
    if path.is_dir():
        fail(f"{where}: it is a folder; {fix}")
    if not path.parent.is_dir():
        fail(f"{where}: folder {path.parent} does not exist; create it or {fix}")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        fail(f"{where}: no file can be created in {path.parent} ({exc.strerror or type(exc).__name__}); {fix}")
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            fail(f"{where}: {exc.strerror or type(exc).__name__}; {fix}")
    return path

