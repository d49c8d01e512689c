"""``vecgrade status``: where each assignment stands, from the course folders, ``ungraded.csv`` and the gradebook.

Feedback is out of date when its HTML is missing or older than the autograded
notebook it was made from (nbgrader skips existing feedback unless forced).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from graders.course.directory import Course
from graders.course.grade import ungraded
from graders.course.results import feedback_paths


@dataclass
class AssignmentStatus:
    assignment: str
    released: bool
    submitted: list[str]
    graded: list[str]
    ungraded: dict[str, str]                          # student -> why
    stale_feedback: list[str] = field(default_factory=list)

    @property
    def waiting(self) -> list[str]:
        """Submitted but neither graded nor recorded as ungraded."""
        return [s for s in self.submitted if s not in self.graded and s not in self.ungraded]


def assignment_status(course: Course, name: str) -> AssignmentStatus:
    released = (course.root / "release" / name).is_dir()
    submitted = course.submitted_students(name)
    why = ungraded(course, name)
    graded, stale = [], []
    for student in submitted:
        notebook, html = feedback_paths(course, name, student)
        if student in why or not notebook.exists():
            continue
        graded.append(student)
        if not html.exists() or html.stat().st_mtime < notebook.stat().st_mtime:
            stale.append(student)
    return AssignmentStatus(name, released, submitted, graded, why, stale)
