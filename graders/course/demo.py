"""``vecgrade demo``: the whole instructor workflow on a simulated class, in a fresh course directory.

The class of each assignment lives in the kit's ``demo/<assignment>.py`` (see
``graders.course.personas``); each student says what it deserves, and the
final table checks the gradebook against it.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from graders import KIT_ROOT
from graders.course.build import write_source
from graders.course.export import export_rows, write_csv
from graders.course.feedback import write_feedback
from graders.course.grade import grade_class
from graders.course.marks import add_marks_row, exercise_marks, marks_table
from graders.course.personas import Persona, demo_module, load_roster
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.errors import VecgradeError
from graders.model.exercise import PARTS, Assignment, Exercise, load_course
from graders.model.exits import ExitCode

MARKER = ".vecgrade-demo"
TABLES = {  # the per-exercise tables of demo/<assignment>.py that CONTRIBUTING.md names, and what an entry holds
    "WRONG": "a plausible wrong vectorized answer",
    "ALTERNATIVE": "a correct vectorized answer written differently from the reference",
    "SLIPS": "(text of the reference, what a student wrote instead)",
}


class DemoError(VecgradeError):
    """A mistake in the demo's command line: an unknown assignment, a folder that is not a demo's."""


def check_demo(directory: Path, assignment_name: str) -> None:
    """Raise ``DemoError`` for a user's mistake, before anything is touched."""
    kit = load_course(KIT_ROOT / "assignments")
    if assignment_name not in kit:
        raise DemoError(f"no assignment {assignment_name!r}; choose one of: {', '.join(kit)}")
    if _not_a_demo(directory):
        raise DemoError(_not_a_demo(directory))


def _not_a_demo(directory: Path) -> str:
    """Why ``directory`` may not be replaced by a demo ("" when it may: absent, or a demo's that does not hold
    the working folder, which removing it would pull from under this process)."""
    directory = Path(directory).resolve()
    if directory.exists() and not (directory / MARKER).exists():
        return f"{directory} exists and is not a vecgrade demo; choose another --dir"
    if Path.cwd().resolve().is_relative_to(directory):
        return f"--dir {directory} holds the folder you are in; cd elsewhere or choose another --dir"
    return ""


