"""Extensions of a student's due date, kept where nbgrader keeps them: the submission's ``extension`` in the gradebook.

nbgrader 0.9.6 stores an extension on the student's submission row (``SubmittedAssignment.extension``) and has no
other place for it: ``Gradebook.grant_extension`` fails (``MissingEntry``) until the student's submission is in the
gradebook, and its formgrader has no control for it. ``grant`` therefore puts the student and an empty submission
in the gradebook first, with nbgrader's own ``add_submission`` (every notebook, grade and comment row, as autograde
would create them), then calls ``grant_extension``. Autograde later finds that row (``update_or_create_submission``
sets only the timestamp), so the extension stays through every grading, and its lateness and late penalty count
from the due date plus the extension.

A **placeholder** (``is_placeholder``) is a submission row with no timestamp and no score: nbgrader's autograde
always sets both (under vecgrade the timestamp is the time of record), so such a row holds an extension and nothing
graded. Views that count graded submissions skip it.
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

from nbgrader.api import Gradebook, MissingEntry, SubmittedAssignment

from graders.model.errors import VecgradeError


class ExtensionError(VecgradeError, ValueError):
    """A mistake in an extension's request: its message is the one line to print."""


@dataclass(frozen=True)
class Extension:
    student: str
    assignment: str
    hours: float
    due: datetime.datetime | None       # the assignment's due date (naive UTC), None without one
    graded: bool                        # False: a placeholder, no submission graded yet
    penalty: float = 0.0                # the late penalty autograde took (0 when not graded)
    seconds_late: float = 0.0           # after the student's due date as it is now (nbgrader's total_seconds_late)

    @property
    def until(self) -> datetime.datetime | None:
        """The student's own due date: the assignment's plus the extension."""
        return None if self.due is None else self.due + datetime.timedelta(hours=self.hours)


def is_placeholder(submission: SubmittedAssignment) -> bool:
    """A submission row that only holds an extension: no grading set its timestamp nor any score."""
    if submission.timestamp is not None:
        return False
    return all(g.auto_score is None and g.manual_score is None for nb in submission.notebooks for g in nb.grades)


def stale_penalty(penalty: float, seconds_late: float) -> bool:
    """Whether a graded submission's late penalty is stale: nbgrader's autograde stores the penalty it computed
    then (``SubmittedNotebook.late_submission_penalty``), but its lateness (``total_seconds_late``) counts from the
    due date plus the extension as they are now. A penalty taken from a submission that is not late now was taken
    before an extension that covers it: it stands, in every view and export, until the submission is graded again
    (``vecgrade grade A -s STUDENT``). (An extension that shortens the lateness without covering it leaves a
    penalty nbgrader would compute otherwise too; the gradebook keeps no time of the grant to tell, so ``vecgrade
    extend`` says it when it grants one.)"""
    return penalty > 0 and seconds_late <= 0


REGRADE = "regrade with `vecgrade grade {assignment} -s {student}` to apply it"  # the fix, as status and extend say it


def check_hours(hours: float) -> float:
    """``hours`` as an extension: a finite number, 0 (removes it) up to a year."""
    if not math.isfinite(hours) or hours < 0 or hours > 24 * 366:
        raise ExtensionError(f"--hours must be between 0 (removes the extension) and {24 * 366} (got {hours:g})")
    return hours


def _hours(submission: SubmittedAssignment) -> float:
    return submission.extension.total_seconds() / 3600 if submission.extension else 0.0


def _of(submission: SubmittedAssignment) -> Extension:
    graded = not is_placeholder(submission)
    return Extension(submission.student.id, submission.assignment.name, _hours(submission),
                     submission.assignment.duedate, graded,
                     float(submission.late_submission_penalty or 0) if graded else 0.0,
                     float(submission.total_seconds_late or 0) if graded else 0.0)


def grant(gb: Gradebook, assignment: str, student: str, hours: float) -> Extension:
    """Give ``student`` ``hours`` more on ``assignment`` (replacing any earlier extension; 0 removes it), whether or
    not their submission is in the gradebook yet. The assignment must be in the gradebook
    (``nbgrader generate_assignment`` puts it there) with a due date (nbgrader's lateness adds the extension to
    it, and fails on an extension without one: autograde stops with a ``TypeError``); the student is added when
    missing."""
    check_hours(hours)
    try:
        recorded = gb.find_assignment(assignment)
    except MissingEntry:
        raise ExtensionError(f"the gradebook has no assignment {assignment!r}: run `nbgrader generate_assignment "
                             f"{assignment}` first") from None
    if recorded.duedate is None and hours:  # nbgrader adds the extension to the due date: None + hours fails
        raise ExtensionError(f"{assignment} has no due date to extend: set one first, `nbgrader db assignment add "
                             f"{assignment} --duedate=\"YYYY-MM-DD HH:MM:SS UTC\"`")
    try:
        submission = gb.find_submission(assignment, student)
    except MissingEntry:
        if hours == 0:  # nothing to remove: no row is made for it
            return Extension(student, assignment, 0.0, gb.find_assignment(assignment).duedate, False)
        gb.update_or_create_student(student)
        submission = gb.add_submission(assignment, student)
    if hours:
        gb.grant_extension(assignment, student, hours=hours)
    else:
        gb.grant_extension(assignment, student)  # nbgrader: no time given removes it
        if is_placeholder(submission):  # a row made only for the extension goes with it
            gb.remove_submission(assignment, student)
            return Extension(student, assignment, 0.0, gb.find_assignment(assignment).duedate, False)
    return _of(gb.find_submission(assignment, student))


def extensions(gb: Gradebook, assignment: str) -> list[Extension]:
    """Every extension of ``assignment`` in the gradebook, by student ([] for an assignment it does not know)."""
    try:
        found = gb.find_assignment(assignment)
    except MissingEntry:
        return []
    return sorted((_of(s) for s in found.submissions if s.extension), key=lambda e: e.student)


def after_grading(e: Extension) -> str:
    """What ``vecgrade extend`` says when the submission it extended is graded already and its late penalty may
    change ("" when it is not graded, or took no penalty and is not late under the new due date: a regrade would
    change nothing): the penalty nbgrader stored at grading stands until the submission is graded again."""
    if not e.graded or (not e.penalty and not e.seconds_late):
        return ""
    taken = f"nbgrader's late penalty of {e.penalty:g} points was taken at grading" if e.penalty else \
        "any late penalty is computed at grading"
    return (f"{e.student}'s submission of {e.assignment} is graded already: {taken}, under the due date then; "
            + REGRADE.format(assignment=e.assignment, student=e.student))


def describe(e: Extension) -> str:
    """One line: "ada: +48 h, due 2026-01-03 12:00 UTC (the assignment: 2026-01-01 12:00 UTC); graded"."""
    stamp = "%Y-%m-%d %H:%M UTC"
    if e.until is None:
        due = "the assignment has no due date yet"
    else:
        due = f"due {e.until.strftime(stamp)} (the assignment: {e.due.strftime(stamp) if e.due else '-'})"
    return f"{e.student}: +{e.hours:g} h, {due}; {'graded' if e.graded else 'no submission graded yet'}"
