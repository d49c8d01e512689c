"""``vecgrade``: what nbgrader lacks for this course -- build, validate, grade a class, status, report, export, demo.

A user's mistake (an unknown name, a missing folder or gradebook, an unwritable
path) gets one line on stderr and exit code 2, never a traceback.
"""
from __future__ import annotations

import csv
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NoReturn, Optional

import typer
from rich.console import Console
from rich.table import Table

from graders.model.exercise import PARTS

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Build, check and grade the vecgrade course (plain nbgrader underneath).")
console = Console(width=None if sys.stdout.isatty() else 160)
errors = Console(stderr=True, soft_wrap=True)
COURSE = typer.Option(Path("."), "--course", "-c", help="Course directory (holds nbgrader_config.py).")


def fail(message: str, code: int = 2) -> NoReturn:
    errors.print(f"[red]error:[/red] {message}", highlight=False)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        try:
            console.print(f"vecgrade {version('vecgrade')}")
        except PackageNotFoundError:
            console.print("vecgrade (not installed)")
        raise typer.Exit()


@app.callback()
def main(_: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                help="Print the version and exit.")):
    """Build, check and grade the vecgrade course (plain nbgrader underneath)."""


def _course(root: Path):
    from graders.course.directory import Course
    try:
        course = Course(root)
    except FileNotFoundError as exc:
        fail(str(exc))
    if not (course.root / "assignments").is_dir():
        fail(f"{course.root} has no assignments/ folder: not a vecgrade course")
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


def _writable(path: Path) -> Path:
    """Fail before any work when a file cannot be written where asked (and create nothing)."""
    if not path.parent.is_dir():
        fail(f"cannot write {path}: folder {path.parent} does not exist")
    if path.is_dir() or not os.access(path if path.exists() else path.parent, os.W_OK):
        fail(f"cannot write {path}: {'it is a folder' if path.is_dir() else 'permission denied'}")
    return path


@app.command()
def build(course: Path = COURSE, check: bool = typer.Option(False, help="Only check that source/ is up to date.")):
    """Write source/<assignment>/<assignment>.ipynb from assignments/."""
    from graders.course.build import is_stale, notebook_path, write_source
    c = _course(course)
    stale = []
    for assignment in c.assignments.values():
        path = notebook_path(c.root, assignment)
        if check:
            if is_stale(c.root, assignment):
                stale.append(path)
        else:
            console.print(f"wrote {write_source(c.root, assignment).relative_to(c.root)}")
    if stale:
        console.print("[red]out of date (run `vecgrade build`):[/red] " + ", ".join(map(str, stale)))
        raise typer.Exit(1)


@app.command()
def validate(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments to check (default: all)."),
             exercise: Optional[list[str]] = typer.Option(None, "--exercise", "-e", help="Only these exercises."),
             course: Path = COURSE, seed: int = typer.Option(0, help="Seed of the hidden cases.")):
    """Reference and alternatives pass all parts; loop, half loop, list version and stub fail where they should."""
    from graders.course.validate import validate_assignment
    c = _course(course)
    chosen = assignments or list(c.assignments)
    for name in chosen:
        _assignment(c, name)
    known = [ex.name for name in chosen for ex in c.assignments[name].exercises]
    for name in exercise or []:
        _choose("exercise", name, known, f" in {', '.join(chosen)}")
    table = Table(title="vecgrade validate")
    for col in ("exercise", "reference", "alternatives", "loop: vec", "half loop: vec/fast", "list: vec/fast",
                "stub: correct", "ref. speedup", "threshold", "half loop", "list", "result"):
        table.add_column(col)
    failed: list[tuple[str, list[str]]] = []
    for name in chosen:
        with console.status(f"validating {name} ..."):
            rows = validate_assignment(c.assignments[name], seed=seed, only=exercise or None)
        for row in rows:
            if row.problems:
                failed.append((f"{name}/{row.exercise.name}", row.problems))
            table.add_row(f"{name}/{row.exercise.name}", _passes(row.reference, PARTS),
                          f"{sum(all(v.passed for v in a.values()) for a in row.alternatives)}/"
                          f"{len(row.alternatives)} pass",
                          _passes(row.loop, ("vectorized",)),
                          _passes(row.half_loop, ("vectorized", "fast")) if row.half_loop else "-",
                          _passes(row.python_list, ("vectorized", "fast")), _passes(row.stub, ("correct",)),
                          _times(row.speedup), f"{row.exercise.speedup:g}x",
                          _times(row.half_loop_factor), _times(row.python_list_factor),
                          f"[red]{len(row.problems)} problems[/red]" if row.problems else "[green]ok[/green]")
    console.print(table)
    for where, problems in failed:
        console.print(f"[red]{where}[/red]: " + "; ".join(problems))
    if failed:
        raise typer.Exit(1)


