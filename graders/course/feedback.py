"""Feedback HTML for the students who have grades, one nbgrader ``generate_feedback`` per student, always forced.

nbgrader's ``generate_feedback`` for a whole assignment stops at the first
folder in ``autograded/`` without gradebook rows (``MissingEntry: No such
taskcomment``) and reports only "Please see the above traceback". Here each
student with an autograded notebook and a submission in the gradebook gets
feedback; the others are skipped and named; a failure names its student.

A student may hold several feedback pages of one assignment: one per graded submission with ``vecgrade serve``
(each saying "Graded on submit"), and one per submission the teacher graded and released (``nbgrader
release_feedback`` keeps each submission's page in the exchange, and ``fetch_feedback`` gives the student all of
them). Exactly one says it counts: the page written here, for the newest graded submission, is marked as the grade
of record at its top (``mark_of_record``, naming the submission's time of record), and every page of an earlier
submission of the same student and assignment released in the exchange is marked as replaced, naming the page
that replaced it (``replace_earlier``); a student who fetches feedback again gets them so.
"""
from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from graders.course.banner import PAGE_STYLE, text, when
from graders.course.exchange import released_feedback
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.engine.record import nbgrader_reason
from graders.model.csvsafe import read_rows, write_rows
from graders.model.inert import inert
from graders.pipeline.arrivals import claimed_time, read_claim, stamp


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
    record_failures(course, assignment, run)
    return run


FEEDBACK_FAILED = "feedback-failed.csv"


def record_failures(course: Course, assignment: str, run: FeedbackRun) -> None:
    """Keep ``feedback-failed.csv`` (student, assignment, reason) current: why a graded student has no page (a
    later success removes the row), for ``vecgrade status``."""
    path = course.root / FEEDBACK_FAILED
    done = {inert(s) for s in run.written} | {inert(s) for s in run.failed}
    rows = [r for r in read_rows(path) if r["assignment"] != assignment or r["student"] not in done]
    rows += [{"student": inert(s), "assignment": assignment, "reason": inert(why)} for s, why in run.failed.items()]
    if rows or path.exists():
        write_rows(path, ["student", "assignment", "reason"], rows)


def feedback_failures(course: Course, assignment: str) -> dict[str, str]:
    """{student: why their last feedback page could not be written} for ``assignment``."""
    return {r["student"]: r["reason"] for r in read_rows(course.root / FEEDBACK_FAILED)
            if r["assignment"] == assignment}


def of_record(assignment: str, at: float, tz: str = "UTC", submission: str = "") -> str:
    """The line on top of the teacher's feedback page (``submission``: its time of record, when known)."""
    which = f", for your submission of {submission}," if submission else ""
    return (f"Graded by your teacher at {when(at, tz)}: this page{which} is your grade of record for {assignment} "
            "(a page that says \"Graded on submit\" or \"Replaced\" is not).")


def replaced(assignment: str, at: float, tz: str = "UTC", submission: str = "") -> str:
    """The line on top of a teacher's page of an earlier submission, once a newer one was graded."""
    which = f" your submission of {submission}" if submission else " a later submission"
    return (f"Replaced: your teacher graded{which} at {when(at, tz)}; the page of that submission counts for "
            f"{assignment}, not this one.")


RECORD = "vecgrade-record"
_RECORD_DIV = re.compile(r'<div class="vecgrade-serve (?:vecgrade-record|vecgrade-replaced)"([^>]*)>[^<]*</div>')
_ATTR = re.compile(r'data-(student|assignment|submission)="([^"]*)"')


def _record_div(kind: str, line: str, student: str, assignment: str, submission: str) -> str:
    """The banner, with whose page it is as data (a student's markdown keeps no class, so cannot forge one)."""
    data = " ".join(f'data-{k}="{html.escape(v, quote=True)}"' for k, v in
                    (("student", student), ("assignment", assignment), ("submission", submission)))
    return f'<div class="vecgrade-serve {kind}" {data} style="{PAGE_STYLE}">{text(line)}</div>'


def record_of(page_text: str) -> dict[str, str] | None:
    """{student, assignment, submission} of a page's record banner (None: the page has none)."""
    found = _RECORD_DIV.search(page_text)
    if found is None:
        return None
    return {k: html.unescape(v) for k, v in _ATTR.findall(found.group(1))}


def _put_banner(page: Path, div: str) -> None:
    """``div`` at the top of the page (after ``<body ...>``), in place of any record banner it had."""
    body = _RECORD_DIV.sub("", page.read_text(), count=1)
    start = body.find("<body")
    end = body.find(">", start) + 1 if start >= 0 else 0
    page.write_text(body[:end] + div + body[end:])


def _tz(course: Course) -> str:
    tz = course.config().Exchange.get("timezone", "UTC")
    return tz if isinstance(tz, str) else "UTC"


def submission_time(folder: Path) -> str:
    """The time of record a feedback (or autograded) folder's ``timestamp.txt`` holds, as text ("" without one)."""
    claim = read_claim(folder) if folder.is_dir() else None
    found = claimed_time(claim) if claim else None
    return stamp(found) if found is not None else ""


def mark_of_record(course: Course, assignment: str, student: str, at: float | None = None) -> list[str]:
    """Put ``of_record`` on top of each feedback page of ``student``'s ``assignment`` just written, and mark the
    released pages of their earlier submissions as replaced (``replace_earlier``); the pages' names."""
    folder = course.paths.folder(Step.FEEDBACK, assignment, student)
    at = time.time() if at is None else at
    tz = _tz(course)
    submission = submission_time(folder)
    line = of_record(assignment, at, tz, submission)
    pages = sorted(folder.glob("*.html")) if folder.is_dir() else []
    for page in pages:
        _put_banner(page, _record_div(RECORD, line, student, assignment, submission))
    if pages:
        replace_earlier(course, assignment, student, submission, at)
    return [p.name for p in pages]


def replace_earlier(course: Course, assignment: str, student: str, submission: str, at: float) -> list[Path]:
    """Mark as replaced every page of record of ``student``'s ``assignment`` released in the exchange for another
    submission than ``submission`` (the newest graded one); the pages changed."""
    line = replaced(assignment, at, _tz(course), submission)
    changed = []
    for page in released_feedback(course):
        try:
            found = record_of(page.read_text())
        except (OSError, UnicodeDecodeError):
            continue
        if found and found.get("student") == student and found.get("assignment") == assignment \
                and found.get("submission") != submission:
            _put_banner(page, _record_div("vecgrade-replaced", line, student, assignment, found.get("submission", "")))
            changed.append(page)
    return changed
