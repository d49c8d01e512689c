"""Feedback HTML for the students who have grades, one nbgrader ``generate_feedback`` per student, always forced.

nbgrader's ``generate_feedback`` for a whole assignment stops at the first
folder in ``autograded/`` without gradebook rows (``MissingEntry: No such
taskcomment``) and reports only "Please see the above traceback". Here each
student with an autograded notebook and a submission in the gradebook gets
feedback; the others are skipped and named; a failure names its student.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nbgrader.api import Gradebook, MissingEntry

from graders.engine.course import Course
from graders.engine.paths import Step
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
                run.written.append(student)
            else:
                run.failed[student] = nbgrader_reason(result)
    return run
