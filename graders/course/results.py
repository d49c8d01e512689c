"""Who was graded, who was not and why, and their part marks: the one source for report, status and export.

An ungraded submission (nbgrader could not grade it; the reason is in
``ungraded.csv``) is never shown as a 0: its marks are ``None`` and its
status says why. Reading never creates a gradebook: a course that was never
graded has none, and ``Course`` callers get ``NoGradebook`` instead.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from graders.course.content import resubmitted, source_files
from graders.course.extensions import is_placeholder
from graders.course.ungraded import ungraded
from graders.coursedir.course import Course, SubmissionMarks, _put_scripts_on_path, gradebook_marks
from graders.coursedir.paths import Step
from graders.model.catalogue import GradedAssignment, max_points
from graders.model.csvsafe import write_rows
from graders.model.errors import VecgradeError
from graders.model.fingerprint import graded_under_other, stamped


class NoGradebook(VecgradeError, FileNotFoundError):
    """The course has no gradebook yet (nothing was graded), or it cannot be opened."""


class NothingGraded(NoGradebook):
    """The course's SQLite gradebook does not exist: nothing was graded yet (or it was deleted)."""


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite gradebook URL (None for another database)."""
    parsed = make_url(url)
    return Path(parsed.database) if parsed.get_backend_name() == "sqlite" and parsed.database else None


def open_gradebook(course: Course) -> Gradebook:
    """nbgrader's gradebook, only if it exists (``Gradebook(url)`` would silently create an empty SQLite file)."""
    url = course.db_url
    path = _sqlite_file(url)
    if path is not None and not path.exists():
        raise NothingGraded(f"no gradebook in {course.root}: nothing graded yet (run `vecgrade grade ASSIGNMENT`)")
    _put_scripts_on_path()  # nbgrader runs `alembic` to create the tables of a new database
    try:
        return Gradebook(url)
    except SQLAlchemyError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise NoGradebook(f"cannot open the gradebook {make_url(url).render_as_string(hide_password=True)}: "
                          f"{first}") from None


def gradebook_submissions(course: Course, names: list[str]) -> dict[str, set[str]]:
    """{assignment: the students with a submission of it in the gradebook}: who is graded, as report, feedback and
    export read it (``NothingGraded`` without a gradebook, ``NoGradebook`` when it cannot be opened)."""
    with open_gradebook(course) as gb:
        out: dict[str, set[str]] = {}
        for name in names:
            try:
                out[name] = {sub.student.id for sub in gb.find_assignment(name).submissions}
            except MissingEntry:
                out[name] = set()
        return out


def gradebook_problem(course: Course, assignment: str) -> str | None:
    """Why nbgrader cannot grade ``assignment`` with the course's gradebook, with the fix (None: it can).

    nbgrader grades only an assignment its gradebook knows, with its notebooks and grade cells;
    ``generate_assignment`` registers them (``--force`` because release/ may already exist).
    """
    fix = f"run `nbgrader generate_assignment {assignment} --force`, which registers its notebooks and grade cells"
    path = _sqlite_file(course.db_url)
    if path is not None and not path.exists():
        return f"the gradebook has no assignment {assignment!r} (there is no {path.name}): {fix}"
    try:
        with open_gradebook(course) as gb:
            try:
                known = gb.find_assignment(assignment)
            except MissingEntry:
                return f"the gradebook has no assignment {assignment!r}: {fix}"
            if not known.notebooks:
                return f"the gradebook's assignment {assignment!r} has no notebooks: {fix}"
    except NoGradebook as exc:
        return str(exc)
    return None


def _differences(gb: Gradebook, assignment: GradedAssignment) -> tuple[list[str], list[str]]:
    """(grade cells added or removed, points changed) between the gradebook's graded version and the definitions."""
    try:
        recorded = gb.find_assignment(assignment.name)
    except MissingEntry:
        return [], []
    if not recorded.submissions:
        return [], []
    cells = {cell.name: cell.max_score for nb in recorded.notebooks for cell in nb.grade_cells}
    current = max_points(assignment)
    shape = [f"{gid} added ({current[gid]:g} points, no marks)" for gid in current if gid not in cells]
    shape += [f"{gid} removed (graded, {cells[gid]:g} points)" for gid in cells if gid not in current]
    points = [f"{gid}: {cells[gid]:g} points when graded, {current[gid]:g} now" for gid in current
              if gid in cells and cells[gid] != current[gid]]
    return shape, points


