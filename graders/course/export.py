"""LMS-ready CSVs: per part (``parts``), or Canvas's and Moodle's gradebook imports (one column per assignment).

Every total is nbgrader's (``class_marks``, read by ``graders.coursedir.course.gradebook_marks``): the score less
the late penalty, as ``nbgrader export`` writes it.

``parts``: one row per student, one column per exercise part, a max-points row, a status column, then per assignment
nbgrader's score, the late penalty, the total and the grade cells graded by hand.

``PartsExportPlugin`` is an nbgrader exporter plugin, so the same file comes from
``nbgrader export --exporter=graders.course.export.PartsExportPlugin --to grades.csv``
(run in the course directory) and from ``vecgrade export``. Names and emails are
nbgrader's. A part without a mark (ungraded, not graded yet, not submitted) is an
empty cell, never a 0, and the status column says why. When the definitions differ from
the grade cells the class was graded on, the max-points row's status cell says how.

``canvas`` and ``moodle`` (``vecgrade export --format``) hold each assignment's total, empty where there is none; a
roster CSV (``read_roster``) gives the identities the LMS matches students by. A file the importer could read as one
student's grade given to another (Moodle: an identifier empty for some students, or shared; Canvas: students it
cannot tell apart) is never written: ``LmsFileError``. Canvas's columns are ``Name (id)`` where the course's config
gives the assignment's Canvas id (``canvas_assignment_ids``).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins.export import ExportPlugin
from traitlets import Unicode

from graders.course.results import class_marks, fmt, manual_note, max_points, version_changes
from graders.coursedir.course import Course
from graders.model.catalogue import GradedAssignment
from graders.model.csvsafe import write_rows
from graders.model.errors import VecgradeError

MAX_ROW = "max points"


def export_rows(gb: Gradebook, course: Course, assignments: list[GradedAssignment],
                students: list[str] | None = None) -> list[dict[str, str]]:
    """The export as dict rows, the max-points row first. Per assignment: its status, ``assignment/grade_id`` per
    part, then nbgrader's ``score``, its ``late penalty``, the ``total`` (``score - penalty``, as ``nbgrader export``
    writes it) and the grade cells ``graded by hand`` in the formgrader."""
    people = {s.id: s for s in gb.students}
    per_assignment = {a.name: {r.student: r for r in class_marks(gb, course, a)} for a in assignments}
    chosen = students or sorted(set(people) | {s for rows in per_assignment.values() for s in rows})
    top = {"student_id": MAX_ROW, "first_name": "", "last_name": "", "email": ""}
    for a in assignments:
        maxes = max_points(a)
        changes = version_changes(gb, course, a)
        top[f"{a.name} status"] = f"changed after grading: {'; '.join(changes)}" if changes else ""
        top.update({f"{a.name}/{gid}": fmt(m) for gid, m in maxes.items()})
        top.update({f"{a.name} score": fmt(sum(maxes.values())), f"{a.name} late penalty": "",
                    f"{a.name} total": fmt(sum(maxes.values())), f"{a.name} graded by hand": ""})
    out = [top]
    for student in chosen:
        person = people.get(student)
        row = {"student_id": student, "first_name": getattr(person, "first_name", None) or "",
               "last_name": getattr(person, "last_name", None) or "", "email": getattr(person, "email", None) or ""}
        for a in assignments:
            r = per_assignment[a.name].get(student)
            row[f"{a.name} status"] = r.status if r else "not submitted"
            for gid in max_points(a):
                row[f"{a.name}/{gid}"] = fmt(r.marks[gid]) if r else ""
            row[f"{a.name} score"] = fmt(r.score) if r else ""
            row[f"{a.name} late penalty"] = fmt(r.penalty) if r else ""
            row[f"{a.name} total"] = fmt(r.total) if r else ""
            row[f"{a.name} graded by hand"] = manual_note(r) if r else ""
        out.append(row)
    return out


def write_csv(rows: list[dict[str, str]], dest: Path) -> None:
    """The rows (max points first) as CSV; a cell a spreadsheet would run as a formula is marked as text."""
    write_rows(dest, list(rows[0]), rows)


class PartsExportPlugin(ExportPlugin):
    """nbgrader exporter: per-part marks with status, for one or all assignments (``--assignment``)."""

    course = Unicode(".", help="Course directory (holds nbgrader_config.py and assignments/).").tag(config=True)

    def export(self, gradebook: Gradebook) -> None:
        course = Course(Path(self.course))
        known = course.catalogue
        in_gradebook = {a.name for a in gradebook.assignments}
        names = [str(a) for a in self.assignment] or [n for n in known if n in in_gradebook]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown assignment(s) {', '.join(unknown)}; known: {', '.join(known)}")
        dest = Path(self.to or "grades.csv")
        rows = export_rows(gradebook, course, [known[n] for n in names], [str(s) for s in self.student] or None)
        write_csv(rows, dest)
        self.log.info("Exported %d student(s) x %d assignment(s) to %s", len(rows) - 1, len(names), dest)


# --- LMS gradebook imports: Canvas and Moodle ----------------------------------------------------------------------
#
# One column per assignment, holding its total points; a student without a grade for it (not submitted, ungraded, not
# graded yet) gets an empty cell, never a 0: Canvas leaves an empty cell alone, Moodle reads it as "no grade".

FORMATS = ("parts", "canvas", "moodle")
ROSTER_COLUMNS = ("student_id", "first_name", "last_name", "email", "canvas_id", "sis_user_id", "sis_login_id",
                  "section")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS = "    Points Possible"  # the first cell of the second row, as Canvas's own gradebook export writes it
MOODLE_IDENTITY = ("First name", "Last name", "ID number", "Username", "Email address")


class RosterError(VecgradeError, ValueError):
    """The roster cannot be read or does not fit the gradebook; the message is one line with the fix."""


@dataclass
class Identity:
    """Who a student is to the LMS: the nbgrader id plus what the roster or the gradebook knows."""
    student: str
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""

    @property
    def sortable_name(self) -> str:
        """``Last, First`` as Canvas writes it; the nbgrader id when neither is known."""
        return ", ".join(n for n in (self.last_name, self.first_name) if n) or self.student


def read_roster(path: Path) -> dict[str, dict[str, str]]:
    """{student_id: {column: value}} from a roster CSV (header ``student_id`` plus any of ``ROSTER_COLUMNS``).

    A missing file, a missing ``student_id`` column, an unknown column, an empty or repeated ``student_id``
    is a ``RosterError``."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:  # -sig: a spreadsheet's UTF-8 byte order mark
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, [])]
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RosterError(f"cannot read the roster {path}: {getattr(exc, 'strerror', None) or exc}") from None
    valid = ", ".join(ROSTER_COLUMNS)
    if "student_id" not in header:
        raise RosterError(f"the roster {path} has no student_id column (its header: {', '.join(header) or 'empty'}); "
                          f"its columns are: {valid}")
    unknown = [h for h in header if h not in ROSTER_COLUMNS]
    if unknown:
        raise RosterError(f"the roster {path} has unknown column(s) {', '.join(unknown)}; its columns are: {valid}")
    out: dict[str, dict[str, str]] = {}
    for line, cells in enumerate(rows, start=2):
        if not any(c.strip() for c in cells):
            continue
        row = {h: c.strip() for h, c in zip(header, cells, strict=False)}
        student = row.get("student_id", "")
        if not student:
            raise RosterError(f"the roster {path}, line {line}: empty student_id")
        if student in out:
            raise RosterError(f"the roster {path}, line {line}: student_id {student!r} appears twice")
        out[student] = row
    return out


