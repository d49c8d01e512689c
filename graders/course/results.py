"""Who was graded, who was not and why, and their part marks: the one source for report, status and export.

An ungraded submission (nbgrader could not grade it; the reason is in
``ungraded.csv``) is never shown as a 0: its marks are ``None`` and its
status says why. Reading never creates a gradebook: a course that was never
graded has none, and ``Course`` callers get ``NoGradebook`` instead.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from graders.course.directory import Course, gradebook_marks
from graders.course.grade import ungraded
from graders.model.exercise import PARTS, Assignment

SPEEDUP = re.compile(r"speedup (\d+(?:\.\d+)?)x")


class NoGradebook(FileNotFoundError):
    """The course has no gradebook.db yet (nothing was graded)."""


def open_gradebook(course: Course) -> Gradebook:
    """nbgrader's gradebook, only if it exists (``Gradebook(url)`` would silently create an empty one)."""
    path = course.root / "gradebook.db"
    if not path.exists():
        raise NoGradebook(f"no gradebook in {course.root}: nothing graded yet (run `vecgrade grade ASSIGNMENT`)")
    return Gradebook(course.db_url)


@dataclass
class StudentRow:
    student: str
    marks: dict[str, float | None]  # grade_id -> score; None: no mark (ungraded or not graded yet)
    status: str                      # "graded", "graded, late ...", "ungraded: why", "not graded yet"

    @property
    def graded(self) -> bool:
        return self.status.startswith("graded")

    @property
    def total(self) -> float | None:
        return sum(m or 0 for m in self.marks.values()) if self.graded else None


def max_points(assignment: Assignment) -> dict[str, float]:
    return {ex.grade_id(p): ex.points.of(p) for ex in assignment.exercises for p in PARTS}


def _late(seconds: float) -> str:
    return f"late {seconds / 3600:.1f} h" if seconds >= 360 else f"late {seconds:.0f} s"


def class_marks(gb: Gradebook, course: Course, assignment: Assignment) -> list[StudentRow]:
    """One row per student who submitted or is in the gradebook for ``assignment``, sorted by name.

    The marks table used by ``report``, its CSV and the export; swap this one function to change it.
    """
    ids = list(max_points(assignment))
    why = ungraded(course, assignment.name)
    submitted = set(course.submitted_students(assignment.name))
    rows: dict[str, StudentRow] = {}
    for student, (marks, late) in gradebook_marks(gb, assignment).items():
        rows[student] = StudentRow(student, marks, "graded" + (f", {_late(late)}" if late > 0 else ""))
    for student in submitted | set(why):
        if student in why:
            rows[student] = StudentRow(student, {i: None for i in ids}, f"ungraded: {why[student]}")
        elif student not in rows:
            rows[student] = StudentRow(student, {i: None for i in ids}, "not graded yet")
    return [rows[s] for s in sorted(rows)]


@dataclass
class Verdicts:
    """What the grade cells of the autograded notebooks said, per exercise."""
    speedups: dict[str, list[float]] = field(default_factory=dict)
    failures: dict[str, Counter] = field(default_factory=dict)


def _message(output) -> tuple[bool, str]:
    if output.get("output_type") == "error":
        return False, str(output.get("evalue", ""))
    return True, "".join(output.get("text", "")) if output.get("output_type") == "stream" else ""


def read_verdicts(course: Course, assignment: Assignment, students: list[str]) -> Verdicts:
    """Measured speedups and failure messages from the grade-cell outputs the grader wrote."""
    out = Verdicts({ex.name: [] for ex in assignment.exercises}, {ex.name: Counter() for ex in assignment.exercises})
    for student in students:
        path = course.root / "autograded" / student / assignment.name / f"{assignment.name}.ipynb"
        if not path.exists():
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            found = assignment.part_of(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))
            if not found:
                continue
            ex, part = found
            for output in cell.get("outputs", []):
                passed, text = _message(output)
                if part == "fast" and (m := SPEEDUP.search(text)):
                    out.speedups[ex.name].append(float(m.group(1)))
                if not passed:
                    out.failures[ex.name][f"{part}: {_generic(text)}"] += 1
    return out


def _generic(message: str) -> str:
    """Failure messages differing only in measured numbers count as one (``speedup 1.3x`` ~ ``speedup 1.1x``)."""
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    return re.sub(r"\b\d+\.\d+", "#", first)[:200]


def feedback_paths(course: Course, assignment: str, student: str) -> tuple[Path, Path]:
    """(autograded notebook, its feedback HTML)."""
    return (course.root / "autograded" / student / assignment / f"{assignment}.ipynb",
            course.root / "feedback" / student / assignment / f"{assignment}.html")