def _passes(verdicts: dict, parts) -> str:
    return "/".join("pass" if verdicts[p].passed else "fail" for p in parts)


def _times(x: float | None) -> str:
    """A factor or speedup; "-" where it was not measured (a far slower answer is stopped early)."""
    return "-" if x is None else f"{x:.1f}x" if x < 100 else f"{x:.0f}x"


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
    c = _course(course)
    submitted = c.submitted_students(assignment)
    if assignment not in c.assignments:
        console.print(f"[red]no assignment {assignment!r}; choose one of: {', '.join(c.assignments)}[/red]")
        raise typer.Exit(2)
    unknown = [s for s in student or [] if s not in submitted]
    if unknown:
        console.print(f"[red]no submission of {assignment} from {', '.join(unknown)}; students who submitted: "
                      f"{', '.join(submitted) or 'none'}[/red]")
        raise typer.Exit(2)
    start = time.perf_counter()
    with gradebook_lock(c, waiting=lambda who: console.print(f"waiting for the gradebook, held by {who}")):
        results = grade_class(c, assignment, student or submitted, plain=plain, console=console,
                              jobs=jobs, scheduler=scheduler)
        bad = [r for r in results if not r.success]
        for r in bad:
            console.print(f"[red]could not grade {r.student}[/red]: {r.reason}")
        console.print(f"graded {len(results) - len(bad)} of {len(results)} submissions "
                      f"in {time.perf_counter() - start:.1f} s")
        _refresh_feedback(c, assignment, [r.student for r in results if r.success])
    if bad or not results:
        raise typer.Exit(1)


def _refresh_feedback(c, assignment: str, students: list[str]) -> None:
    """A regrade must not leave stale feedback: students who already had feedback get it regenerated now
    (nbgrader's generate_feedback would otherwise skip them without --force)."""
    stale = [s for s in students if (c.root / "feedback" / s / assignment).is_dir()]
    if not stale:
        return
    with c.api() as api:
        for s in stale:
            result = api.generate_feedback(assignment, s, force=True)
            if not result["success"]:
                console.print(f"[yellow]feedback for {s} not regenerated[/yellow]: {result.get('error', '')}".strip())
    console.print(f"feedback regenerated for {len(stale)} student(s) who had it")


@app.command()
def report(assignment: str, course: Path = COURSE,
           csv_path: Optional[Path] = typer.Option(None, "--csv", help="Also write the table as CSV (parts.csv)."),
           html_path: Optional[Path] = typer.Option(None, "--html",
                                                      help="Also write a self-contained page with plots.")):
    """Per-student, per-exercise scores from the gradebook; ungraded submissions are listed, never scored 0."""
    from graders.course.results import class_marks, read_verdicts
    c = _course(course)
    a = _assignment(c, assignment)
    for path in (csv_path, html_path):
        if path:
            _writable(path)
    with _gradebook(c) as gb:
        rows = class_marks(gb, c, a)
    table = Table(title=f"{assignment}: correct / vectorized / fast")
    table.add_column("student")
    for ex in a.exercises:
        table.add_column(ex.name)
    table.add_column("total")
    for r in rows:
        cells = [" / ".join("-" if r.marks[ex.grade_id(p)] is None else f"{r.marks[ex.grade_id(p)]:g}" for p in PARTS)
                 if r.graded else "[yellow]ungraded[/yellow]" for ex in a.exercises]
        table.add_row(r.student, *cells, f"{r.total:g}" if r.graded else "-")
    console.print(table)
    for r in rows:
        if not r.graded:
            console.print(f"[red]no marks for {r.student}[/red]: {r.status}", soft_wrap=True)
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["student"] + [ex.grade_id(p) for ex in a.exercises for p in PARTS] + ["total", "status"])
            for r in rows:
                writer.writerow([r.student] + ["" if r.marks[g] is None else r.marks[g] for g in r.marks]
                                + ["" if r.total is None else r.total, r.status])
        console.print(f"wrote {csv_path}")
    if html_path:
        from graders.course.report import write_html
        write_html(html_path, a, rows, read_verdicts(c, a, [r.student for r in rows if r.graded]))
        console.print(f"wrote {html_path}")


