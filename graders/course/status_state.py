"""``vecgrade status``: each student's state in an assignment's pipeline, decided from the facts.

The contract: ``assignment_status`` takes what ``status_book.read_books`` read of the gradebook, the course's times
of record (``pipeline.arrivals``), the exchange's names (``course.exchange``), the course folders, ``ungraded.csv``
and ``feedback-failed.csv``, and puts every student of one assignment in one named place (``AssignmentStatus``;
the states are listed in ``graders.course.status``); ``course_status`` does it for the course, reading each shared
fact once. It renders nothing (``graders.course.status`` does) and writes nothing.
"""
from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from graders.course.content import resubmitted, source_files
from graders.course.exchange import Entry, exchange_entries
from graders.course.extensions import stale_penalty
from graders.course.feedback import feedback_failures
from graders.course.results import NothingGraded, late
from graders.course.status_book import Book, read_books
from graders.course.status_definitions import definition_changes
from graders.course.ungraded import ungraded
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.catalogue import AssignmentEntry
from graders.model.fingerprint import graded_under_other
from graders.model.inert import inert
from graders.pipeline.arrivals import Arrival, arrivals, claimed_time, read_claim, stamp

SCORE = re.compile(r"<h4>[^<]*\(Score: ([0-9.]+) / ([0-9.]+)\)</h4>")  # the feedback template's summary


@dataclass
class AssignmentStatus:
    """One assignment's students, each in one named place of its pipeline (see ``graders.course.status``)."""
    assignment: str
    released: bool
    submitted: list[str]
    graded: list[str]                                     # graded, and what submitted/ holds is what was graded
    ungraded: dict[str, str]                              # student -> why
    no_feedback: list[str] = field(default_factory=list)
    stale_feedback: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)        # timestamp.txt against the time of record
    due: str = ""                                         # the assignment's due date ("" without one)
    in_exchange: dict[str, list[str]] = field(default_factory=dict)   # student -> inbound times newer than collected
    resubmitted: list[str] = field(default_factory=list)  # in the gradebook, but submitted/ now holds another
    late: dict[str, str] = field(default_factory=dict)    # student -> how late, against which due date
    extensions: dict[str, float] = field(default_factory=dict)        # student -> hours
    feedback_failed: dict[str, str] = field(default_factory=dict)     # student -> why no page could be written
    stale_why: dict[str, str] = field(default_factory=dict)           # student -> why the page is out of date
    changes: list[str] = field(default_factory=list)      # what changed after grading or release, per exercise
    steps: list[str] = field(default_factory=list)        # what to do about it, in order
    penalty_stale: dict[str, float] = field(default_factory=dict)     # student -> the late penalty nbgrader took,
                                                          # though an extension since makes them not late

    @property
    def waiting(self) -> list[str]:
        """Submitted but neither graded (as it is now) nor recorded as ungraded: resubmissions included."""
        return [s for s in self.submitted if s not in self.graded and s not in self.ungraded]


# --- lateness and feedback ---------------------------------------------------------------------------------------


def _due_of(due: datetime.datetime | None, hours: float) -> str:
    if due is None:
        return ""
    own = due + datetime.timedelta(hours=hours)
    return f"due {stamp(own)}" + (f" (the assignment's {stamp(due)} + extension {hours:g} h)" if hours else "")


def lateness(arrived: datetime.datetime | None, due: datetime.datetime | None, hours: float) -> str:
    """"late 2.0 h, due ... (+ extension)" when ``arrived`` is after the student's due date; "" otherwise."""
    if arrived is None or due is None:
        return ""
    seconds = (arrived - due - datetime.timedelta(hours=hours)).total_seconds()
    return f"{late(seconds)}, {_due_of(due, hours)}" if seconds > 0 else ""


# --- feedback ---------------------------------------------------------------------------------------------------


def page_score(page: Path) -> tuple[float, float] | None:
    """(score, max score) the feedback page says (its summary's first line; None when it says none)."""
    try:
        found = SCORE.search(page.read_text(errors="replace"))
    except OSError:
        return None
    return (float(found.group(1)), float(found.group(2))) if found else None


def feedback_state(course: Course, assignment: str, student: str, score: float | None,
                   failed: dict[str, str]) -> tuple[str, str]:
    """("missing" | "failed" | "stale" | "", why) of a graded student's feedback page; ``score``: what the page
    should state (``Graded.shown``: the late penalty taken)."""
    notebook = course.paths.notebook(Step.AUTOGRADED, assignment, student)
    html = course.paths.feedback_page(assignment, student)
    if inert(student) in failed:
        return "failed", failed[inert(student)]
    if not html.exists():
        return "missing", ""
    shown = page_score(html)
    if score is not None and shown is not None and round(score, 2) != round(shown[0], 2):
        return "stale", (f"the page says {shown[0]:g} / {shown[1]:g}, the gradebook {round(score, 2):g} (a manual "
                         "grade or extra credit since)")
    if notebook.exists() and html.stat().st_mtime < notebook.stat().st_mtime:
        return "stale", "the page is older than the graded notebook"
    return "", ""