def _graded_metadata(gb: Gradebook, course: Course, assignment: GradedAssignment) -> dict[str, object]:
    """{student with a submission in the gradebook: their autograded notebook's metadata} (None: the notebook is
    missing or unreadable)."""
    try:
        students = sorted({sub.student.id for sub in gb.find_assignment(assignment.name).submissions})
    except MissingEntry:
        return {}
    out: dict[str, object] = {}
    for student in students:
        path = course.paths.notebook(Step.AUTOGRADED, assignment.name, student)
        try:
            out[student] = json.loads(path.read_text()).get("metadata")
        except (OSError, ValueError, AttributeError):
            out[student] = None
    return out


def graded_under(gb: Gradebook, course: Course, assignment: GradedAssignment) -> dict[str, str]:
    """{student with a submission in the gradebook: the assignment's fingerprint their autograded notebook records}
    ("" for a notebook that records none: missing, unreadable, graded before notebooks recorded it, or before
    fingerprints were per assignment)."""
    return {student: stamped(meta) for student, meta in _graded_metadata(gb, course, assignment).items()}


def older_definitions(gb: Gradebook, course: Course, assignment: GradedAssignment) -> str:
    """Whether the assignment's definitions changed since any submission was graded, in words ("" when none was):
    decided by its own fingerprint (``graders.model.fingerprint``, the one answer to "did the definitions
    change?"), the current one against each graded notebook's (``graded_under_other``: a notebook graded before
    fingerprints were per assignment is compared with the whole folder's). A notebook that records none is not
    counted, nor is any when the assignment has no folder's fingerprint (built in code)."""
    if not assignment.fingerprint:
        return ""
    recorded = _graded_metadata(gb, course, assignment)
    older = [s for s, meta in recorded.items()
             if graded_under_other(meta, assignment.fingerprint, assignment.folder_print)]
    if not older:
        return ""
    legacy = [s for s in older if not stamped(recorded[s])]
    return (f"the definitions of {assignment.name} changed after {len(older)} of {len(recorded)} graded submissions "
            "were graded (cases, rules, points or lessons): their marks are from the older definitions"
            + (f" ({len(legacy)} graded before vecgrade recorded each assignment's own fingerprint: any change of "
               "the course's definitions since counts for them)" if legacy else ""))


def version_changes(gb: Gradebook, course: Course, assignment: GradedAssignment) -> list[str]:
    """How the definitions differ from what the class was graded on ([] when they agree, or nobody was graded):
    the grade cells added, removed or of other points (nbgrader keeps a graded assignment's cells, so the
    gradebook holds the older version), then ``older_definitions`` when the definitions changed since."""
    shape, points = _differences(gb, assignment)
    older = older_definitions(gb, course, assignment)
    return shape + points + ([older] if older else [])


def version_fix(gb: Gradebook, course: Course, assignment: GradedAssignment) -> str:
    """What to do about ``version_changes`` ("" when there are none)."""
    shape, points = _differences(gb, assignment)
    name = assignment.name
    if shape:  # nbgrader refuses, and removes release/<name>/ on the way ("Removing failed assignment")
        return (f"nbgrader cannot add or remove grade cells of an assignment with submissions (and "
                f"`generate_assignment {name} --force` would remove release/{name}/): release the new version as "
                f"a new assignment, or put the graded definitions back")
    if points:
        return (f"to grade on the new points: `vecgrade build`, `nbgrader generate_assignment {name} --force`, "
                f"then `vecgrade grade {name}`")
    if older_definitions(gb, course, assignment):
        return f"to grade on the current definitions: `vecgrade grade {name}`"
    return ""


def nothing_graded(course: Course, assignment: str) -> str:
    """The one line for an assignment nothing of which was graded (``feedback`` and ``report`` say it alike)."""
    return f"nothing autograded for {assignment} in {course.root} yet (run `vecgrade grade {assignment}`)"


NOT_GRADED_YET = "not graded yet"
RESUBMITTED = "an earlier submission: the newest is not graded yet"  # after "graded", when submitted/ changed since


