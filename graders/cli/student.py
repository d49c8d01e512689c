"""``vecgrade student-lab``, listed in ``vecgrade --help`` beside the instructor's commands.

The command runs in the students' environment, where typer and nbgrader may be missing: ``graders.entry`` runs it
(``graders.student.lab.main``) before it imports this package, so ``vecgrade student-lab [--user|--help]`` needs only
the ``lab`` extra. Registered here as well, it is listed by ``vecgrade --help`` and runs the same body when the
command is reached through typer (``python -m graders.cli student-lab``).
"""
from __future__ import annotations

import typer

from graders.cli.base import app


@app.command("student-lab", context_settings={"help_option_names": ["-h", "--help"]})
def student_lab(user: bool = typer.Option(False, "--user", help="Write the user's Jupyter config folder instead "
                                          "(every environment of theirs).")):
    """In the students' environment: JupyterLab shows nbgrader's student tools only (the teacher's tools hidden)."""
    from graders.student.lab import main
    raise typer.Exit(main(["--user"] if user else []))
