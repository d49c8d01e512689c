"""``vecgrade report``, ``vecgrade status`` and ``vecgrade export``: what the gradebook holds, as a table, a page or
an LMS's CSV; an ungraded submission is never a 0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from graders.cli.base import (
    COURSE,
    app,
    choose,
    console,
    fail,
    find_assignment,
    find_entry,
    gradebook,
    open_course,
    say,
    writable,
)
from graders.model.inert import inert
from graders.model.verdict import PARTS  # not graders.model.exercise: it imports torch (2 s), and --help needs none


@app.command()
def report(assignment: Optional[str] = typer.Argument(None, help="One assignment (default: the course across "
                                                                  "every assignment in the gradebook)."),
           course: Path = COURSE,
           csv_path: Optional[Path] = typer.Option(None, "--csv", help="Also write the table as CSV (parts.csv)."),
           html_path: Optional[Path] = typer.Option(None, "--html",
                                                      help="Also write a self-contained page with plots."),
           groups: bool = typer.Option(False, "--groups", help="Also list, per exercise, the students who wrote "
                                       "the same program (and near-duplicates); the HTML page always has them.")):
    """Per-student, per-exercise scores from the gradebook; ungraded submissions are listed, never scored 0."""
    if assignment is None:
        _course_report(course, csv_path, html_path, groups)
        return
    from graders.course.marks import format_marks, marks_table
    from graders.course.results import (
        NOT_GRADED_YET,
        class_marks,
        nothing_graded,
        version_changes,
        version_fix,
        write_parts_csv,
    )
    c = open_course(course)
    a = find_assignment(c, assignment)
    for path, option in ((csv_path, "--csv"), (html_path, "--html")):
        if path:
            writable(path, option)
    with gradebook(c) as gb:
        rows = class_marks(gb, c, a)
        changes = version_changes(gb, c, a)
        fix = version_fix(gb, c, a)
    if all(r.status == NOT_GRADED_YET for r in rows):  # neither graded nor refused: an empty table says nothing
        fail(nothing_graded(c, assignment))
    table = marks_table(a, f"{assignment}: correct / vectorized / fast", after=("late penalty", "total"))
    for r in rows:  # a part graded by hand in the formgrader is starred
        cells = [format_marks(tuple(r.marks[ex.grade_id(p)] for p in PARTS),
                              tuple(ex.grade_id(p) in r.manual for p in PARTS)) if r.graded
                 else "[yellow]ungraded[/yellow]" for ex in a.exercises]
        penalty = "-" if r.penalty is None else (f"-{r.penalty:g}" if r.penalty else "0")
        table.add_row(escape(inert(r.student)), *cells, penalty, f"{r.total:g}" if r.total is not None else "-")
    console.print(table)
    if any(r.manual for r in rows):
        say("* graded by hand in the formgrader (nbgrader's score: the manual score, plus any extra credit)")
    for r in rows:
        if not r.graded:
            say(f"[red]no marks for {escape(inert(r.student))}[/red]: {escape(inert(r.status))}")
    _changed(assignment, changes, fix)
    graded = [r.student for r in rows if r.graded]
    if groups or html_path:
        from graders.course.groups import answer_groups, groups_html, groups_text
        found = answer_groups(c, a, graded)
        if groups:
            say(groups_text(found), markup=False)
    if csv_path:
        write_parts_csv(csv_path, a, rows)
        say(f"wrote {escape(str(csv_path))}")
    if html_path:
        from graders.course.observed import read_verdicts
        from graders.course.report import feedback_links, write_html
        from graders.course.results import feedback_paths
        pages = {s: feedback_paths(c, assignment, s)[1] for s in graded}
        write_html(html_path, a, rows, read_verdicts(c.root, a, graded), changes, groups_html(found),
                   feedback_links(pages, html_path))
        say(f"wrote {escape(str(html_path))}")


def _course_report(course: Path, csv_path: Optional[Path], html_path: Optional[Path], groups: bool) -> None:
    """``vecgrade report`` without an assignment: each student's total per assignment in the gradebook (nbgrader's,
    late penalty taken), as a table and with ``--html`` a page that links each total to its feedback page."""
    from graders.course.results import class_marks, feedback_paths, fmt, max_points
    for given, option in ((csv_path, "--csv"), (groups, "--groups")):
        if given:
            fail(f"{option} needs an ASSIGNMENT (the course's marks as CSV: `vecgrade export`)")
    c = open_course(course)
    if html_path:
        writable(html_path, "--html")
    with gradebook(c) as gb:
        in_gb = {a.name for a in gb.assignments}
        chosen = [a for n, a in c.catalogue.items() if n in in_gb]
        per = [(a.name, sum(max_points(a).values()), class_marks(gb, c, a)) for a in chosen]
    if not any(r.graded for _, _, rows in per for r in rows):
        fail(f"nothing graded in {c.root} yet (run `vecgrade grade ASSIGNMENT`)")
    from rich.table import Table
    table = Table(title="the course: totals")
    for column in ("student", *(name for name, _, _ in per)):
        table.add_column(column)
    students = sorted({r.student for _, _, rows in per for r in rows})
    by = {name: {r.student: r for r in rows} for name, _, rows in per}
    for student in students:
        cells = []
        for name, _, _ in per:
            r = by[name].get(student)
            cells.append("-" if r is None or not r.graded else
                         fmt(r.total) + (f" (-{r.penalty:g})" if r.penalty else "") + ("*" if r.manual else ""))
        table.add_row(escape(inert(student)), *(escape(x) for x in cells))
    console.print(table)
    say("each assignment's total as nbgrader export writes it (score less the late penalty, shown in brackets); "
        "* a part graded by hand", markup=False)
    if html_path:
        from graders.course.report import feedback_links, render_course
        links = {}
        for name, _, rows in per:
            found = feedback_links({r.student: feedback_paths(c, name, r.student)[1] for r in rows if r.graded},
                                   html_path)
            links.update({(name, s): href for s, href in found.items()})
        html_path.write_text(render_course(per, links))
        say(f"wrote {escape(str(html_path))}")


def _changed(assignment: str, changes: list[str], fix: str) -> None:
    """One line when the definitions are not what the class was graded on, with what to do."""
    if changes:
        say(f"[yellow]note[/yellow]: {escape(assignment)} changed after the class was graded (the marks are from "
            f"the older version in the gradebook): {escape('; '.join(changes))}; {escape(fix)}")


@app.command()
def status(assignment: Optional[str] = typer.Argument(None, help="One assignment (default: the whole course)."),
           course: Path = COURSE,
           as_json: bool = typer.Option(False, "--json", help="Print the status as JSON, for scripts.")):
    """The semester's dashboard: per assignment and student, what waits, is graded, late or out of date.

    Waiting in the exchange, collected, graded, resubmitted and not graded yet, late (due date, extension), not
    graded (why), feedback missing or out of date, a late penalty an extension granted after grading leaves, and
    each assignment's definitions changed after grading (what, and each step)."""
    from graders.course.results import NoGradebook
    from graders.course.status import status_json, status_table
    c = open_course(course)
    names = [find_entry(c, assignment).name] if assignment else list(c.catalogue)
    try:
        if as_json:
            import json
            typer.echo(json.dumps(status_json(c, names), indent=1, default=str))
            return
        table, lines = status_table(c, names)
    except NoGradebook as exc:  # one that cannot be opened; none at all is a line under the table
        fail(str(exc))
    console.print(table)
    for line in lines:
        say(line, markup=False)
    _serve_queue(c, names)


