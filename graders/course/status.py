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
- the assignment's **definitions changed** after grading or release: the exercises and settings that differ between
  the built notebook (``source/``), what the students got (``release/``) and what was graded (``autograded/``),
  and each step to take (``steps``).

A gradebook row that only holds an extension (``extensions.is_placeholder``) is no graded submission. Graded means
what report, feedback and export read: a submission in the gradebook (without a gradebook nothing is graded,
whatever ``autograded/`` holds). ``status_table`` prints it; ``status_json`` gives the same for scripts.
"""
from __future__ import annotations

import datetime
import difflib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from graders.course.content import locked, notebook_cells, resubmitted, source_files, text
from graders.course.exchange import Entry, exchange_entries
from graders.course.extensions import is_placeholder
from graders.course.feedback import feedback_failures
from graders.course.results import NothingGraded, _differences, late, open_gradebook
from graders.course.ungraded import ungraded
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.catalogue import AssignmentEntry
from graders.model.fingerprint import folder_fingerprint, stamped
from graders.model.inert import inert
from graders.pipeline.arrivals import Arrival, arrivals, claimed_time, read_claim, stamp

COLUMNS = ("assignment", "released", "submitted", "graded", "ungraded", "not graded yet", "no feedback yet",
           "feedback out of date", "in exchange", "late")
SCORE = re.compile(r"<h4>[^<]*\(Score: ([0-9.]+) / ([0-9.]+)\)</h4>")  # the feedback template's summary


@dataclass
class Graded:
    """What the gradebook holds of one graded submission."""
    score: float                          # every notebook's, manual grades and extra credit included
    seconds_late: float
    timestamp: datetime.datetime | None
    penalty: float = 0.0                  # the late penalty nbgrader's late-submission plugin took

    @property
    def shown(self) -> float:
        """The score the feedback page states: nbgrader's ``GetGrades`` writes the score less the late penalty."""
        return self.score - self.penalty


@dataclass
class AssignmentStatus:
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

    @property
    def waiting(self) -> list[str]:
        """Submitted but neither graded (as it is now) nor recorded as ungraded: resubmissions included."""
        return [s for s in self.submitted if s not in self.graded and s not in self.ungraded]


# --- the gradebook ---------------------------------------------------------------------------------------------


@dataclass
class Book:
    """What ``status`` reads of the gradebook for one assignment."""
    due: datetime.datetime | None = None
    graded: dict[str, Graded] = field(default_factory=dict)
    extensions: dict[str, float] = field(default_factory=dict)
    points: list[str] = field(default_factory=list)   # grade cells added, removed or of other points since


def read_books(course: Course, names: list[str], catalogue: dict[str, AssignmentEntry]) -> dict[str, Book]:
    """{assignment: its ``Book``} (``NothingGraded`` without a gradebook, ``NoGradebook`` when it cannot be
    opened), with the grade cells' differences from the definitions (``results._differences``)."""
    from nbgrader.api import MissingEntry
    out: dict[str, Book] = {}
    with open_gradebook(course) as gb:
        for name in names:
            book = Book()
            out[name] = book
            if name in catalogue:
                shape, points = _differences(gb, catalogue[name])
                book.points = shape + points
            try:
                recorded = gb.find_assignment(name)
            except MissingEntry:
                continue
            book.due = recorded.duedate
            for sub in recorded.submissions:
                if sub.extension:
                    book.extensions[sub.student_id] = sub.extension.total_seconds() / 3600
                if sub.timestamp is None and is_placeholder(sub):  # its grades are read only then
                    continue
                book.graded[sub.student_id] = Graded(float(sub.score or 0), float(sub.total_seconds_late or 0),
                                                     sub.timestamp, float(sub.late_submission_penalty or 0))
    return out


# --- lateness ---------------------------------------------------------------------------------------------------


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


# --- definitions ------------------------------------------------------------------------------------------------

_KINDS = (("-task", "task text"), ("-loop-intro", "loop version's text"), ("-loop", "loop version"),
          ("-examples", "visible examples"), ("-correct", "part correct"), ("-vectorized", "part vectorized"),
          ("-fast", "part fast"))


def _exercise_cells(cells: list[dict], entry: AssignmentEntry) -> dict[tuple[str, str], str]:
    """{(exercise, what): text} of a notebook's teacher-written cells (by their ids; answers are not included)."""
    prefixes = {e.name.replace("_", "-"): e.name for e in entry.exercises}
    out = {}
    for cell in cells:
        cid = str(cell.get("id", ""))
        if cell.get("cell_type") == "code" and not locked(cell):
            continue  # an answer cell: the release holds a stub, a student's copy their answer
        for suffix, what in _KINDS:
            if cid.endswith(suffix) and cid[:-len(suffix)] in prefixes:
                out[prefixes[cid[:-len(suffix)]], what] = text(cell.get("source", ""))
                break
    return out