@app.command()
def status(assignment: Optional[str] = typer.Argument(None, help="One assignment (default: all)."),
           course: Path = COURSE):
    """Per assignment: released, submitted, graded, ungraded (and why), feedback out of date."""
    from graders.course.status import assignment_status
    c = _course(course)
    names = [_assignment(c, assignment).name] if assignment else list(c.assignments)
    table = Table(title="vecgrade status")
    for col in ("assignment", "released", "submitted", "graded", "ungraded", "not graded yet", "feedback out of date"):
        table.add_column(col)
    reasons = []
    for name in names:
        s = assignment_status(c, name)
        table.add_row(name, "yes" if s.released else "no", str(len(s.submitted)), str(len(s.graded)),
                      str(len(s.ungraded)), ", ".join(s.waiting) or "0", ", ".join(s.stale_feedback) or "0")
        reasons += [f"{name}: could not grade {student}: {why}" for student, why in sorted(s.ungraded.items())]
    console.print(table)
    for line in reasons:
        console.print(line, soft_wrap=True, highlight=False)
    _serve_queue(c, names)


@app.command()
def feedback(assignment: str, course: Path = COURSE):
    """Regenerate every student's feedback HTML for ASSIGNMENT (always forced: a regrade never leaves stale HTML)."""
    c = _course(course)
    _assignment(c, assignment)
    if not (c.root / "autograded").is_dir():
        fail(f"nothing autograded in {c.root} yet (run `vecgrade grade {assignment}`)")
    _gradebook(c).close()
    with c.api() as api:
        result = api.generate_feedback(assignment, force=True)
    if not result["success"]:
        fail(f"nbgrader generate_feedback failed: {result.get('error') or result.get('log', '')}".strip(), 1)
    console.print(f"feedback for {assignment} regenerated in {c.root / 'feedback'}")


@app.command()
def export(assignments: Optional[list[str]] = typer.Argument(None, help="Assignments (default: all in the gradebook)."),
           course: Path = COURSE,
           to: Path = typer.Option(Path("grades.csv"), "--to", help="CSV file to write."),
           student: Optional[list[str]] = typer.Option(None, "--student", "-s", help="Only these students.")):
    """An LMS-ready CSV: one row per student, one column per exercise part, max points, status, names and emails."""
    from graders.course.export import export_rows, write_csv
    c = _course(course)
    chosen = [_assignment(c, name) for name in assignments or []]
    _writable(to)
    with _gradebook(c) as gb:
        if not chosen:
            in_gb = {a.name for a in gb.assignments}
            chosen = [a for n, a in c.assignments.items() if n in in_gb]
        rows = export_rows(gb, c, chosen)
    known = [r["student_id"] for r in rows[1:]]
    for name in student or []:
        _choose("student", name, known)
    rows = [rows[0]] + [r for r in rows[1:] if not student or r["student_id"] in student]
    write_csv(rows, to)
    console.print(f"wrote {to}: {len(rows) - 1} student(s), {', '.join(a.name for a in chosen)}")


@app.command()
def demo(directory: Path = typer.Option(Path("demo-course"), "--dir", help="Fresh course directory to create."),
         assignment: str = typer.Option("broadcasting", help="Assignment to run the demo class on.")):
    """Fresh course -> build -> release -> a simulated class -> autograde -> feedback -> CSV -> table."""
    from graders.course.demo import run_demo
    sys.exit(run_demo(directory, assignment, console))



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
    try:
        with serving(c):
            service.run()
    except AlreadyServing as exc:
        service.close()
        fail(str(exc))


def _serve_queue(c, names: list[str]) -> None:
    """The service's queue under ``vecgrade status``: waiting, grading, graded in the last hour, refused."""
    from graders.serve.pages import when
    from graders.serve.queue import queue_status
    found = queue_status(c, names)
    if found is None:
        return
    table = Table(title="vecgrade serve: verdicts on submit")
    for col in ("assignment", "waiting", "grading", "graded (last hour)", "latency p50 / max", "refused"):
        table.add_column(col)
    lines = []
    for s in found:
        lat = s.latencies()
        table.add_row(s.assignment, ", ".join(e.student for e in s.waiting) or "0",
                      ", ".join(e.student for e in s.grading) or "0", str(len(s.graded_last_hour)),
                      f"{lat[len(lat) // 2]:.1f} s / {lat[-1]:.1f} s" if lat else "-", str(len(s.refused)))
        lines += [f"{s.assignment}: waiting {e.student} (submitted {e.timestamp}"
                  + (f", graded from {when(e.not_before)})" if e.not_before else ")") for e in s.waiting]
        lines += [f"{s.assignment}: refused {e.entry} (folder of {e.owner or 'unknown'}): {e.reason}"
                  for e in s.refused]
    console.print(table)
    for line in lines:
        console.print(line, soft_wrap=True, highlight=False)


if __name__ == "__main__":
    app()