@app.command()
def export(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments (default: all in the gradebook)."),
           course: Path = COURSE,
           to: Path = typer.Option(Path("grades.csv"), "--to", help="CSV file to write."),
           student: Optional[list[str]] = typer.Option(None, "--student", "-s", help="Only these students."),
           form: str = typer.Option("parts", "--format",
                                    help="parts (a column per exercise part), canvas or moodle (each LMS's gradebook "
                                         "import: a column per assignment with its total)."),
           roster: Optional[Path] = typer.Option(None, "--roster",
                                                 help="CSV mapping student_id to the LMS's identities (first_name, "
                                                      "last_name, email, canvas_id, sis_user_id, sis_login_id, "
                                                      "section); canvas and moodle only.")):
    """An LMS-ready CSV: per exercise part with max points, status, names and emails; or Canvas's or Moodle's import."""
    from graders.course.export import FORMATS, export_rows, write_csv
    from graders.course.results import NOT_GRADED_YET, version_changes, version_fix
    choose("format", form, list(FORMATS))
    if roster is not None and form == "parts":
        fail("--roster is for --format canvas or moodle (the parts export names students by their nbgrader id)")
    c = open_course(course)
    chosen = [find_entry(c, name) for name in assignments or []]
    roster_rows = _roster(roster) if roster is not None else None
    writable(to, "--to")
    with gradebook(c) as gb:
        if not chosen:
            in_gb = {a.name for a in gb.assignments}
            chosen = [a for n, a in c.catalogue.items() if n in in_gb]
        rows = export_rows(gb, c, chosen)
        changes = {a.name: (version_changes(gb, c, a), version_fix(gb, c, a)) for a in chosen}
        known = [r["student_id"] for r in rows[1:]]
        for name in student or []:
            choose("student", name, known)
        rows = [rows[0]] + [r for r in rows[1:] if not student or r["student_id"] in student]
        if form != "parts":
            _export_lms(gb, c, chosen, [r["student_id"] for r in rows[1:]], form, to, roster, roster_rows)
    if form == "parts":
        write_csv(rows, to)
    say(f"wrote {escape(str(to))}: {len(rows) - 1} student(s), {escape(', '.join(a.name for a in chosen))}")
    for name, (found, fix) in changes.items():
        _changed(name, found, fix)
    for a in chosen:  # the file is right (empty marks, status "not graded yet"), but the teacher should know
        waiting = [r["student_id"] for r in rows[1:] if r[f"{a.name} status"] == NOT_GRADED_YET]
        if waiting:
            say(f"[yellow]note[/yellow]: {escape(a.name)}: {len(waiting)} submission(s) not graded yet, exported "
                f"with empty marks ({escape(', '.join(waiting))}); run `vecgrade grade {escape(a.name)}`, then export "
                "again")


