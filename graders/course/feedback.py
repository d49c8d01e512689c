"""Feedback HTML for the students who have grades, one nbgrader ``generate_feedback`` per student, always forced.

nbgrader's ``generate_feedback`` for a whole assignment stops at the first
folder in ``autograded/`` without gradebook rows (``MissingEntry: No such
taskcomment``) and reports only "Please see the above traceback". Here each
student with an autograded notebook and a submission in the gradebook gets
feedback; the others are skipped and named; a failure names its student.

A student may hold several feedback pages of one assignment (one per graded
submission with ``vecgrade serve``, each saying "Graded on submit"); the page
written here, the teacher's grading, is marked as the grade of record at its
top (``mark_of_record``), so the student can tell it among them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from nbgrader.api import Gradebook, MissingEntry

from graders.course.banner import add_banner, when
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.engine.record import nbgrader_reason


@dataclass
class FeedbackRun:
    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)       # autograded, but no grades in the gradebook
    failed: dict[str, str] = field(default_factory=dict)   # student -> nbgrader's reason


def autograded_students(course: Course, assignment: str) -> list[str]:
    return course.paths.students(Step.AUTOGRADED, assignment)


def graded_students(gb: Gradebook, assignment: str, students: list[str]) -> list[str]:
    """Those of ``students`` with a submission of ``assignment`` in the gradebook."""
    out = []
    for student in students:
        try:
            gb.find_submission(assignment, student)
        except MissingEntry:
            continue
        out.append(student)
    return out


def write_feedback(course: Course, assignment: str, students: list[str] | None = None) -> FeedbackRun:
    """Regenerate the feedback of ``students`` (default: every autograded student) who have grades."""
    candidates = autograded_students(course, assignment) if students is None else students
    with Gradebook(course.db_url) as gb:
        graded = graded_students(gb, assignment, candidates)
    run = FeedbackRun(skipped=[s for s in candidates if s not in graded])
    with course.api() as api:
        for student in graded:
            result = api.generate_feedback(assignment, student, force=True)
            if result.get("success"):
                mark_of_record(course, assignment, student)
                run.written.append(student)
            else:
                run.failed[student] = nbgrader_reason(result)
    return run


def of_record(assignment: str, at: float, tz: str = "UTC") -> str:
    """The line on top of the teacher's feedback page."""
    return (f"Graded by your teacher at {when(at, tz)}: this page is your grade of record for {assignment} "
            "(a page that says \"Graded on submit\" is not).")


def mark_of_record(course: Course, assignment: str, student: str, at: float | None = None) -> list[str]:
    """Put ``of_record`` on top of each feedback page of ``student``'s ``assignment`` just written; the pages'
    names."""
    folder = course.paths.folder(Step.FEEDBACK, assignment, student)
    tz = course.config().Exchange.get("timezone", "UTC")
    line = of_record(assignment, time.time() if at is None else at, tz if isinstance(tz, str) else "UTC")
    pages = sorted(folder.glob("*.html")) if folder.is_dir() else []
    for page in pages:
        add_banner(page, line)
    return [p.name for p in pages]