def check_roster(roster: dict[str, dict[str, str]], students: list[str], path: Path | str) -> list[str]:
    """The roster's students that are not among ``students`` (the export's): a note, not an error. A student of the
    export missing from the roster is a ``RosterError``: the LMS could not place that grade."""
    missing = [s for s in students if s not in roster]
    if missing:
        raise RosterError(f"the roster {path} has no row for {len(missing)} student(s) of the gradebook: "
                          f"{', '.join(missing)}; add a row for each (student_id, and how the LMS knows them), or "
                          "export only the others with -s")
    chosen = set(students)
    return [s for s in roster if s not in chosen]


def identities(gb: Gradebook, students: list[str], roster: dict[str, dict[str, str]] | None = None
               ) -> dict[str, Identity]:
    """Each student's identity: the roster's value where it has one (it is the LMS's own record), else the
    gradebook's (names, email, nbgrader's ``lms_user_id`` as the Canvas ID)."""
    people = {s.id: s for s in gb.students}
    out = {}
    for student in students:
        person = people.get(student)
        known = {"first_name": getattr(person, "first_name", None) or "",
                 "last_name": getattr(person, "last_name", None) or "",
                 "email": getattr(person, "email", None) or "",
                 "canvas_id": getattr(person, "lms_user_id", None) or ""}
        given = (roster or {}).get(student, {})
        fields = {name: given.get(name) or known.get(name, "") for name in ROSTER_COLUMNS if name != "student_id"}
        out[student] = Identity(student, **fields)
    return out