def _roster(path: Path) -> dict[str, dict[str, str]]:
    from graders.course.export import RosterError, read_roster
    try:
        return read_roster(path)
    except RosterError as exc:
        fail(str(exc))


def _export_lms(gb, course, chosen, students: list[str], form: str, to: Path, roster: Optional[Path],
                roster_rows: Optional[dict[str, dict[str, str]]]) -> None:
    """Canvas's or Moodle's import file; a gradebook student the roster lacks stops it before anything is written."""
    from graders.course.export import (
        RosterError,
        assignment_totals,
        canvas_assignment_ids,
        canvas_rows,
        check_roster,
        identities,
        moodle_rows,
        write_lms_csv,
    )
    extra: list[str] = []
    if roster_rows is not None:
        try:
            extra = check_roster(roster_rows, students, roster or "")
        except RosterError as exc:
            fail(str(exc))
    totals = assignment_totals(gb, course, chosen)
    people = identities(gb, students, roster_rows)
    try:  # a file an importer could read as one student's grade given to another is never written
        if form == "canvas":
            header, table = canvas_rows(chosen, totals, people, canvas_assignment_ids(course, chosen))
        else:
            header, table = moodle_rows(chosen, totals, people)
    except RosterError as exc:
        fail(str(exc))
    write_lms_csv(to, header, table)
    if extra:
        say(f"[yellow]note[/yellow]: the roster {escape(str(roster))} lists {len(extra)} student(s) the export does "
            f"not have (no submission in the gradebook, or another id), left out: {escape(', '.join(extra))}")



def _serve_queue(c, names: list[str]) -> None:
    """The service's queue under ``vecgrade status`` (nothing when no service ever ran for this course)."""
    from graders.serve.queue import queue_table
    found = queue_table(c, names)
    if found is not None:
        console.print(found[0])
        for line in found[1]:
            say(line, markup=False)
