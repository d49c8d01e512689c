"""``vecgrade build`` and ``vecgrade validate``: the course's notebooks from its definitions, and the definitions
checked against their own reference, alternatives and wrong answers.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from graders.cli.base import COURSE, app, choose, console, errors, fail, find_assignment, open_course, say
from graders.model.exits import ExitCode


@app.command()
def build(course: Path = COURSE, check: bool = typer.Option(False, help="Only check that source/ is up to date."),
          wheel: bool = typer.Option(False, "--wheel", help="Also write dist/<the wheel students install>.")):
    """Write source/<assignment>/<assignment>.ipynb from assignments/."""
    from graders.course.build import is_stale, notebook_path, update_source
    c = open_course(course)
    if wheel:
        from graders.course.wheel import WheelError, write_wheel
        try:
            say(escape(write_wheel(c.root)))
        except WheelError as exc:
            fail(str(exc))
    stale, unchanged = [], []
    for assignment in c.assignments.values():
        path = notebook_path(c.root, assignment)
        if check:
            if is_stale(c.root, assignment):
                stale.append(path)
        elif update_source(c.root, assignment):
            say(f"wrote {escape(str(path.relative_to(c.root)))}")
        else:
            unchanged.append(assignment.name)
    if unchanged:
        say(f"up to date, not written: {escape(', '.join(unchanged))}")
    if stale:
        say("[red]out of date (run `vecgrade build`):[/red] " + escape(", ".join(map(str, stale))))
        raise typer.Exit(ExitCode.FAILED)


@app.command()
def validate(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments to check (default: all)."),
             exercise: Optional[list[str]] = typer.Option(None, "--exercise", "-e", help="Only these exercises."),
             course: Path = COURSE, seed: int = typer.Option(0, help="Seed of the hidden cases."),
             form: str = typer.Option("table", "--format",
                                      help="table (fits 100 columns), markdown, or csv (one row per exercise).")):
    """Reference and alternatives pass all parts; loop, half loop, list version and stub fail where they should."""
    from graders.course import validate_view
    from graders.course.validate import validate_assignment
    choose("format", form, ["table", "markdown", "csv"])
    c = open_course(course)
    chosen = assignments or list(c.assignments)
    for name in chosen:
        find_assignment(c, name)
    known = [ex.name for name in chosen for ex in c.assignments[name].exercises]
    for name in exercise or []:
        choose("exercise", name, known, f" in {', '.join(chosen)}")
    failed: list[tuple[str, list[str]]] = []
    if form == "csv":
        sys.stdout.write(validate_view.csv_header())
    for name in chosen:
        with errors.status(f"validating {name} ..."):  # and a line per program graded: minutes go by
            rows = validate_assignment(c.assignments[name], seed=seed, only=exercise or None,
                                       progress=lambda line: errors.print(escape(line), highlight=False))
        failed += [(f"{name}/{row.exercise.name}", row.problems) for row in rows if row.problems]
        if not rows:
            continue
        if form == "csv":
            sys.stdout.write(validate_view.csv_rows(name, rows))
        elif form == "markdown":
            sys.stdout.write(validate_view.markdown(name, rows) + "\n")
        else:
            console.print(validate_view.table(name, rows))
    if form == "table":
        console.print(validate_view.LEGEND, style="dim", highlight=False, width=min(100, console.width))
        for where, problems in failed:
            say(f"[red]{escape(where)}[/red]: " + escape("; ".join(problems)))
    if failed:
        raise typer.Exit(ExitCode.FAILED)
