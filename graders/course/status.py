"""``vecgrade status``: the semester's dashboard, per assignment and student, from the exchange's names, the course
folders, the gradebook, ``ungraded.csv``, ``feedback-failed.csv`` and the records.

Each student of an assignment is in one place of its pipeline, and every state is named:

- **waiting in the exchange**: an inbound submission (``<student>+<assignment>+<time>``, names only) newer than the
  one collected into ``submitted/`` (or none collected): ``nbgrader collect --update`` brings the newest in;
- **not graded yet**: in ``submitted/`` but not in the gradebook, or **resubmitted**: in the gradebook, but what
  ``submitted/`` holds now is not what was graded. Decided by content (``answer_digest``: the student's own cells of
  each notebook, which autograde keeps as they were, and their own other files), never by file times;
- **graded** (current), or **not graded** with the reason from ``ungraded.csv``;
- **late**: the time of record after the due date (nbgrader's, in the gradebook) plus the student's extension
  (``graders.course.extensions``), with both named;
- **feedback**: missing, could not be written (with the reason, ``feedback-failed.csv``), or **out of date**: the
  page's score is not the gradebook's less the late penalty (what nbgrader's feedback states; a manual grade or
  extra credit after it was written), or the page is older
  than the graded notebook;
- **extension granted after grading**: a late penalty nbgrader took at grading from a submission an extension since
  makes not late (``extensions.stale_penalty``): it stands until the submission is graded again, named with the
  command that does it;
- the assignment's **definitions changed** after grading or release: the exercises and settings that differ between
  the built notebook (``source/``), what the students got (``release/``) and what was graded (``autograded/``),
  and each step to take (``steps``); per assignment (its own fingerprint, ``graders.model.fingerprint``): editing
  one assignment's definitions never names another.

A gradebook row that only holds an extension (``extensions.is_placeholder``) is no graded submission. Graded means
what report, feedback and export read: a submission in the gradebook (without a gradebook nothing is graded,
whatever ``autograded/`` holds).

Three modules, one job each: ``status_book`` reads the gradebook (once, a few queries for the whole course),
``status_state`` (with ``status_definitions`` for what changed) decides each student's state, and this module
renders it: ``status_table`` (a rich table and the plain lines under it, ``status_lines``) and ``status_json``
(the same for scripts). The CLI and the tests use these names from here.
"""
from __future__ import annotations

from dataclasses import asdict

from rich.markup import escape
from rich.table import Table

from graders.course.extensions import REGRADE
from graders.course.status_book import Book, Graded, read_books
from graders.course.status_state import AssignmentStatus, assignment_status, course_status
from graders.coursedir.course import Course
from graders.model.inert import inert

__all__ = ["AssignmentStatus", "Book", "Graded", "assignment_status", "course_status", "read_books", "status_json",
           "status_lines", "status_table"]

COLUMNS = ("assignment", "released", "submitted", "graded", "ungraded", "not graded yet", "no feedback yet",
           "feedback out of date", "in exchange", "late")


def _names(students) -> str:
    return escape(inert(", ".join(students))) or "0"  # folder names are text, never rich markup nor terminal control


def status_lines(s: AssignmentStatus) -> list[str]:
    """The plain lines under the table for one assignment: every student whose state needs a word, with the fix."""
    a = s.assignment
    out = [f"{a}: due {s.due}" if s.due else ""]
    for student, hours in sorted(s.extensions.items()):
        out.append(f"{a}: extension {student}: +{hours:g} h" + ("" if student in s.submitted else ", no submission "
                                                               "collected yet")
                   + ("" if s.due else "; the assignment has no due date, and nbgrader's autograde fails on an "
                      f"extension without one: set it, `nbgrader db assignment add {a} --duedate=...`"))
    if s.in_exchange:
        who = "; ".join(f"{k} ({', '.join(v)})" for k, v in sorted(s.in_exchange.items()))
        out.append(f"{a}: waiting in the exchange, newer than what was collected: {who}; run `nbgrader collect "
                   f"--update {a}`")
    for student in s.resubmitted:
        out.append(f"{a}: resubmitted, not graded yet: {student} (submitted/ holds another submission than the "
                   f"graded one); run `vecgrade grade {a} -s {student}`")
    new = [x for x in s.waiting if x not in s.resubmitted]
    if new:
        out.append(f"{a}: not graded yet: {', '.join(new)}; run `vecgrade grade {a}`")
    out += [f"{a}: late: {student}: {how}" for student, how in s.late.items()]
    out += [f"{a}: could not grade {student}: {why}" for student, why in sorted(s.ungraded.items())]
    out += [f"{a}: no feedback page for {student}: could not be written: {why}"
            for student, why in sorted(s.feedback_failed.items())]
    out += [f"{a}: feedback out of date for {student}: {why}; run `vecgrade feedback {a}`"
            for student, why in sorted(s.stale_why.items())]
    out += [f"{a}: extension granted after grading: {student}: nbgrader's late penalty of {penalty:g} points stands "
            "though the submission is not late now; " + REGRADE.format(assignment=a, student=student)
            for student, penalty in sorted(s.penalty_stale.items())]
    if s.changes:
        out.append(f"{a}: changed: " + " | ".join(s.changes))
        out += [f"{a}:   step {i}: {step}" for i, step in enumerate(s.steps, 1)]
    out += [f"{a}: note: {note}" for note in s.notes]
    return [inert(line) for line in out if line]


def status_table(course: Course, names: list[str]) -> tuple[Table, list[str]]:
    """The status table of ``names``, and the lines to print under it (plain text, to print without markup). A
    gradebook that cannot be opened raises ``NoGradebook``."""
    found, lines = course_status(course, names)
    table = Table(title="vecgrade status")
    for column in COLUMNS:
        table.add_column(column)
    for s in found:
        table.add_row(s.assignment, "yes" if s.released else "no", str(len(s.submitted)), str(len(s.graded)),
                      str(len(s.ungraded)), _names(s.waiting), _names(s.no_feedback + list(s.feedback_failed)),
                      _names(s.stale_feedback), _names(sorted(s.in_exchange)), _names(list(s.late)))
        lines += status_lines(s)
    return table, lines


def status_json(course: Course, names: list[str]) -> dict:
    """The same as ``status_table``, for scripts: {"assignments": [each ``AssignmentStatus`` with ``waiting``],
    "notes": [...]}."""
    found, lines = course_status(course, names)
    return {"assignments": [{**asdict(s), "waiting": s.waiting} for s in found], "notes": lines}