def assignment_totals(gb: Gradebook, course: Course, assignments: list[GradedAssignment]
                      ) -> dict[str, dict[str, float | None]]:
    """{assignment: {student: total points, None when not graded}} for everyone in the gradebook or submitted."""
    out: dict[str, dict[str, float | None]] = {}
    for a in assignments:
        out[a.name] = {r.student: r.total for r in class_marks(gb, course, a)}
    return out


def lms_students(gb: Gradebook, totals: dict[str, dict[str, float | None]]) -> list[str]:
    """Every student of the gradebook or with a submission, sorted (as the parts export lists them)."""
    return sorted({s.id for s in gb.students} | {s for rows in totals.values() for s in rows})


class LmsFileError(RosterError):
    """An LMS file that an importer could read as giving one student's grade to another; one line with the fix."""


def canvas_assignment_ids(course: Course, assignments: list[GradedAssignment]) -> dict[str, str]:
    """{assignment: its Canvas assignment id} from the course's ``nbgrader_config.py``
    (``c.CanvasExport.assignment_ids = {"broadcasting": "87568490"}``); an id that is not a number, or a name
    that is no assignment of the course, is an ``LmsFileError``."""
    given = course.config().get("CanvasExport", {}).get("assignment_ids", {}) or {}
    if not isinstance(given, dict):
        raise LmsFileError("c.CanvasExport.assignment_ids in nbgrader_config.py must be a dict "
                           "{assignment: Canvas assignment id}")
    known = set(course.catalogue)
    unknown = sorted(str(n) for n in given if n not in known)
    if unknown:
        raise LmsFileError(f"c.CanvasExport.assignment_ids names unknown assignment(s) {', '.join(unknown)}; "
                           f"known: {', '.join(known)}")
    bad = sorted(str(n) for n, i in given.items() if not str(i).strip().isdigit())
    if bad:
        raise LmsFileError(f"c.CanvasExport.assignment_ids: the Canvas id of {', '.join(bad)} is not a number "
                           "(it is the number in the assignment's Canvas address, .../assignments/<id>)")
    names = {a.name for a in assignments}
    return {str(n): str(i).strip() for n, i in given.items() if n in names}


def canvas_column(name: str, ids: dict[str, str]) -> str:
    """``broadcasting (87568490)`` as Canvas's own export names a column, which its import matches by the id; the
    bare name when the id is not known (Canvas then fills an assignment of exactly that title, or creates one)."""
    return f"{name} ({ids[name]})" if name in ids else name


def _shared(values: dict[str, str]) -> list[str]:
    """The students whose non-empty value (case-folded) another student has too."""
    seen: dict[str, list[str]] = {}
    for student, value in values.items():
        if value:
            seen.setdefault(value.casefold(), []).append(student)
    return sorted(s for group in seen.values() if len(group) > 1 for s in group)


