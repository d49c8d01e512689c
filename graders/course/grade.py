"""Autograde a whole class through nbgrader's API, with a progress bar, on N local processes or a Dask cluster.

The expensive steps of each submission (its kernel, the verdicts) run as a
pure function (``graders.pipeline.precomputed.execute_and_judge``), in
``jobs`` worker processes or as one Dask task per submission. Only this
process writes the gradebook: it records every result through nbgrader's own
autograde, with those steps replaced by one that puts the precomputed
notebook back, so SQLite never sees two writers and no row is lost or doubled.
A submission that cannot be graded is reported with nbgrader's reason, nothing
of it is recorded, and the batch goes on.
"""
from __future__ import annotations

import multiprocessing
import re
import secrets
import shutil
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import nbformat
from nbformat.validator import MissingIDFieldWarning
from nbgrader.preprocessors import SaveAutoGrades
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.exc import SAWarning

from graders.course.directory import Course
from graders.model.csvsafe import read_rows, write_rows
from graders.pipeline.precomputed import GradingJob, PutBackPrecomputed, definitions_files, execute_and_judge
from graders.pipeline.refusals import submission_refusal


@dataclass
class StudentResult:
    student: str
    success: bool
    seconds: float
    reason: str = ""


def nbgrader_reason(result: dict) -> str:
    """The most specific error line nbgrader logged (its own wrapper exception says nothing)."""
    lines = f"{result.get('log', '')}\n{result.get('error', '')}".splitlines()
    errors = [line.strip() for line in lines if re.match(r"\s*[\w.]*(Error|Exception|Missing)\b", line)
              and "NbGraderException" not in line]
    return _tidy((errors or [line.strip() for line in lines if line.strip()] or ["unknown error"])[-1])[:300]


def _tidy(line: str) -> str:
    """``graders.pipeline.intake.UnsafeSubmissionError: UnsafeSubmissionError: why`` reads
    ``UnsafeSubmissionError: why``."""
    line = re.sub(r"^(?:\w+\.)+(\w+: )", r"\1", line)
    return re.sub(r"^(\w+: )\1", r"\1", line)


def _skipped(result: dict) -> str:
    """nbgrader grades the known notebooks of a submission and only logs the others: that is not a success."""
    found = re.findall(r"Skipping unknown notebook: (\S.*)", result.get("log", ""))
    return "; ".join(f"Skipping unknown notebook {Path(f.strip()).name}" for f in found)


def _progress(console: Console | None, assignment: str, total: int) -> Progress:
    columns = (TextColumn("[bold]autograde {task.fields[assignment]}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[student]}"))
    return Progress(*columns, console=console, transient=False)


def _autograde(api, assignment: str, student: str) -> StudentResult:
    start = time.perf_counter()
    try:
        result = api.autograde(assignment, student, force=True, create=True)
    except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
        result = {"success": False, "error": f"{type(exc).__name__}: {exc}"}
    ok, skipped = bool(result.get("success")), _skipped(result)
    reason = "; ".join(r for r in (skipped, "" if ok else nbgrader_reason(result)) if r)
    return StudentResult(student, ok and not skipped, time.perf_counter() - start, reason)


def grade_class(course: Course, assignment: str, students: list[str], plain: bool = False,
                console: Console | None = None, confined: bool = True, jobs: int = 1,
                scheduler: str | None = None) -> list[StudentResult]:
    """Grade ``students``' submissions of ``assignment``: serially (``jobs=1``), on ``jobs`` local
    processes, or on the Dask cluster at ``scheduler``; ``plain`` is nbgrader alone (benchmarks)."""
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
    warnings.filterwarnings("ignore", category=MissingIDFieldWarning)  # students' notebooks, nbgrader fixes them
    if plain:
        results = []
        with course.api(plain, confined) as api, _progress(console, assignment, len(students)) as progress:
            task = progress.add_task("grade", total=len(students), assignment=assignment, student="")
            for student in students:
                progress.update(task, student=student)
                results.append(_autograde(api, assignment, student))
                progress.advance(task)
    else:
        results = _grade_split(course, assignment, students, console, confined, jobs, scheduler)
    record_ungraded(course, assignment, results)
    _drop_ungraded_rows(course, assignment, [r.student for r in results if not r.success])
    _remove_autograded(course, assignment, [r.student for r in results if not r.success])
    return results


