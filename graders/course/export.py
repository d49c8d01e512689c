"""An LMS-ready CSV: one row per student, one column per exercise part, a max-points row and a status column.

``PartsExportPlugin`` is an nbgrader exporter plugin, so the same file comes from
``nbgrader export --exporter=graders.course.export.PartsExportPlugin --to grades.csv``
(run in the course directory) and from ``vecgrade export``. Names and emails are
nbgrader's. A part without a mark (ungraded, not graded yet, not submitted) is an
empty cell, never a 0, and the status column says why. When the definitions differ from
the grade cells the class was graded on, the max-points row's status cell says how.
"""
from __future__ import annotations

from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins.export import ExportPlugin
from traitlets import Unicode

from graders.course.directory import Course
from graders.course.results import class_marks, max_points, version_changes
from graders.model.csvsafe import write_rows
from graders.model.exercise import Assignment

MAX_ROW = "max points"


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def export_rows(gb: Gradebook, course: Course, assignments: list[Assignment],
                students: list[str] | None = None) -> list[dict[str, str]]:
    """The export as dict rows, the max-points row first. Columns are ``assignment/grade_id``."""
    people = {s.id: s for s in gb.students}
    per_assignment = {a.name: {r.student: r for r in class_marks(gb, course, a)} for a in assignments}
    chosen = students or sorted(set(people) | {s for rows in per_assignment.values() for s in rows})
    top = {"student_id": MAX_ROW, "first_name": "", "last_name": "", "email": ""}
    for a in assignments:
        maxes = max_points(a)
        changes = version_changes(gb, a)
        top[f"{a.name} status"] = f"changed after grading: {'; '.join(changes)}" if changes else ""
        top.update({f"{a.name}/{gid}": _fmt(m) for gid, m in maxes.items()})
        top[f"{a.name} total"] = _fmt(sum(maxes.values()))
    out = [top]
    for student in chosen:
        person = people.get(student)
        row = {"student_id": student, "first_name": getattr(person, "first_name", None) or "",
               "last_name": getattr(person, "last_name", None) or "", "email": getattr(person, "email", None) or ""}
        for a in assignments:
            r = per_assignment[a.name].get(student)
            row[f"{a.name} status"] = r.status if r else "not submitted"
            for gid in max_points(a):
                row[f"{a.name}/{gid}"] = _fmt(r.marks[gid]) if r else ""
            row[f"{a.name} total"] = _fmt(r.total) if r else ""
        out.append(row)
    return out


def write_csv(rows: list[dict[str, str]], dest: Path) -> None:
    """The rows (max points first) as CSV; a cell a spreadsheet would run as a formula is marked as text."""
    write_rows(dest, list(rows[0]), rows)


class PartsExportPlugin(ExportPlugin):
    """nbgrader exporter: per-part marks with status, for one or all assignments (``--assignment``)."""

    course = Unicode(".", help="Course directory (holds nbgrader_config.py and assignments/).").tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        course = Course(Path(self.course))
        known = course.assignments
        in_gradebook = {a.name for a in gradebook.assignments}
        names = [str(a) for a in self.assignment] or [n for n in known if n in in_gradebook]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown assignment(s) {', '.join(unknown)}; known: {', '.join(known)}")
        dest = Path(self.to or "grades.csv")
        rows = export_rows(gradebook, course, [known[n] for n in names], [str(s) for s in self.student] or None)
        write_csv(rows, dest)
        self.log.info("Exported %d student(s) x %d assignment(s) to %s", len(rows) - 1, len(names), dest)
