"""``vecgrade status``: where each assignment stands, from the course folders, the gradebook, ``ungraded.csv`` and
the records.

Graded means what report, feedback and export read: a submission in the gradebook (without a
gradebook, nothing is graded, whatever ``autograded/`` holds). A graded student's feedback is "not
written yet" when there is no HTML, and "out of date" when the HTML is older than the autograded
notebook it was made from (nbgrader skips existing feedback unless forced). Every ungraded
submission is named with its reason, and every disagreement between a submission's
``timestamp.txt`` and its time of record is named too. ``status_table`` builds the table (other
sections, such as a grading queue, can be added beside it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rich.markup import escape
from rich.table import Table

from graders.course.results import NothingGraded, feedback_paths, gradebook_submissions
from graders.course.ungraded import ungraded
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.inert import inert
from graders.pipeline.arrivals import Arrival, arrivals

COLUMNS = ("assignment", "released", "submitted", "graded", "ungraded", "not graded yet", "no feedback yet",
           "feedback out of date")


@dataclass
class AssignmentStatus:
    assignment: str
    released: bool
    submitted: list[str]
    graded: list[str]
    ungraded: dict[str, str]                          # student -> why
    no_feedback: list[str] = field(default_factory=list)
    stale_feedback: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)    # timestamp.txt against the time of record

    @property
    def waiting(self) -> list[str]:
        """Submitted but neither graded nor recorded as ungraded."""
        return [s for s in self.submitted if s not in self.graded and s not in self.ungraded]


def assignment_status(course: Course, name: str, in_gradebook: set[str],
                      recorded: dict[tuple[str, str], Arrival] | None = None) -> AssignmentStatus:
    """``name``'s status; ``in_gradebook``: the students with a submission of it in the gradebook; ``recorded``: the
    course's times of record (``arrivals``; read here when not given)."""
    released = course.paths.folder(Step.RELEASE, name).is_dir()
    submitted = course.submitted_students(name)
    why = ungraded(course, name)
    graded, missing, stale = [], [], []
    for student in submitted:
        if student in why or student not in in_gradebook:
            continue
        graded.append(student)
        notebook, html = feedback_paths(course, name, student)
        if not html.exists():
            missing.append(student)
        elif notebook.exists() and html.stat().st_mtime < notebook.stat().st_mtime:
            stale.append(student)
    recorded = arrivals(course.root) if recorded is None else recorded
    notes = [recorded[s, name].note() for s in submitted if (s, name) in recorded]
    return AssignmentStatus(name, released, submitted, graded, why, missing, stale, [n for n in notes if n])


def _names(students: list[str]) -> str:
    return escape(inert(", ".join(students))) or "0"  # folder names are text, never rich markup nor terminal control


def status_table(course: Course, names: list[str]) -> tuple[Table, list[str]]:
    """The status table of ``names``, and the lines to print under it (no gradebook, reasons, timestamp notes:
    plain text, to print without markup). A gradebook that cannot be opened raises ``NoGradebook``."""
    table = Table(title="vecgrade status")
    for column in COLUMNS:
        table.add_column(column)
    lines = []
    try:
        in_gradebook = gradebook_submissions(course, names)
    except NothingGraded as exc:
        in_gradebook = {}
        lines.append(str(exc))
    recorded = arrivals(course.root)
    for name in names:
        s = assignment_status(course, name, in_gradebook.get(name, set()), recorded)
        table.add_row(name, "yes" if s.released else "no", str(len(s.submitted)), str(len(s.graded)),
                      str(len(s.ungraded)), _names(s.waiting), _names(s.no_feedback), _names(s.stale_feedback))
        lines += [inert(f"{name}: could not grade {student}: {why}") for student, why in sorted(s.ungraded.items())]
        lines += [inert(f"{name}: note: {note}") for note in s.notes]
    return table, lines