def _remove_autograded(course: Course, assignment: str, students: list[str]) -> None:
    """A refused submission leaves nothing behind: a folder in ``autograded/`` without gradebook rows would make
    nbgrader's generate_feedback fail for the whole class, and the formgrader would count it but not list it."""
    for student in students:
        folder = course.root / "autograded" / student / assignment
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
        if folder.parent.is_dir() and not folder.parent.is_symlink() and not any(folder.parent.iterdir()):
            folder.parent.rmdir()


def _drop_ungraded_rows(course: Course, assignment: str, students: list[str]) -> None:
    """An ungraded submission is never a 0: nbgrader may have written zero rows for a submission it could
    only partly read (an unknown notebook name); ``ungraded.csv`` says why instead."""
    if not students:
        return
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(course.db_url) as gb:
        for student in students:
            try:
                gb.remove_submission(assignment, student)
            except MissingEntry:
                pass


def _timed(job: GradingJob) -> tuple[str, float]:
    start = time.perf_counter()
    return execute_and_judge(job), time.perf_counter() - start


def _sanitized_jobs(course: Course, config, assignment: str, student: str, steps: list, seed: int,
                    definitions: dict[str, str]) -> list[GradingJob]:
    """nbgrader's sanitize steps, read-only on the gradebook, on each of the student's notebooks.

    A notebook that fails here (unknown to the gradebook, say) gets no job: nbgrader's own
    autograde then meets it and reports its real reason.
    """
    folder = course.root / "submitted" / student / assignment
    if submission_refusal(str(course.root), str(folder), course.db_url, assignment, student):
        return []  # refused as a whole, before any kernel runs: nbgrader's autograde (SafeAutograde) says why
    jobs = []
    for path in sorted(folder.glob("*.ipynb")):
        resources = {"unique_key": path.stem, "metadata": {"path": str(folder)},
                     "nbgrader": {"student": student, "assignment": assignment, "notebook": path.stem,
                                  "db_url": course.db_url}}
        try:
            nb = nbformat.read(path, as_version=4)
            for step in config.Autograde.sanitize_preprocessors:
                nb, resources = step(config=config)(nb, resources)
        except Exception:  # noqa: BLE001 - left to nbgrader, which says why
            continue
        jobs.append(GradingJob(student, assignment, path.stem, nbformat.writes(nb), definitions, steps,
                               config, seed, str(folder)))
    return jobs


Outcome = tuple[GradingJob, "str | None", float, str]  # job, graded notebook or None, seconds, error


def _run_here(jobs: list[GradingJob]) -> Iterator[Outcome]:
    for job in jobs:
        try:
            graded, seconds = _timed(job)
            yield job, graded, seconds, ""
        except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
            yield job, None, 0.0, f"{type(exc).__name__}: {exc}"


def _run_pool(jobs: list[GradingJob], n: int, retry: bool = True) -> Iterator[Outcome]:
    """``n`` fresh (spawned) processes; each keeps its reference worker warm across submissions.

    A process that dies breaks the whole pool; its unfinished jobs run once more in a fresh one."""
    broken = []
    with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_timed, job): job for job in jobs}
        for future in as_completed(futures):
            try:
                graded, seconds = future.result()
                yield futures[future], graded, seconds, ""
            except BrokenProcessPool as exc:
                if retry:
                    broken.append(futures[future])
                else:
                    yield futures[future], None, 0.0, f"its grading process died ({exc})"
            except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
                yield futures[future], None, 0.0, f"grading failed: {type(exc).__name__}: {exc}"
    if broken:
        yield from _run_pool(broken, n, retry=False)


def _run_dask(jobs: list[GradingJob], scheduler: str) -> Iterator[Outcome]:
    """One task per notebook; a task whose worker dies is rerun elsewhere (Dask's own retry on
    worker loss, plus one for an error), and only a finished task returns a result."""
    from distributed import Client
    from distributed import as_completed as dask_completed
    with Client(scheduler, timeout="10s") as client:
        futures = {client.submit(_timed, job, pure=False, retries=1,
                                 key=f"vecgrade-{job.student}-{job.notebook_id}-{secrets.token_hex(4)}"): job
                   for job in jobs}
        for future in dask_completed(list(futures)):
            try:
                graded, seconds = future.result()
                yield futures[future], graded, seconds, ""
            except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: reported ungraded
                yield futures[future], None, 0.0, f"grading task failed: {type(exc).__name__}: {exc}"


