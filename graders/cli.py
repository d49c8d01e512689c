"""``vecgrade``: what nbgrader lacks for this course -- build, validate, grade a class, report, demo."""
from __future__ import annotations

import csv
import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from graders.model.exercise import PARTS

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Build, check and grade the vecgrade course (plain nbgrader underneath).")
console = Console(width=None if sys.stdout.isatty() else 160)
COURSE = typer.Option(Path("."), "--course", "-c", help="Course directory (holds nbgrader_config.py).")


def _course(root: Path):
    from graders.course.directory import Course
    try:
        return Course(root)
    except FileNotFoundError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2)


@app.command()
def build(course: Path = COURSE, check: bool = typer.Option(False, help="Only check that source/ is up to date.")):
    """Write source/<assignment>/<assignment>.ipynb from assignments/."""
    from graders.course.build import notebook_path, render, write_source
    c = _course(course)
    stale = []
    for assignment in c.assignments.values():
        path = notebook_path(c.root, assignment)
        if check:
            if not path.exists() or path.read_text() != render(assignment):
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
    """Reference passes all parts, loop version fails vectorized, stub fails correct."""
    from graders.course.validate import validate_assignment
    c = _course(course)
    chosen = assignments or list(c.assignments)
    table = Table(title="vecgrade validate")
    for col in ("assignment", "exercise", "reference", "loop: vectorized", "stub: correct",
                "ref. speedup", "threshold", "result"):
        table.add_column(col)
    failed = 0
    for name in chosen:
        if name not in c.assignments:
            console.print(f"[red]no assignment {name!r} in {c.root / 'assignments'}[/red]")
            raise typer.Exit(2)
        with console.status(f"validating {name} ..."):
            rows = validate_assignment(c.assignments[name], seed=seed, only=exercise or None)
        for row in rows:
            ok = not row.problems
            failed += not ok
            ref = "/".join("pass" if row.reference[p].passed else "FAIL" for p in PARTS)
            table.add_row(row.assignment, row.exercise.name, ref,
                          "fails" if not row.loop["vectorized"].passed else "PASSES",
                          "fails" if not row.stub["correct"].passed else "PASSES",
                          f"{row.speedup:.0f}x" if row.speedup else "-", f"{row.exercise.speedup:g}x",
                          "[green]ok[/green]" if ok else "[red]" + "; ".join(row.problems)[:200] + "[/red]")
    console.print(table)
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
    results = grade_class(c, assignment, student or submitted, plain=plain, console=console,
                          jobs=jobs, scheduler=scheduler)
    bad = [r for r in results if not r.success]
    for r in bad:
        console.print(f"[red]could not grade {r.student}[/red]: {r.reason}")
    console.print(f"graded {len(results) - len(bad)} of {len(results)} submissions "
                  f"in {time.perf_counter() - start:.1f} s")
    if bad or not results:
        raise typer.Exit(1)


@app.command()
def report(assignment: str, course: Path = COURSE,
           csv_path: Optional[Path] = typer.Option(None, "--csv", help="Also write the table as CSV.")):
    """Per-student, per-exercise scores from the gradebook."""
    c = _course(course)
    a = c.assignments[assignment]
    scores = c.part_scores(a)
    table = Table(title=f"{assignment}: correct / vectorized / fast")
    table.add_column("student")
    for ex in a.exercises:
        table.add_column(ex.name)
    table.add_column("total")
    rows = []
    for student, s in sorted(scores.items()):
        cells, total = [], 0.0
        for ex in a.exercises:
            marks = [s[ex.grade_id(p)] for p in PARTS]
            total += sum(m or 0 for m in marks)
            cells.append(" / ".join("-" if m is None else f"{m:g}" for m in marks))
        table.add_row(student, *cells, f"{total:g}")
        rows.append([student] + [s[ex.grade_id(p)] for ex in a.exercises for p in PARTS] + [total])
    console.print(table)
    from graders.course.grade import ungraded
    for student, reason in sorted(ungraded(c, assignment).items()):
        console.print(f"[red]could not grade {student}[/red]: {reason}")
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["student"] + [ex.grade_id(p) for ex in a.exercises for p in PARTS] + ["total"])
            writer.writerows(rows)
        console.print(f"wrote {csv_path}")


@app.command()
def demo(directory: Path = typer.Option(Path("demo-course"), "--dir", help="Fresh course directory to create."),
         assignment: str = typer.Option("broadcasting", help="Assignment to run the demo class on.")):
    """Fresh course -> build -> release -> a simulated class -> autograde -> feedback -> CSV -> table."""
    from graders.course.demo import run_demo
    sys.exit(run_demo(directory, assignment, console))


if __name__ == "__main__":
    app()
