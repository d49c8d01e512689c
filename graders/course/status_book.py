"""What ``vecgrade status`` reads of nbgrader's gradebook: one ``Book`` per assignment, read in one pass.

The contract: ``read_books`` opens the gradebook once (``results.open_gradebook``: ``NothingGraded`` without one,
``NoGradebook`` when it cannot be opened) and asks it, in a few queries whatever the class size (not one per
student): the due dates, the submissions (timestamp, extension), each submission's score and whether any grade
was set, and each one's late penalty, each as nbgrader's ORM computes it (``SubmittedAssignment.score``:
per grade the manual score, else the automatic one, plus extra credit; ``late_submission_penalty``: the sum over
its notebooks, as autograde stored it; ``total_seconds_late``: the time of record after the due date plus the
extension, now). A row that only holds an extension (``extensions.is_placeholder``: no timestamp, no grade set)
is no graded submission. The grade cells' differences from the definitions are asked per assignment
(``results._differences``, one source with the export's note). It decides nothing: ``status_state`` does.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from graders.course.results import _differences, open_gradebook
from graders.coursedir.course import Course
from graders.model.catalogue import AssignmentEntry


@dataclass
class Graded:
    """What the gradebook holds of one graded submission."""
    score: float                          # every notebook's, manual grades and extra credit included
    seconds_late: float                   # after the student's due date as it is now (the extension included)
    timestamp: datetime.datetime | None
    penalty: float = 0.0                  # the late penalty nbgrader's late-submission plugin took, at autograde

    @property
    def shown(self) -> float:
        """The score the feedback page states: nbgrader's ``GetGrades`` writes the score less the late penalty."""
        return self.score - self.penalty


@dataclass
class Book:
    """What ``status`` reads of the gradebook for one assignment."""
    due: datetime.datetime | None = None
    graded: dict[str, Graded] = field(default_factory=dict)
    extensions: dict[str, float] = field(default_factory=dict)
    points: list[str] = field(default_factory=list)   # grade cells added, removed or of other points since


def _seconds_late(timestamp: datetime.datetime | None, due: datetime.datetime | None,
                  extension: datetime.timedelta | None) -> float:
    """nbgrader's ``SubmittedAssignment.total_seconds_late``."""
    if timestamp is None or due is None:
        return 0.0
    return max(0.0, (timestamp - due - (extension or datetime.timedelta())).total_seconds())


def read_books(course: Course, names: list[str], catalogue: dict[str, AssignmentEntry]) -> dict[str, Book]:
    """{assignment: its ``Book``} for ``names``, with the grade cells' differences from the definitions
    (``results._differences``)."""
    from nbgrader.api import Assignment, Grade, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import func
    out = {name: Book() for name in names}
    with open_gradebook(course) as gb:
        db = gb.db
        for name in names:
            if name in catalogue:
                shape, points = _differences(gb, catalogue[name])
                out[name].points = shape + points
        subs = (db.query(Assignment.name, Assignment.duedate, SubmittedAssignment.id, SubmittedAssignment.student_id,
                         SubmittedAssignment.timestamp, SubmittedAssignment.extension)
                .join(SubmittedAssignment, SubmittedAssignment.assignment_id == Assignment.id)
                .filter(Assignment.name.in_(names)).all())
        ids = [row[2] for row in subs]
        scores = {sid: (float(score or 0), int(set_ or 0)) for sid, score, set_ in
                  db.query(SubmittedNotebook.assignment_id, func.sum(Grade.score),
                           func.count(Grade.auto_score) + func.count(Grade.manual_score))
                  .join(Grade, Grade.notebook_id == SubmittedNotebook.id)
                  .filter(SubmittedNotebook.assignment_id.in_(ids)).group_by(SubmittedNotebook.assignment_id)}
        penalties = {sid: float(p or 0) for sid, p in
                     db.query(SubmittedNotebook.assignment_id, func.sum(SubmittedNotebook.late_submission_penalty))
                     .filter(SubmittedNotebook.assignment_id.in_(ids)).group_by(SubmittedNotebook.assignment_id)}
        for name, due in db.query(Assignment.name, Assignment.duedate).filter(Assignment.name.in_(names)):
            out[name].due = due
        for name, due, sid, student, timestamp, extension in subs:
            book = out[name]
            if extension:
                book.extensions[student] = extension.total_seconds() / 3600
            score, grades_set = scores.get(sid, (0.0, 0))
            if timestamp is None and not grades_set:  # a placeholder (extensions.is_placeholder)
                continue
            book.graded[student] = Graded(score, _seconds_late(timestamp, due, extension), timestamp,
                                          penalties.get(sid, 0.0))
    return out
