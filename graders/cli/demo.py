"""``vecgrade demo``: a fresh course and a simulated class, built, graded and reported end to end."""
from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from graders.cli.base import app, console, errors, fail, open_course, say


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
        c = open_course(course)
        try:
            students = submit_demo_class(c, assignment)
        except DemoError as exc:
            fail(str(exc))
        say(f"submitted/<student>/{escape(assignment)}/ for {len(students)} simulated students: "
            f"{escape(', '.join(students))} (grade them: vecgrade grade {escape(assignment)})")
        return
    from graders.course.demo import run_demo
    raise typer.Exit(run_demo(directory, assignment, console, errors=errors))