def _first_change(old: str, new: str) -> str:
    """The first words that differ: '"within 3x" -> "within 8x"'."""
    a, b = old.split(), new.split()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            lo_a, lo_b = max(i1 - 1, 0), max(j1 - 1, 0)
            return f'"{" ".join(a[lo_a:i2][:8])}" -> "{" ".join(b[lo_b:j2][:8])}"'
    return "whitespace"


def cell_changes(old: list[dict] | None, new: list[dict] | None, entry: AssignmentEntry) -> list[str]:
    """Per exercise, what differs between two versions of the assignment's notebook ([] when either is missing)."""
    if old is None or new is None:
        return []
    before, after = _exercise_cells(old, entry), _exercise_cells(new, entry)
    out = []
    for key in sorted(set(before) | set(after), key=lambda k: ([e.name for e in entry.exercises].index(k[0]), k[1])):
        exercise, what = key
        if key not in before:
            out.append(f"{exercise}: {what} added")
        elif key not in after:
            out.append(f"{exercise}: {what} removed")
        elif before[key] != after[key]:
            out.append(f"{exercise}: {what} {_first_change(before[key], after[key])}")
    return out


def definition_changes(course: Course, entry: AssignmentEntry, graded_notebook: Path | None,
                       graded_fingerprint: str, points: list[str]) -> tuple[list[str], list[str]]:
    """(what changed, the steps to take, in order) between the definitions, the built notebook, the released one and
    what was graded (``graded_notebook``, a graded student's, and the definitions' fingerprint it records;
    ``points``: the gradebook's grade cells against the definitions')."""
    name = entry.name
    source = course.paths.notebook(Step.SOURCE, name)
    release = course.paths.notebook(Step.RELEASE, name)
    changes: list[str] = []
    steps: list[str] = []
    definitions = course.root / "assignments"
    built = source.stat().st_mtime if source.exists() else 0.0
    newer = [p.name for p in sorted(definitions.glob("*.py")) if p.stat().st_mtime > built] if built else []
    if newer:
        changes.append(f"the definitions ({', '.join(newer)}) changed after source/{name} was built")
        steps.append("`vecgrade build` (writes the changed notebooks into source/)")
    source_cells = notebook_cells(source) if source.exists() else None
    released = cell_changes(notebook_cells(release), source_cells, entry) if release.exists() else []
    if released:
        changes.append("the students' notebook differs from the built one: " + "; ".join(released))
        steps += [f"`nbgrader generate_assignment {name} --force`",
                  f"`nbgrader release_assignment {name} --force` (students fetch the new notebook)"]
    points = points if graded_notebook is not None else []
    current = folder_fingerprint(definitions) if graded_notebook is not None else ""
    if points:
        changes.append("points: " + "; ".join(points))
    older = graded_notebook is not None and bool(graded_fingerprint) and graded_fingerprint != current
    if older and graded_notebook is not None:
        graded_cells = notebook_cells(graded_notebook)
        graded = cell_changes(graded_cells, source_cells, entry)
        if graded:
            what = "; ".join(graded)
        elif graded_cells is not None and source_cells is not None:
            what = "hidden cases, rules or lessons only (no cell of the notebook)"
        else:
            what = "the graded notebook and the built one cannot be compared cell by cell"
        changes.append(f"graded under older definitions: {what}")
    if points or older:
        if points and not any("generate_assignment" in s for s in steps):
            steps.append(f"`nbgrader generate_assignment {name} --force` (the gradebook's points)")
        steps += [f"`vecgrade grade {name}` (every student, on the current definitions)",
                  f"`vecgrade feedback {name}`, then `nbgrader release_feedback {name}`"]
    return changes, steps


def _claimed(course: Course, assignment: str, student: str) -> datetime.datetime | None:
    """The ``timestamp.txt`` of a submission without a time of record yet (None: none, or not a time)."""
    claim = read_claim(course.paths.folder(Step.SUBMITTED, assignment, student)) \
        if student in course.submitted_students(assignment) else None
    return claimed_time(claim) if claim else None


# --- one assignment ---------------------------------------------------------------------------------------------


def _stamp_of(notebook: Path) -> str:
    """The definitions' fingerprint a graded notebook records (from its metadata; "" without one)."""
    try:
        return stamped(json.loads(notebook.read_bytes()).get("metadata"))
    except (OSError, ValueError, AttributeError):
        return ""


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
    graded_notebook, graded_fingerprint = None, ""
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
        notebook = course.paths.notebook(Step.AUTOGRADED, name, student)
        if notebook.exists() and (graded_notebook is None or not graded_fingerprint):
            graded_notebook, graded_fingerprint = notebook, _stamp_of(notebook)
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
        s.changes, s.steps = definition_changes(course, entry, graded_notebook, graded_fingerprint,
                                                 book.points)
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