def make_course(directory: Path, kit_root: Path = KIT_ROOT) -> Course:
    """A fresh course directory holding the kit's definitions and config (a previous demo is replaced)."""
    directory = Path(directory).resolve()
    if _not_a_demo(directory):
        raise FileExistsError(_not_a_demo(directory))
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    (directory / MARKER).write_text("made by `vecgrade demo`; safe to delete\n")
    shutil.copytree(kit_root / "assignments", directory / "assignments",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(kit_root / "nbgrader_config.py", directory / "nbgrader_config.py")
    (directory / "exchange").mkdir()
    return Course(directory)


def roster_problems(kit_root: Path, assignment: Assignment) -> list[str]:
    """What the demo class of ``assignment`` lacks, one line each, before any work (never a traceback).

    A per-exercise table of ``demo/<assignment>.py`` (a module-level dict keyed by exercise names)
    missing an exercise is named with what to add; any other failure of a student on an exercise
    names the student, the exercise and the error."""
    where = f"demo/{assignment.name}.py"
    try:
        module = demo_module(kit_root, assignment.name)
    except FileNotFoundError as exc:
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001 - the instructor's module may fail in any way; say how, in one line
        return [f"{where} does not import: {type(exc).__name__}: {exc}"]
    names = [ex.name for ex in assignment.exercises]
    problems = []
    for table, value in vars(module).items():
        if table.isupper() and isinstance(value, dict) and set(value) & set(names):
            what = TABLES.get(table, "an entry like the others")
            problems += [f"{where}: {table} has no entry for {name!r}; add one: {what} (CONTRIBUTING.md, step 7)"
                         for name in names if name not in value]
    if problems:
        return problems
    try:
        people = module.roster(assignment)
    except Exception as exc:  # noqa: BLE001 - as above
        return [f"{where}: roster() failed: {type(exc).__name__}: {exc}"]
    for persona in people:
        for ex in assignment.exercises:
            try:
                persona.answers(ex)
                persona.deserves(ex.name)
            except Exception as exc:  # noqa: BLE001 - as above
                problems.append(f"{where}: student {persona.student} has nothing for {ex.name!r} "
                                f"({type(exc).__name__}: {exc}); add it (CONTRIBUTING.md, step 7)")
    return problems


def submit_class(course: Course, assignment_name: str, people: list[Persona] | None = None) -> list[str]:
    """Write each simulated student's notebook where ``nbgrader collect`` would put it.

    ``people`` defaults to the assignment's demo class, read from the kit.
    """
    assignment = course.assignments[assignment_name]
    people = load_roster(KIT_ROOT, assignment) if people is None else people
    release = course.paths.notebook(Step.RELEASE, assignment_name)
    release_nb = nbformat.read(release, as_version=4)
    students = []
    for persona in people:
        dest = course.paths.notebook(Step.SUBMITTED, assignment_name, persona.student)
        dest.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(persona.notebook(release_nb, assignment), dest)
        students.append(persona.student)
    return students


def submit_demo_class(course: Course, assignment_name: str) -> list[str]:
    """``vecgrade demo --submissions-only``: the demo class's notebooks of ``assignment_name`` in ``submitted/`` of
    an existing course, made from its ``release/`` notebook, as ``nbgrader collect`` would leave them (a demo
    student's earlier submission is replaced). ``DemoError`` for a mistake, before anything is written."""
    if assignment_name not in course.assignments:
        raise DemoError(f"no assignment {assignment_name!r} in {course.root}; choose one of: "
                        f"{', '.join(course.assignments)}")
    release = course.paths.notebook(Step.RELEASE, assignment_name)
    if not release.exists():
        raise DemoError(f"{release} does not exist: run `nbgrader generate_assignment {assignment_name}` first "
                        "(the demo class answers in the release notebook)")
    problems = roster_problems(KIT_ROOT, course.assignments[assignment_name])
    if problems:
        raise DemoError("; ".join(problems))
    return submit_class(course, assignment_name)


def deserved_marks(ex: Exercise, persona: Persona) -> tuple[float, ...]:
    """The points ``persona`` deserves on ``ex``, part by part."""
    return tuple(f * ex.points.of(p) for f, p in zip(persona.deserves(ex.name), PARTS, strict=True))


def deserved_table(course: Course, assignment_name: str, people: list[Persona]) -> tuple[Table, int]:
    """The marks table of the class, with what each student wrote and whether the marks are deserved."""
    assignment = course.assignments[assignment_name]
    scores = course.part_scores(assignment)
    table = marks_table(assignment, f"{assignment_name}: points for correct / vectorized / fast",
                        before=("student", "wrote"), after=("as deserved",))
    wrong = 0
    for persona in people:
        got = scores.get(persona.student, {})
        ok = all(exercise_marks(ex, got) == deserved_marks(ex, persona) for ex in assignment.exercises)
        wrong += not ok
        add_marks_row(table, assignment, got, (persona.student, persona.about),
                      ("[green]yes[/green]" if ok else "[red]NO[/red]",))
    return table, wrong


def run_demo(directory: Path, assignment_name: str, console: Console,
             errors: Console | None = None) -> ExitCode:
    """``OK`` when every simulated student got what it deserves, ``FAILED`` when one did not, ``USAGE_ERROR`` for a
    user's mistake (one ``error:`` line on ``errors``, default ``console``, before the folder is touched)."""
    start = time.perf_counter()
    try:
        check_demo(directory, assignment_name)
    except DemoError as exc:
        (errors or console).print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return ExitCode.USAGE_ERROR
    # the kit's definitions, as make_course is about to copy them: a class that lacks an entry touches no disk
    problems = roster_problems(KIT_ROOT, load_course(KIT_ROOT / "assignments")[assignment_name])
    for problem in problems:
        (errors or console).print(f"[red]error:[/red] {escape(problem)}", highlight=False, soft_wrap=True)
    if problems:
        return ExitCode.USAGE_ERROR
    course = make_course(directory, KIT_ROOT)
    people = load_roster(KIT_ROOT, course.assignments[assignment_name])
    console.print(f"[bold]1. course directory[/bold] {escape(str(course.root))}", soft_wrap=True, highlight=False)
    for a in course.assignments.values():
        write_source(course.root, a)
    console.print(f"[bold]2. built[/bold] source/ for {', '.join(course.assignments)}")
    with course.api() as api:
        for step, call in (("generate_assignment", api.generate_assignment),
                           ("release_assignment", api.release_assignment)):
            result = call(assignment_name)
            if not result["success"]:
                console.print(f"[red]nbgrader {step} failed:[/red]\n"
                              + escape(f"{result.get('log', '')}\n{result.get('error', '')}"))
                return ExitCode.FAILED
    console.print(f"[bold]3. nbgrader generate_assignment + release_assignment[/bold] {assignment_name}")
    students = submit_class(course, assignment_name, people)
    console.print(f"[bold]4. submissions[/bold] from {len(students)} simulated students")
    results = grade_class(course, assignment_name, students, console=console)
    for r in results:
        if not r.success:
            console.print(f"[yellow]could not grade {escape(r.student)}[/yellow]: {escape(r.reason)}", soft_wrap=True,
                          highlight=False)
    feedback = write_feedback(course, assignment_name)
    console.print(f"[bold]5. feedback[/bold] for {len(feedback.written)} student(s) in feedback/"
                  + (f"; [red]FAILED[/red] for {escape(', '.join(feedback.failed))}" if feedback.failed else ""))
    csv_path = course.root / "grades.csv"
    with Gradebook(course.db_url) as gb:  # the same file as `vecgrade export --to grades.csv`
        write_csv(export_rows(gb, course, [course.assignments[assignment_name]]), csv_path)
    console.print(f"[bold]6. CSV export[/bold] {escape(str(csv_path))} (as `vecgrade export {assignment_name}` writes "
                  "it)", soft_wrap=True, highlight=False)
    table, wrong = deserved_table(course, assignment_name, people)
    console.print(table)
    per_nb = sum(r.seconds for r in results) / max(len(results), 1)
    console.print(f"autograde: {per_nb:.1f} s per notebook; demo total {time.perf_counter() - start:.0f} s")
    if wrong:
        console.print(f"[red]{wrong} student(s) did not get what they deserve[/red]")
        return ExitCode.FAILED
    console.print("[green]every student got the grade they deserve[/green]")
    return ExitCode.OK