def _grade_split(course: Course, assignment: str, students: list[str], console: Console | None,
                 confined: bool, jobs: int, scheduler: str | None) -> list[StudentResult]:
    config = course.config(confined=confined)
    pipeline = list(config.Autograde.autograde_preprocessors)
    cut = next((i for i, step in enumerate(pipeline) if issubclass(step, SaveAutoGrades)), len(pipeline))
    expensive, recording = pipeline[:cut], pipeline[cut:]
    seed = config.TrustedVerdicts.get("seed")
    seed = secrets.randbits(48) if seed is None else seed  # one per grading run, shared by every job
    definitions_dir = Path(config.TrustedVerdicts.get("assignments_dir", course.root / "assignments"))
    definitions = definitions_files(definitions_dir) if definitions_dir.is_dir() else {}
    with course.api(confined=confined):
        work = {s: _sanitized_jobs(course, config, assignment, s, expensive, seed, definitions) for s in students}
    if scheduler:  # a Dask worker may be on another machine: the kernel runs in a private scratch folder
        for job in (j for js in work.values() for j in js):
            job.path = None
    run: Callable[[list[GradingJob]], Iterator[Outcome]]
    if scheduler:
        run = lambda js: _run_dask(js, scheduler)  # noqa: E731
    elif jobs > 1:
        run = lambda js: _run_pool(js, jobs)  # noqa: E731
    else:
        run = _run_here
    errors: dict[str, list[str]] = {s: [] for s in students}
    seconds: dict[str, float] = {s: 0.0 for s in students}
    results = []
    with tempfile.TemporaryDirectory(prefix="vecgrade-graded-") as graded_dir, \
            _progress(console, assignment, len(students)) as progress:
        task = progress.add_task("grade", total=len(students), assignment=assignment, student="")
        remaining = {s: len(js) for s, js in work.items()}
        record_config = course.config(confined=confined)
        record_config.Autograde.autograde_preprocessors = [PutBackPrecomputed] + recording
        record_config.PutBackPrecomputed.results_dir = graded_dir
        with course.api(config=record_config) as api:

            def record(student: str) -> None:
                progress.update(task, student=student)
                if errors[student]:
                    results.append(StudentResult(student, False, seconds[student], "; ".join(errors[student])))
                else:
                    r = _autograde(api, assignment, student)
                    results.append(StudentResult(student, r.success, seconds[student] + r.seconds, r.reason))
                progress.advance(task)

            for student in [s for s, n in remaining.items() if n == 0]:
                record(student)  # nothing to precompute: nbgrader says why
            for job, graded, secs, error in run([j for js in work.values() for j in js]):
                seconds[job.student] += secs
                if graded is None:
                    errors[job.student].append(f"{job.notebook_id}.ipynb: {error}"[:300])
                else:
                    (Path(graded_dir) / f"{job.key}.ipynb").write_text(graded)
                remaining[job.student] -= 1
                if remaining[job.student] == 0:
                    record(job.student)
    order = {s: i for i, s in enumerate(students)}
    return sorted(results, key=lambda r: order[r.student])


UNGRADED = "ungraded.csv"


def record_ungraded(course: Course, assignment: str, results: list[StudentResult]) -> None:
    """Keep ``ungraded.csv`` (student, assignment, reason) current: the "could not grade" record.

    nbgrader writes no grade rows for a submission it could not grade, so the
    record of why lives here; a later successful grading removes the row.
    """
    path = course.root / UNGRADED
    done = {x.student for x in results}
    rows = [r for r in read_rows(path) if r["assignment"] != assignment or r["student"] not in done]
    rows += [{"student": r.student, "assignment": assignment, "reason": r.reason} for r in results if not r.success]
    if rows or path.exists():
        write_rows(path, ["student", "assignment", "reason"], rows)


def ungraded(course: Course, assignment: str) -> dict[str, str]:
    return {r["student"]: r["reason"] for r in read_rows(course.root / UNGRADED) if r["assignment"] == assignment}