def canvas_rows(assignments: list[GradedAssignment], totals: dict[str, dict[str, float | None]],
                people: dict[str, Identity], ids: dict[str, str] | None = None
                ) -> tuple[list[str], list[dict[str, str]]]:
    """(header, rows) of Canvas's gradebook import: the identity columns, one column per assignment (``Name (id)``
    where ``ids`` has its Canvas id), the ``Points Possible`` row first. Without a roster, ``SIS Login ID`` is the
    nbgrader id. Canvas finds a student by ``ID``, then the SIS ids, then the name: students who share a name and
    have neither a Canvas ID nor a SIS User ID, or who share an id, are an ``LmsFileError`` (one could get the
    other's grade)."""
    ids = ids or {}
    columns = {a.name: canvas_column(a.name, ids) for a in assignments}
    nameless = {s: who.sortable_name for s, who in people.items() if not who.canvas_id and not who.sis_user_id}
    named_alike = [s for s in _shared({s: who.sortable_name for s, who in people.items()}) if s in nameless]
    twice = {label: _shared(values) for label, values in (
        ("ID", {s: who.canvas_id for s, who in people.items()}),
        ("SIS User ID", {s: who.sis_user_id for s, who in people.items()}),
        ("SIS Login ID", {s: who.sis_login_id or s for s, who in people.items()}))}
    problems = [f"{label} shared by {', '.join(found)}" for label, found in twice.items() if found]
    if named_alike:
        problems.append(f"{', '.join(named_alike)} share a name and have no Canvas ID or SIS User ID")
    if problems:
        raise LmsFileError(f"the Canvas file cannot tell every student apart ({'; '.join(problems)}): Canvas's import "
                           "could give one of them another's grade; give each a canvas_id or sis_user_id of their "
                           "own in a --roster, or export the others with -s")
    header = [*CANVAS_IDENTITY, *columns.values()]
    rows = [{"Student": CANVAS_POINTS, **{columns[a.name]: fmt(sum(max_points(a).values())) for a in assignments}}]
    for student, who in people.items():
        row = {"Student": who.sortable_name, "ID": who.canvas_id, "SIS User ID": who.sis_user_id,
               "SIS Login ID": who.sis_login_id or student, "Section": who.section}
        row.update({columns[a.name]: fmt(totals[a.name].get(student)) for a in assignments})
        rows.append(row)
    return header, rows


MOODLE_KEYS = ("ID number", "Username", "Email address")  # the columns Moodle's import can find a user by


def moodle_rows(assignments: list[GradedAssignment], totals: dict[str, dict[str, float | None]],
                people: dict[str, Identity]) -> tuple[list[str], list[dict[str, str]]]:
    """(header, rows) of Moodle's "Import grades from CSV": identity columns (map one of ``ID number``, ``Username``,
    ``Email address``), one column per assignment. No max-points row: Moodle would read it as a student. ``Username``
    is the roster's ``sis_login_id``, else the nbgrader id, so it is never empty.

    Moodle's import gives a row whose identifier is empty the previous row's student, and a row whose identifier
    another row has too that row's student: an identifier column empty for some students but not all, or holding
    one value twice, is an ``LmsFileError`` naming the students (nothing is written); a column empty for every
    student is left out, so it cannot be mapped."""
    table = []
    for student, who in people.items():
        row = {"First name": who.first_name, "Last name": who.last_name, "ID number": who.sis_user_id,
               "Username": who.sis_login_id or student, "Email address": who.email}
        row.update({a.name: fmt(totals[a.name].get(student)) for a in assignments})
        table.append((student, row))
    problems = []
    empty_columns = set()
    for key in MOODLE_KEYS:
        values = {student: row[key] for student, row in table}
        blank = sorted(s for s, v in values.items() if not v)
        if blank and len(blank) == len(values):
            empty_columns.add(key)
        elif blank:
            problems.append(f"{key} is empty for {', '.join(blank)}")
        if shared := _shared(values):
            problems.append(f"{key} is the same for {', '.join(shared)}")
    if problems:
        raise LmsFileError(f"the Moodle file cannot identify every student ({'; '.join(problems)}): Moodle's import "
                           "would give such a row another student's grade; give each student an email, sis_user_id "
                           "and sis_login_id of their own in a --roster (or in the gradebook), or export the others "
                           "with -s")
    header = [*(c for c in MOODLE_IDENTITY if c not in empty_columns), *(a.name for a in assignments)]
    return header, [{k: v for k, v in row.items() if k not in empty_columns} for _, row in table]


def write_lms_csv(dest: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    """The table as CSV, every cell through ``csvsafe`` (a name like ``=HYPERLINK(...)`` is text)."""
    write_rows(dest, header, rows)
