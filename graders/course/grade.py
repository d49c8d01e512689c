"""Autograde a whole class through nbgrader's API, with a progress bar, on N local processes or a Dask cluster.

Each submission is one grading job (graders.engine.request, graders.engine.job.grade) run by the executor of an
``Engine`` (graders.engine.coordinator): this process, N worker processes, or one Dask task per submission.
Only this process writes the gradebook: it records every graded outcome through nbgrader's own autograde, run
once on the graded notebook, so SQLite never sees two writers and no row is lost or doubled. A submission that
cannot be graded is reported with its reason, nothing of it is recorded, and the batch goes on.
"""
from __future__ import annotations

import shutil
import warnings

from nbformat.validator import MissingIDFieldWarning
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.exc import SAWarning

from graders.course.ungraded import UNGRADED, record_ungraded, ungraded
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.engine.coordinator import Engine
from graders.engine.record import SubmissionResult, autograde

__all__ = ["SubmissionResult", "grade_class", "record_ungraded", "settle_ungraded", "ungraded", "UNGRADED"]


def _progress(console: Console | None) -> Progress:
    columns = (TextColumn("[bold]autograde {task.fields[assignment]}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[student]}"))
    return Progress(*columns, console=console, transient=False)


def grade_class(course: Course, assignment: str, students: list[str], plain: bool = False,
                console: Console | None = None, confined: bool = True, jobs: int = 1,
                scheduler: str | None = None, seed: int | None = None) -> list[SubmissionResult]:
    """Grade ``students``' submissions of ``assignment``: serially (``jobs=1``), on ``jobs`` local
    processes, or on the Dask cluster at ``scheduler``; ``plain`` is nbgrader alone (benchmarks).

    Never more local processes than submissions: one student (``vecgrade grade -s``) is graded in this process,
    which measures the reference only for the exercises whose "fast" part it reaches, when it reaches them (a pool
    measures every exercise's reference before the first notebook, to share it: a second fork server and every
    exercise's measurement for nothing when there is one notebook, stubs included)."""
    jobs = max(1, min(jobs, len(students)))
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
    warnings.filterwarnings("ignore", category=MissingIDFieldWarning)  # students' notebooks, nbgrader fixes them
    if plain:
        results = []
        with _progress(console) as progress, course.api(plain, confined) as api:
            task = progress.add_task("grade", total=len(students), assignment=assignment, student="")
            for student in students:
                progress.update(task, student=student)
                results.append(autograde(api, assignment, student))
                progress.advance(task)
    else:
        # the grader (and its processes) before the progress bar, whose thread a forked process must not inherit
        with Engine(course, assignment, jobs=jobs, scheduler=scheduler, seed=seed,
                         confined=confined) as grader, _progress(console) as progress:
            task = progress.add_task("grade", total=len(students), assignment=assignment, student="")
            results = grader.grade(students, on_start=lambda s: progress.update(task, student=s),
                                   on_result=lambda r: progress.advance(task))
    settle_ungraded(course, assignment, results)
    return results


def settle_ungraded(course: Course, assignment: str, results: list[SubmissionResult]) -> None:
    """What a grading leaves of the submissions it could not grade: a row of ``ungraded.csv`` with the reason (the
    batch and the service alike). A submission refused or not graded before recording changed nothing, so its
    earlier marks and files stay; one whose recording by nbgrader failed leaves no gradebook rows and nothing in
    ``autograded/`` (nbgrader may have written part of it)."""
    record_ungraded(course, assignment, results)
    failed = [r.student for r in results if not r.success and r.recorded]
    _drop_ungraded_rows(course, assignment, failed)
    _remove_autograded(course, assignment, failed)


def _remove_autograded(course: Course, assignment: str, students: list[str]) -> None:
    """A refused submission leaves nothing behind: a folder in ``autograded/`` without gradebook rows would make
    nbgrader's generate_feedback fail for the whole class, and the formgrader would count it but not list it."""
    for student in students:
        folder = course.paths.folder(Step.AUTOGRADED, assignment, student)
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
        if folder.parent.is_dir() and not folder.parent.is_symlink() and not any(folder.parent.iterdir()):
            folder.parent.rmdir()


def _drop_ungraded_rows(course: Course, assignment: str, students: list[str]) -> None:
    """An ungraded submission is never a 0: nbgrader may have written zero rows for a submission it could
    only partly read (an unknown notebook name); ``ungraded.csv`` says why instead. A student's extension stays
    (``graders.course.extensions``: a row without a timestamp, which no view counts as graded)."""
    if not students:
        return
    from nbgrader.api import Gradebook, MissingEntry

    from graders.course.extensions import grant
    with Gradebook(course.db_url) as gb:
        for student in students:
            try:
                kept = gb.find_submission(assignment, student).extension
                gb.remove_submission(assignment, student)
            except MissingEntry:
                continue
            if kept:  # the student's extension outlives a refused submission (as a row without marks)
                grant(gb, assignment, student, kept.total_seconds() / 3600)
