"""Autograde a whole class through nbgrader's API, one submission at a time, with a progress bar.

One process for the class keeps the reference worker warm between students.
A submission that nbgrader cannot grade is reported and the batch goes on.
"""
from __future__ import annotations

import csv
import re
import time
import warnings
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.exc import SAWarning

from graders.checks.submission import GradingRun
from graders.course.directory import Course


@dataclass
class StudentResult:
    student: str
    success: bool
    seconds: float
    reason: str = ""


def _reason(result: dict) -> str:
    """The most specific error line nbgrader logged (its own wrapper exception says nothing)."""
    lines = f"{result.get('log', '')}\n{result.get('error', '')}".splitlines()
    errors = [line.strip() for line in lines if re.match(r"\s*[\w.]*(Error|Exception)\b", line)
              and "NbGraderException" not in line]
    return (errors or [line.strip() for line in lines if line.strip()] or ["unknown error"])[-1][:300]


def grade_class(course: Course, assignment: str, students: list[str], plain: bool = False,
                console: Console | None = None, confined: bool = True) -> list[StudentResult]:
    results = []
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
    columns = (TextColumn("[bold]autograde {task.fields[assignment]}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[student]}"))
    with course.api(plain, confined) as api, GradingRun(api.config.TrustedVerdicts.get("seed")) as run, \
            Progress(*columns, console=console, transient=False) as progress:
        api.config.TrustedVerdicts.run = run  # one grading run for the class: one seed, warm reference workers
        task = progress.add_task("grade", total=len(students), assignment=assignment, student="")
        for student in students:
            progress.update(task, student=student)
            start = time.perf_counter()
            try:
                result = api.autograde(assignment, student, force=True, create=True)
            except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
                result = {"success": False, "error": f"{type(exc).__name__}: {exc}"}
            ok = bool(result.get("success"))
            results.append(StudentResult(student, ok, time.perf_counter() - start, "" if ok else _reason(result)))
            progress.advance(task)
    record_ungraded(course, assignment, results)
    return results


UNGRADED = "ungraded.csv"


def record_ungraded(course: Course, assignment: str, results: list[StudentResult]) -> None:
    """Keep ``ungraded.csv`` (student, assignment, reason) current: the "could not grade" record.

    nbgrader writes no grade rows for a submission it could not grade, so the
    record of why lives here; a later successful grading removes the row.
    """
    path = course.root / UNGRADED
    rows = []
    if path.exists():
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["assignment"] != assignment
                    or r["student"] not in {x.student for x in results}]
    rows += [{"student": r.student, "assignment": assignment, "reason": r.reason} for r in results if not r.success]
    if rows or path.exists():
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["student", "assignment", "reason"])
            writer.writeheader()
            writer.writerows(rows)


def ungraded(course: Course, assignment: str) -> dict[str, str]:
    path = course.root / UNGRADED
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {r["student"]: r["reason"] for r in csv.DictReader(f) if r["assignment"] == assignment}
