"""``vecgrade grade`` and ``vecgrade feedback``: a class autograded through nbgrader, and its feedback regenerated."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from graders.cli.base import COURSE, app, console, fail, find_assignment, find_entry, gradebook, open_course, say
from graders.model.exits import ExitCode
from graders.model.inert import inert


@app.command()
def grade(assignment: str, course: Path = COURSE,
          student: Optional[list[str]] = typer.Option(None, "--student", "-s", help="Only these students."),
          jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1,
                                   help="Submissions graded at once on this machine (default: number of cores)."),
          scheduler: Optional[str] = typer.Option(None, help="Grade on this Dask cluster (tcp://HOST:PORT)."),
          plain: bool = typer.Option(False, help="nbgrader's pipeline without vecgrade's checks (benchmarks only).")):
    """Autograde every submission of ASSIGNMENT through nbgrader, with a progress bar; exit 1 if any failed."""
    import time

    if not plain and not scheduler:  # the grading processes' fork servers import torch while this process imports
        from graders.sandbox.launch import start_early
        start_early(min(jobs, len(student)) if student else jobs)  # grade_class: no more processes than students
    from graders.course.grade import grade_class
    from graders.course.lock import gradebook_lock
    from graders.course.results import gradebook_problem
    c = open_course(course)
    find_entry(c, assignment)  # the name checked in the catalogue: the definitions are imported where they are used
    submitted = c.submitted_students(assignment)
    if not submitted:
        fail(f"no submissions in submitted/*/{assignment}/: run `nbgrader collect {assignment}`, "
             f"or put each student's notebook in submitted/<student>/{assignment}/")
    unknown = [s for s in student or [] if s not in submitted]
    if unknown:
        fail(f"no submission of {assignment} from {', '.join(unknown)}; students who submitted: {', '.join(submitted)}")
    problem = gradebook_problem(c, assignment)
    if problem:
        fail(problem)
    if scheduler:
        _reach(scheduler)
    from graders.engine.startup import JailUnusable
    start = time.perf_counter()
    with gradebook_lock(c, waiting=lambda who: say(f"waiting for the gradebook, held by {escape(who)}")):
        try:
            results = grade_class(c, assignment, student or submitted, plain=plain, console=console,
                                  jobs=jobs, scheduler=scheduler)
        except JailUnusable as exc:
            fail(str(exc))
        bad = [r for r in results if not r.success]
        for r in bad:  # never a 0: each named, with why (and its code in ungraded.csv)
            say(f"[red]could not grade {escape(inert(r.student))}[/red]: {escape(inert(r.reason))}")
        say(f"graded {len(results) - len(bad)} of {len(results)} submissions in {time.perf_counter() - start:.1f} s")
        _timestamp_notes(c, assignment, [r.student for r in results if r.success])
        _refresh_feedback(c, assignment, [r.student for r in results if r.success])
    if bad or not results:
        raise typer.Exit(ExitCode.FAILED)


def _reach(scheduler: str) -> None:
    """A Dask scheduler that cannot be reached is a mistake in the command, said before any work."""
    from distributed import Client  # Dask loads in seconds; only --scheduler needs it
    try:
        with Client(scheduler, timeout="10s"):
            pass
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError (a malformed address) ...
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fail(f"cannot reach the Dask scheduler at {scheduler}: {why} "
             "(start it with `dask scheduler`, or leave out --scheduler to grade here)")


def _timestamp_notes(c, assignment: str, students: list[str]) -> None:
    """One line per graded submission whose timestamp.txt disagrees with its time of record."""
    from graders.pipeline.arrivals import arrivals
    recorded = arrivals(c.root)
    for s in students:
        note = recorded[s, assignment].note() if (s, assignment) in recorded else ""
        if note:
            say(f"[yellow]note[/yellow]: {escape(note)}")


def _refresh_feedback(c, assignment: str, students: list[str]) -> None:
    """A regrade must not leave stale feedback: students who already had feedback get it regenerated now
    (nbgrader's generate_feedback would otherwise skip them without --force)."""
    from graders.course.feedback import write_feedback
    from graders.coursedir.paths import Step
    paths = c.paths
    stale = [s for s in students if paths.folder(Step.FEEDBACK, assignment, s).is_dir()]
    if not stale:
        return
    run = write_feedback(c, assignment, stale)
    for s, why in run.failed.items():
        say(f"[yellow]feedback for {escape(s)} not regenerated[/yellow]: {escape(why)}")
    say(f"feedback regenerated for {len(run.written)} student(s) who had it")


@app.command()
def feedback(assignment: str, course: Path = COURSE):
    """Regenerate the feedback HTML of every graded student of ASSIGNMENT (always forced).

    Students without grades are skipped and named."""
    from graders.course.feedback import autograded_students, write_feedback
    from graders.course.results import nothing_graded
    from graders.coursedir.paths import Step
    c = open_course(course)
    find_assignment(c, assignment)
    if not autograded_students(c, assignment):
        fail(nothing_graded(c, assignment))
    gradebook(c).close()
    run = write_feedback(c, assignment)
    if run.skipped:
        say(f"skipped {len(run.skipped)} without grades (see `vecgrade status {escape(assignment)}`): "
            f"{escape(', '.join(run.skipped))}")
    for s, why in run.failed.items():
        say(f"[red]no feedback for {escape(s)}[/red]: {escape(why)}")
    where = c.paths.step_root(Step.FEEDBACK)
    say(f"feedback for {len(run.written)} student(s) of {escape(assignment)} in {escape(str(where))}")
    if run.failed:
        raise typer.Exit(ExitCode.FAILED)
