"""Autograde a whole class through nbgrader's API, one submission at a time, with a progress bar.

One process for the class keeps the reference worker warm between students.
A submission that nbgrader cannot grade is reported and the batch goes on.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

from sqlalchemy.exc import SAWarning

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from graders.course import Course


@dataclass
class StudentResult:
    student: str
    success: bool
    seconds: float
    reason: str = ""


def _reason(result: dict) -> str:
    text = (result.get("error") or result.get("log") or "").strip().splitlines()
    errors = [line for line in text if "ERROR" in line or "Error" in line]
    return (errors or text or ["unknown error"])[-1][:300]


def grade_class(course: Course, assignment: str, students: list[str], plain: bool = False,
                console: Console | None = None) -> list[StudentResult]:
    results = []
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
    columns = (TextColumn("[bold]autograde {task.fields[assignment]}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[student]}"))
    with course.api(plain) as api, Progress(*columns, console=console, transient=False) as progress:
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
    return results