@dataclass
class StudentRow:
    """One student's line of an assignment: the marks every report and export shows, read from the gradebook.

    ``recorded`` is the gradebook's submission (``SubmissionMarks``: nbgrader's score, penalty and total) for a
    graded row, None for a row without marks; ``marks`` is its per-grade scores (all None without marks)."""
    student: str
    marks: dict[str, float | None]  # grade_id -> score; None: no mark (ungraded or not graded yet)
    status: str                      # "graded", "graded, late ...", "graded, ... RESUBMITTED", "ungraded: why",
                                     # "not graded yet"
    recorded: SubmissionMarks | None = None

    @property
    def graded(self) -> bool:
        return self.status.startswith("graded")

    @property
    def total(self) -> float | None:
        """nbgrader's total (``score - late_submission_penalty``, as ``nbgrader export``); None without marks."""
        return self.recorded.total if self.graded and self.recorded is not None else None

    @property
    def score(self) -> float | None:
        """nbgrader's score before the penalty (``SubmittedAssignment.score``); None without marks."""
        return self.recorded.score if self.graded and self.recorded is not None else None

    @property
    def penalty(self) -> float | None:
        """The late penalty nbgrader's late-submission plugin took (0: none); None without marks."""
        return self.recorded.penalty if self.graded and self.recorded is not None else None

    @property
    def manual(self) -> tuple[str, ...]:
        """The grade ids a person graded in the formgrader (a manual score or extra credit)."""
        return self.recorded.manual if self.graded and self.recorded is not None else ()


def late(seconds: float) -> str:
    """How late a submission was, in words: "late 1.5 h", "late 42 s" (the export's status, the feedback page)."""
    return f"late {seconds / 3600:.1f} h" if seconds >= 360 else f"late {seconds:.0f} s"


def class_marks(gb: Gradebook, course: Course, assignment: GradedAssignment) -> list[StudentRow]:
    """One row per student who submitted or is in the gradebook for ``assignment``, sorted by name.

    The marks table used by ``report``, its CSV, the HTML report and every export: each graded row carries the
    gradebook's ``SubmissionMarks`` (``gradebook_marks``, the one reader of marks). A gradebook row that only holds
    an extension is no row; a graded student whose ``submitted/`` now holds another submission
    (``graders.course.content``) keeps the graded marks, and the status says they are of an earlier submission.
    """
    ids = list(max_points(assignment))
    why = ungraded(course, assignment.name)
    submitted = set(course.submitted_students(assignment.name))
    rows: dict[str, StudentRow] = {}
    try:  # a row that only holds an extension (graders.course.extensions) is no graded submission
        placeholders = {s.student_id for s in gb.find_assignment(assignment.name).submissions
                        if s.timestamp is None and is_placeholder(s)}
    except MissingEntry:
        placeholders = set()
    skip = source_files(course, assignment.name)
    for student, recorded in gradebook_marks(gb, assignment).items():
        if student in placeholders:
            continue
        seconds = recorded.seconds_late
        newer = student in submitted and resubmitted(course, assignment.name, student, skip)
        rows[student] = StudentRow(student, dict(recorded.parts), "graded" + (f", {late(seconds)}" if seconds > 0
                                   else "") + (f", {RESUBMITTED}" if newer else ""), recorded)
    for student in submitted | set(why):
        if student in why:
            rows[student] = StudentRow(student, {i: None for i in ids}, f"ungraded: {why[student]}")
        elif student not in rows:
            rows[student] = StudentRow(student, {i: None for i in ids}, NOT_GRADED_YET)
    return [rows[s] for s in sorted(rows)]


def fmt(value: float | None) -> str:
    """A mark in a CSV or a table: ``14.4``, ``0``; empty for no mark (never a 0)."""
    return "" if value is None else f"{value:g}"


def manual_note(row: StudentRow) -> str:
    """The grade cells a person graded, for a CSV or a table cell: "batch_outer_fast softmax_rows_correct"."""
    return " ".join(row.manual)


PARTS_CSV_TAIL = ("score", "late penalty", "total", "graded by hand", "status")


def write_parts_csv(dest: Path, assignment: GradedAssignment, rows: list[StudentRow]) -> None:
    """``vecgrade report --csv``: one row per student, one column per exercise part, then nbgrader's score, its late
    penalty, the total (``score - penalty``, as ``nbgrader export``), the grade cells graded by hand and the status."""
    ids = list(max_points(assignment))
    write_rows(dest, ["student", *ids, *PARTS_CSV_TAIL],
               [{"student": r.student, **{g: fmt(r.marks[g]) for g in ids},
                 "score": fmt(r.score), "late penalty": fmt(r.penalty),
                 "total": fmt(r.total), "graded by hand": manual_note(r), "status": r.status} for r in rows])


def feedback_paths(course: Course, assignment: str, student: str) -> tuple[Path, Path]:
    """(autograded notebook, its feedback HTML)."""
    return course.paths.notebook(Step.AUTOGRADED, assignment, student), course.paths.feedback_page(assignment, student)