def _claimed(course: Course, assignment: str, student: str) -> datetime.datetime | None:
    """The ``timestamp.txt`` of a submission without a time of record yet (None: none, or not a time)."""
    claim = read_claim(course.paths.folder(Step.SUBMITTED, assignment, student)) \
        if student in course.submitted_students(assignment) else None
    return claimed_time(claim) if claim else None


# --- one assignment, and the course ------------------------------------------------------------------------------


def _metadata_of(notebook: Path) -> object:
    """A graded notebook's metadata, which records the fingerprint it was graded under (None: unreadable)."""
    try:
        return json.loads(notebook.read_bytes()).get("metadata")
    except (OSError, ValueError, AttributeError):
        return None


def assignment_status(course: Course, name: str, book: Book | None,
                      recorded: dict[tuple[str, str], Arrival] | None = None,
                      inbound: list[Entry] | None = None, entry: AssignmentEntry | None = None) -> AssignmentStatus:
    """``name``'s status; ``book``: what the gradebook holds of it (None: no gradebook); ``recorded``: the course's
    times of record; ``inbound``: the exchange's submissions (each read here when not given)."""
    book = book or Book()
    released = course.paths.folder(Step.RELEASE, name).is_dir()
    submitted = course.submitted_students(name)
    why = ungraded(course, name)
    recorded = arrivals(course.root) if recorded is None else recorded
    inbound = exchange_entries(course) if inbound is None else inbound
    failed = feedback_failures(course, name)
    skip = source_files(course, name)
    s = AssignmentStatus(name, released, submitted, [], why, due=stamp(book.due) if book.due else "",
                         extensions=dict(book.extensions))
    graded_notebook, graded_metadata, older = None, None, False
    for student in submitted:
        hours = book.extensions.get(student, 0.0)
        arrival = recorded.get((student, name))
        if student in why or student not in book.graded:
            if student not in why and arrival is not None:
                s.late[student] = lateness(arrival.arrived, book.due, hours)
            continue
        if resubmitted(course, name, student, skip):
            s.resubmitted.append(student)
            if arrival is not None:
                s.late[student] = lateness(arrival.arrived, book.due, hours)
            continue
        s.graded.append(student)
        g = book.graded[student]
        if g.seconds_late > 0:
            s.late[student] = f"{late(g.seconds_late)}, {_due_of(book.due, hours)}".rstrip(", ")
        state, reason = feedback_state(course, name, student, g.shown, failed)
        if state == "missing":
            s.no_feedback.append(student)
        elif state == "failed":
            s.feedback_failed[student] = reason
        elif state == "stale":
            s.stale_feedback.append(student)
            s.stale_why[student] = reason
        if stale_penalty(g.penalty, g.seconds_late):
            s.penalty_stale[student] = g.penalty
        notebook = course.paths.notebook(Step.AUTOGRADED, name, student)
        if entry is not None and notebook.exists() and not older:  # one graded under other definitions, if any
            metadata = _metadata_of(notebook)
            older = graded_under_other(metadata, entry.fingerprint, entry.folder_print)
            if graded_notebook is None or older:
                graded_notebook, graded_metadata = notebook, metadata
    for e in inbound:
        if e.assignment != name or e.timestamp is None:
            continue
        arrival = recorded.get((e.student, name))
        collected = arrival.arrived if arrival is not None else _claimed(course, name, e.student)
        if e.student not in submitted or collected is None or e.timestamp > collected:
            s.in_exchange.setdefault(e.student, []).append(stamp(e.timestamp))
            hours = book.extensions.get(e.student, 0.0)
            if e.student not in s.late or not s.late[e.student]:
                s.late[e.student] = lateness(e.timestamp, book.due, hours)
    s.late = {k: v for k, v in sorted(s.late.items()) if v}
    s.notes = [n for n in (recorded[x, name].note() for x in submitted if (x, name) in recorded) if n]
    if entry is not None:
        s.changes, s.steps = definition_changes(course, entry, graded_notebook, graded_metadata, book.points)
    return s


def course_status(course: Course, names: list[str]) -> tuple[list[AssignmentStatus], list[str]]:
    """Every assignment's status, and the lines about the gradebook (none yet). A gradebook that cannot be opened
    raises ``NoGradebook``."""
    lines = []
    catalogue = course.catalogue
    try:
        books: dict[str, Book] = read_books(course, names, catalogue)
    except NothingGraded as exc:
        books = {}
        lines.append(str(exc))
    recorded = arrivals(course.root)
    inbound = exchange_entries(course)
    return [assignment_status(course, n, books.get(n), recorded, inbound, catalogue.get(n)) for n in names], lines
