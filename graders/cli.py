"""``vecgrade``: what nbgrader lacks for this course -- build, validate, grade a class, status, report, export, demo.

A user's mistake (an unknown name, a missing folder or gradebook, an unwritable
path) gets one line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from graders.model.inert import inert
from graders.model.verdict import PARTS  # not graders.model.exercise: it imports torch (2 s), and --help needs none

# jsonschema (under nbformat, under nbgrader) checks the "iri" format with rfc3987_syntax when that is installed,
# and it compiles its grammars on import: 1.3 s of CPU on every command (a third of `vecgrade status`). No vecgrade
# command validates an IRI; without the module, jsonschema leaves that one format unchecked.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, soft_wrap=True)


def _say_error(message: str) -> None:
    """The one line of a mistake; the message is text (a student's folder name may hold rich markup)."""
    errors.print(f"[red]error:[/red] {escape(message)}", highlight=False)


def say(line: str, markup: bool = True) -> None:
    """One line of output: never wrapped inside a command it quotes, never highlighted. The caller escapes
    (``rich.markup.escape``) every dynamic part of ``line``: a path or a pip extra like ``vecgrade[lab]`` is text."""
    console.print(line, soft_wrap=True, highlight=False, markup=markup)


def fail(message: str, code: int = 2) -> NoReturn:
    _say_error(message)
    raise typer.Exit(code)


class OneLineErrors(TyperGroup):
    """A mistake in the command line itself (a missing argument, an unknown option or command) is one
    ``error:`` line and exit 2 too, instead of click's framed usage message."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as exc:  # click's errors, as typer vendors them (UsageError and the like)
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:  # `vecgrade` alone: the help
                typer.echo(ctx.get_help())
                sys.exit(0)
            _say_error(exc.format_message() + (f" (see `{ctx.command_path} --help`)" if ctx is not None else ""))
            sys.exit(getattr(exc, "exit_code", 2))
        except typer.Abort:
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(cls=OneLineErrors, add_completion=False, no_args_is_help=True,
                  help="Build, check and grade the vecgrade course (plain nbgrader underneath).")
COURSE = typer.Option(Path("."), "--course", "-c", help="Course directory (holds nbgrader_config.py).")


def _version(value: bool) -> None:
    if value:
        try:
            say(escape(f"vecgrade {version('vecgrade')}"))
        except PackageNotFoundError:
            say("vecgrade (not installed)")
        raise typer.Exit()


@app.callback()
def main(_: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                help="Print the version and exit.")):
    """Build, check and grade the vecgrade course (plain nbgrader underneath)."""


COURSE_FIX = "cd into the course folder or pass --course/-c DIR"


def _course(root: Path):
    from graders.engine.course import Course
    try:
        course = Course(root)
    except FileNotFoundError as exc:
        fail(f"{exc}; {COURSE_FIX}")
    if not (course.root / "assignments").is_dir():
        fail(f"{course.root} has no assignments/ folder: not a vecgrade course; {COURSE_FIX}")
    return course


def _choose(kind: str, name: str, valid, where: str = "") -> None:
    """One line naming what exists instead of a KeyError or an empty result."""
    if name not in valid:
        fail(f"no {kind} {name!r}{where}; choose one of: {', '.join(valid) or '(none)'}")


def _assignment(course, name: str):
    _choose("assignment", name, list(course.assignments))
    return course.assignments[name]


def _gradebook(course):
    from graders.course.results import NoGradebook, open_gradebook
    try:
        return open_gradebook(course)
    except NoGradebook as exc:
        fail(str(exc))


def _writable(path: Path, option: str) -> Path:
    """Fail before any work when a file cannot be written where ``option`` asks (and create nothing). The honest
    test is a write: a temporary file made and removed beside it, as the writers make theirs (a read-only or
    virtual file system such as /proc fails it even for root); an existing file must open for writing too."""
    where, fix = f"cannot write {path}", f"choose another {option} path"
    if path.is_dir():
        fail(f"{where}: it is a folder; {fix}")
    if not path.parent.is_dir():
        fail(f"{where}: folder {path.parent} does not exist; create it or {fix}")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        fail(f"{where}: no file can be created in {path.parent} ({exc.strerror or type(exc).__name__}); {fix}")
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            fail(f"{where}: {exc.strerror or type(exc).__name__}; {fix}")
    return path


@app.command()
def build(course: Path = COURSE, check: bool = typer.Option(False, help="Only check that source/ is up to date."),
          wheel: bool = typer.Option(False, "--wheel", help="Also write dist/<the wheel students install>.")):
    """Write source/<assignment>/<assignment>.ipynb from assignments/."""
    from graders.course.build import is_stale, notebook_path, update_source
    c = _course(course)
    if wheel:
        from graders.course.wheel import WheelError, write_wheel
        try:
            say(escape(write_wheel(c.root)))
        except WheelError as exc:
            fail(str(exc))
    stale, unchanged = [], []
    for assignment in c.assignments.values():
        path = notebook_path(c.root, assignment)
        if check:
            if is_stale(c.root, assignment):
                stale.append(path)
        elif update_source(c.root, assignment):
            say(f"wrote {escape(str(path.relative_to(c.root)))}")
        else:
            unchanged.append(assignment.name)
    if unchanged:
        say(f"up to date, not written: {escape(', '.join(unchanged))}")
    if stale:
        say("[red]out of date (run `vecgrade build`):[/red] " + escape(", ".join(map(str, stale))))
        raise typer.Exit(1)


@app.command()
def validate(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments to check (default: all)."),
             exercise: Optional[list[str]] = typer.Option(None, "--exercise", "-e", help="Only these exercises."),
             course: Path = COURSE, seed: int = typer.Option(0, help="Seed of the hidden cases."),
             form: str = typer.Option("table", "--format",
                                      help="table (fits 100 columns), markdown, or csv (one row per exercise).")):
    """Reference and alternatives pass all parts; loop, half loop, list version and stub fail where they should."""
    from graders.course import validate_view
    from graders.course.validate import validate_assignment
    _choose("format", form, ["table", "markdown", "csv"])
    c = _course(course)
    chosen = assignments or list(c.assignments)
    for name in chosen:
        _assignment(c, name)
    known = [ex.name for name in chosen for ex in c.assignments[name].exercises]
    for name in exercise or []:
        _choose("exercise", name, known, f" in {', '.join(chosen)}")
    failed: list[tuple[str, list[str]]] = []
    if form == "csv":
        sys.stdout.write(validate_view.csv_header())
    for name in chosen:
        with errors.status(f"validating {name} ..."):  # and a line per program graded: minutes go by
            rows = validate_assignment(c.assignments[name], seed=seed, only=exercise or None,
                                       progress=lambda line: errors.print(escape(line), highlight=False))
        failed += [(f"{name}/{row.exercise.name}", row.problems) for row in rows if row.problems]
        if not rows:
            continue
        if form == "csv":
            sys.stdout.write(validate_view.csv_rows(name, rows))
        elif form == "markdown":
            sys.stdout.write(validate_view.markdown(name, rows) + "\n")
        else:
            console.print(validate_view.table(name, rows))
    if form == "table":
        console.print(validate_view.LEGEND, style="dim", highlight=False, width=min(100, console.width))
        for where, problems in failed:
            say(f"[red]{escape(where)}[/red]: " + escape("; ".join(problems)))
    if failed:
        raise typer.Exit(1)


@app.command()
def grade(assignment: str, course: Path = COURSE,
          student: Optional[list[str]] = typer.Option(None, "--student", "-s", help="Only these students."),
          jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1,
                                   help="Submissions graded at once on this machine (default: number of cores)."),
          scheduler: Optional[str] = typer.Option(None, help="Grade on this Dask cluster (tcp://HOST:PORT)."),
          plain: bool = typer.Option(False, help="nbgrader's pipeline without vecgrade's checks (benchmarks only).")):
    """Autograde every submission of ASSIGNMENT through nbgrader, with a progress bar; exit 1 if any failed."""
    import time

    from graders.course.grade import grade_class
    from graders.course.lock import gradebook_lock
    from graders.course.results import gradebook_problem
    c = _course(course)
    _assignment(c, assignment)
    submitted = c.submitted_students(assignment)
    if not submitted:
        fail(f"no submissions in submitted/*/{assignment}/: run `nbgrader collect {assignment}`, "
             f"or put each student's notebook in submitted/<student>/{assignment}/")
    unknown = [s for s in student or [] if s not in submitted]
    if unknown:
        fail(f"no submission of {assignment} from {', '.join(unknown)}; students who submitted: {', '.join(submitted)}")
    problem = gradebook_problem(c, assignment)
    if problem:
        fail(problem)
    if scheduler:
        _reach(scheduler)
    from graders.engine.coordinator import JailUnusable
    start = time.perf_counter()
    with gradebook_lock(c, waiting=lambda who: say(f"waiting for the gradebook, held by {escape(who)}")):
        try:
            results = grade_class(c, assignment, student or submitted, plain=plain, console=console,
                                  jobs=jobs, scheduler=scheduler)
        except JailUnusable as exc:
            fail(str(exc))
        bad = [r for r in results if not r.success]
        for r in bad:  # never a 0: each named, with why (and its code in ungraded.csv)
            say(f"[red]could not grade {escape(inert(r.student))}[/red]: {escape(inert(r.reason))}")
        say(f"graded {len(results) - len(bad)} of {len(results)} submissions in {time.perf_counter() - start:.1f} s")
        _timestamp_notes(c, assignment, [r.student for r in results if r.success])
        _refresh_feedback(c, assignment, [r.student for r in results if r.success])
    if bad or not results:
        raise typer.Exit(1)


def _reach(scheduler: str) -> None:
    """A Dask scheduler that cannot be reached is a mistake in the command, said before any work."""
    from distributed import Client  # Dask loads in seconds; only --scheduler needs it
    try:
        with Client(scheduler, timeout="10s"):
            pass
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError (a malformed address) ...
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fail(f"cannot reach the Dask scheduler at {scheduler}: {why} "
             "(start it with `dask scheduler`, or leave out --scheduler to grade here)")


def _timestamp_notes(c, assignment: str, students: list[str]) -> None:
    """One line per graded submission whose timestamp.txt disagrees with its time of record."""
    from graders.pipeline.arrivals import arrivals
    recorded = arrivals(c.root)
    for s in students:
        note = recorded[s, assignment].note() if (s, assignment) in recorded else ""
        if note:
            say(f"[yellow]note[/yellow]: {escape(note)}")


def _refresh_feedback(c, assignment: str, students: list[str]) -> None:
    """A regrade must not leave stale feedback: students who already had feedback get it regenerated now
    (nbgrader's generate_feedback would otherwise skip them without --force)."""
    from graders.course.feedback import write_feedback
    stale = [s for s in students if (c.root / "feedback" / s / assignment).is_dir()]
    if not stale:
        return
    run = write_feedback(c, assignment, stale)
    for s, why in run.failed.items():
        say(f"[yellow]feedback for {escape(s)} not regenerated[/yellow]: {escape(why)}")
    say(f"feedback regenerated for {len(run.written)} student(s) who had it")


@app.command()
def report(assignment: str, course: Path = COURSE,
           csv_path: Optional[Path] = typer.Option(None, "--csv", help="Also write the table as CSV (parts.csv)."),
           html_path: Optional[Path] = typer.Option(None, "--html",
                                                      help="Also write a self-contained page with plots."),
           groups: bool = typer.Option(False, "--groups", help="Also list, per exercise, the students who wrote "
                                       "the same program (and near-duplicates); the HTML page always has them.")):
    """Per-student, per-exercise scores from the gradebook; ungraded submissions are listed, never scored 0."""
    from graders.course.marks import format_marks, marks_table
    from graders.course.results import (
        NOT_GRADED_YET,
        class_marks,
        nothing_graded,
        version_changes,
        version_fix,
        write_parts_csv,
    )
    c = _course(course)
    a = _assignment(c, assignment)
    for path, option in ((csv_path, "--csv"), (html_path, "--html")):
        if path:
            _writable(path, option)
    with _gradebook(c) as gb:
        rows = class_marks(gb, c, a)
        changes = version_changes(gb, a)
        fix = version_fix(gb, a)
    if all(r.status == NOT_GRADED_YET for r in rows):  # neither graded nor refused: an empty table says nothing
        fail(nothing_graded(c, assignment))
    table = marks_table(a, f"{assignment}: correct / vectorized / fast", after=("total",))
    for r in rows:
        cells = [format_marks(tuple(r.marks[ex.grade_id(p)] for p in PARTS)) if r.graded
                 else "[yellow]ungraded[/yellow]" for ex in a.exercises]
        table.add_row(escape(inert(r.student)), *cells, f"{r.total:g}" if r.total is not None else "-")
    console.print(table)
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
        from graders.course.report import write_html
        write_html(html_path, a, rows, read_verdicts(c.root, a, graded), changes, groups_html(found))
        say(f"wrote {escape(str(html_path))}")


def _changed(assignment: str, changes: list[str], fix: str) -> None:
    """One line when the definitions are not what the class was graded on, with what to do."""
    if changes:
        say(f"[yellow]note[/yellow]: {escape(assignment)} changed after the class was graded (the marks are from "
            f"the older version in the gradebook): {escape('; '.join(changes))}; {escape(fix)}")


@app.command()
def status(assignment: Optional[str] = typer.Argument(None, help="One assignment (default: all)."),
           course: Path = COURSE):
    """Per assignment: released, submitted, graded, ungraded (and why), feedback not written or out of date."""
    from graders.course.results import NoGradebook
    from graders.course.status import status_table
    c = _course(course)
    names = [_assignment(c, assignment).name] if assignment else list(c.assignments)
    try:
        table, lines = status_table(c, names)
    except NoGradebook as exc:  # one that cannot be opened; none at all is a line under the table
        fail(str(exc))
    console.print(table)
    for line in lines:
        say(line, markup=False)
    _serve_queue(c, names)


@app.command()
def feedback(assignment: str, course: Path = COURSE):
    """Regenerate the feedback HTML of every graded student of ASSIGNMENT (always forced).

    Students without grades are skipped and named."""
    from graders.course.feedback import autograded_students, write_feedback
    from graders.course.results import nothing_graded
    c = _course(course)
    _assignment(c, assignment)
    if not autograded_students(c, assignment):
        fail(nothing_graded(c, assignment))
    _gradebook(c).close()
    run = write_feedback(c, assignment)
    if run.skipped:
        say(f"skipped {len(run.skipped)} without grades (see `vecgrade status {escape(assignment)}`): "
            f"{escape(', '.join(run.skipped))}")
    for s, why in run.failed.items():
        say(f"[red]no feedback for {escape(s)}[/red]: {escape(why)}")
    say(f"feedback for {len(run.written)} student(s) of {escape(assignment)} in {escape(str(c.root / 'feedback'))}")
    if run.failed:
        raise typer.Exit(1)


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
    _choose("format", form, list(FORMATS))
    if roster is not None and form == "parts":
        fail("--roster is for --format canvas or moodle (the parts export names students by their nbgrader id)")
    c = _course(course)
    chosen = [_assignment(c, name) for name in assignments or []]
    roster_rows = _roster(roster) if roster is not None else None
    _writable(to, "--to")
    with _gradebook(c) as gb:
        if not chosen:
            in_gb = {a.name for a in gb.assignments}
            chosen = [a for n, a in c.assignments.items() if n in in_gb]
        rows = export_rows(gb, c, chosen)
        changes = {a.name: (version_changes(gb, a), version_fix(gb, a)) for a in chosen}
        known = [r["student_id"] for r in rows[1:]]
        for name in student or []:
            _choose("student", name, known)
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
    header, table = (canvas_rows if form == "canvas" else moodle_rows)(chosen, totals, people)
    write_lms_csv(to, header, table)
    if extra:
        say(f"[yellow]note[/yellow]: the roster {escape(str(roster))} lists {len(extra)} student(s) the export does "
            f"not have (no submission in the gradebook, or another id), left out: {escape(', '.join(extra))}")


@app.command()
def demo(directory: Path = typer.Option(Path("demo-course"), "--dir", help="Fresh course directory to create."),
         assignment: str = typer.Option("broadcasting", help="Assignment to run the demo class on."),
         submissions_only: bool = typer.Option(False, "--submissions-only",
                                               help="Only put the demo class's notebooks of ASSIGNMENT into "
                                                    "submitted/ of the course in --course (after nbgrader "
                                                    "generate_assignment), as nbgrader collect would; no --dir."),
         course: Path = typer.Option(Path("."), "--course", "-c",
                                     help="With --submissions-only: the course directory (default: .).")):
    """Fresh course -> build -> release -> a simulated class -> autograde -> feedback -> CSV -> table.

    With --submissions-only: the simulated class's submissions in an existing course, to grade with vecgrade grade."""
    if submissions_only:
        from graders.course.demo import DemoError, submit_demo_class
        c = _course(course)
        try:
            students = submit_demo_class(c, assignment)
        except DemoError as exc:
            fail(str(exc))
        say(f"submitted/<student>/{escape(assignment)}/ for {len(students)} simulated students: "
            f"{escape(', '.join(students))} (grade them: vecgrade grade {escape(assignment)})")
        return
    from graders.course.demo import run_demo
    raise typer.Exit(run_demo(directory, assignment, console, errors=errors))



# --- verdicts on submit (graders.serve, imported here only, lazily: nothing else imports it) ---------------

@app.command()
def serve(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments to serve (default: all)."),
          course: Path = COURSE,
          jobs: int = typer.Option(os.cpu_count() or 1, "--jobs", "-j", min=1,
                                   help="Submissions graded at once on this machine (default: number of cores)."),
          scheduler: Optional[str] = typer.Option(None, help="Grade on this Dask cluster (tcp://HOST:PORT).")):
    """Verdicts on submit: collect, grade and release feedback for each new submission in nbgrader's exchange.

    Runs in the foreground until SIGTERM or Ctrl-C; one line per submission on stdout."""
    import logging

    from graders.serve.service import AlreadyServing, Service, serving
    c = _course(course)
    for name in assignments or []:
        _assignment(c, name)
    service = Service(c, assignments or None, jobs=jobs, scheduler=scheduler)
    if not (service.exchange / "inbound").is_dir():
        service.close()
        fail(f"no inbound folder at {service.exchange / 'inbound'}: release an assignment first "
             "(nbgrader release_assignment), or set c.Exchange.root")
    handler = logging.StreamHandler(sys.stdout)  # the service's own lines; nbgrader's warnings go to stderr
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log = logging.getLogger("vecgrade.serve")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    from graders.engine.coordinator import JailUnusable
    try:
        with serving(c):
            service.run()
    except (AlreadyServing, JailUnusable) as exc:
        service.close()
        fail(str(exc))
    except KeyboardInterrupt:  # a second SIGTERM or Ctrl-C while the service was closing: stopped all the same
        say("vecgrade serve: stopped")
        raise typer.Exit(0) from None


def _serve_queue(c, names: list[str]) -> None:
    """The service's queue under ``vecgrade status`` (nothing when no service ever ran for this course)."""
    from graders.serve.queue import queue_table
    found = queue_table(c, names)
    if found is not None:
        console.print(found[0])
        for line in found[1]:
            say(line, markup=False)


if __name__ == "__main__":
    app()
