"""``vecgrade extend``: a student's extension of an assignment's due date, or the list of them, in nbgrader's
gradebook (``graders.course.extensions``), before or after the student's submission is in it."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from graders.cli.base import COURSE, app, fail, find_entry, gradebook, open_course, say
from graders.model.inert import inert


@app.command()
def extend(assignment: str = typer.Argument(..., help="The assignment."),
           student: Optional[str] = typer.Argument(None, help="The student (their nbgrader id)."),
           hours: Optional[float] = typer.Option(None, "--hours", help="Hours after the due date (replaces any "
                                                 "earlier extension; 0 removes it)."),
           listed: bool = typer.Option(False, "--list", help="List the assignment's extensions."),
           course: Path = COURSE):
    """A student's extension of an assignment's due date (`--hours N`), or the list of them (`--list`).

    Kept in nbgrader's gradebook, before or after the student's submission is in it, so grading, lateness and late
    penalties count from the student's own due date. nbgrader computes a late penalty when it grades: for a
    submission graded already, regrade it (`vecgrade grade ASSIGNMENT -s STUDENT`) to apply the extension."""
    from graders.course.extensions import ExtensionError, after_grading, check_hours, describe, extensions, grant
    c = open_course(course)
    name = find_entry(c, assignment).name
    if listed == (student is not None):
        fail("give a STUDENT and --hours N, or --list (not both)")
    if student is not None and hours is None:
        fail(f"how long? `vecgrade extend {assignment} {student} --hours N`")
    if listed and hours is not None:
        fail("--hours is for one student, not with --list")
    try:
        check_hours(hours or 0.0)
    except ExtensionError as exc:
        fail(str(exc))
    with gradebook(c) as gb:
        if listed:
            found = extensions(gb, name)
            for e in found:
                say(escape(inert(describe(e))))
            if not found:
                say(f"no extensions of {escape(name)}")
            return
        assert student is not None and hours is not None
        _known(c, gb, name, student)
        try:
            e = grant(gb, name, student, hours)
        except ExtensionError as exc:
            fail(str(exc))
    say(escape(inert(describe(e) if e.hours else f"{student}: no extension of {name}")))
    hint = after_grading(e)
    if hint:
        say(f"[yellow]note[/yellow]: {escape(inert(hint))}")


def _known(course, gb, assignment: str, student: str) -> None:
    """A student nbgrader knows: in the gradebook, in ``submitted/`` or in the exchange; else one line naming the
    known ones and nbgrader's way to add one (a typo never makes a new student)."""
    from graders.course.exchange import exchange_entries
    known = {s.id for s in gb.students} | set(course.submitted_students(assignment))
    known |= {e.student for e in exchange_entries(course) if e.assignment == assignment}
    if student not in known:
        fail(f"no student {student!r} in the gradebook, submitted/ or the exchange; choose one of: "
             f"{', '.join(sorted(known)) or '(none)'}, or add them first with `nbgrader db student add {student}`")
