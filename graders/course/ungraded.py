"""``ungraded.csv``: the record of the submissions nbgrader could not grade, and why (one row per student and
assignment). Reading it imports no grading machinery: ``vecgrade status``, report and export read it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.csvsafe import read_rows, write_rows
from graders.model.inert import inert

if TYPE_CHECKING:
    from graders.engine.record import SubmissionResult


UNGRADED = "ungraded.csv"


def record_ungraded(course: Course, assignment: str, results: list[SubmissionResult]) -> None:
    """Keep ``ungraded.csv`` (student, assignment, reason) current: the "could not grade" record.

    nbgrader writes no grade rows for a submission it could not grade, so the
    record of why lives here; a later successful grading removes the row, and so
    does any grading once the submission's folder is gone (see ``ungraded``).
    """
    path = course.root / UNGRADED
    done = {inert(x.student) for x in results}
    rows = [r for r in read_rows(path) if (r["assignment"] != assignment or r["student"] not in done)
            and _still_submitted(course, r["student"], r["assignment"])]
    rows += [{"student": inert(r.student), "assignment": assignment, "code": r.code.value if r.code else "",
              "reason": inert(r.reason)} for r in results if not r.success]  # inert, then formula-safe (write_rows)
    if rows or path.exists():
        write_rows(path, ["student", "assignment", "code", "reason"], [{"code": "", **r} for r in rows])


def _submitted_as(course: Course, shown: str, assignment: str) -> str | None:
    """The student whose ``submitted/<student>/<assignment>/`` folder a row names (rows hold ``inert`` student ids:
    an honest id is itself; one with a control character is found among the folders), or None when it is gone."""
    if course.paths.folder(Step.SUBMITTED, assignment, shown).is_dir():
        return shown
    if "\\" not in shown:  # inert wrote nothing visible: the id is the folder's own name, and it is gone
        return None
    return {inert(s): s for s in course.submitted_students(assignment)}.get(shown)


def _still_submitted(course: Course, student: str, assignment: str) -> bool:
    return _submitted_as(course, student, assignment) is not None


def ungraded(course: Course, assignment: str) -> dict[str, str]:
    """{student: why} for each submission of ``assignment`` that could not be graded and is still there: a row of
    ``ungraded.csv`` whose ``submitted/<student>/<assignment>/`` was deleted counts nowhere (status, report,
    export, the formgrader), and the next grading drops it."""
    found = {}
    for r in read_rows(course.root / UNGRADED):
        if r["assignment"] == assignment and (student := _submitted_as(course, r["student"], assignment)) is not None:
            found[student] = r["reason"]
    return found
