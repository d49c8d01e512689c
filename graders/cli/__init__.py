"""``vecgrade``: what nbgrader lacks for this course -- build, validate, grade a class, status, report, export, demo.

One command group per module, each registering its commands with ``graders.cli.base.app``:

- ``course``  -- ``build``, ``validate``: the notebooks from the definitions, and the definitions checked;
- ``grading`` -- ``grade``, ``feedback``: a class autograded, its feedback regenerated;
- ``results`` -- ``report``, ``status``, ``export``: what the gradebook holds;
- ``extend``  -- ``extend``: a student's extension of a due date;
- ``demo``    -- ``demo``: a simulated class end to end;
- ``serve``   -- ``serve``: verdicts on submit;
- ``student`` -- ``student-lab``: the students' JupyterLab (run by ``graders.entry`` without typer).

A user's mistake (an unknown name, a missing folder or gradebook, an unwritable path) gets one line on stderr
and ``ExitCode.USAGE_ERROR`` (graders.model.exits), never a traceback. Every module imports only typer and rich
at the top, so ``vecgrade --help`` loads no torch or nbgrader.
"""
# each module registers its commands with app as it is imported: this order is `vecgrade --help`'s
# isort: off
from graders.cli import course, grading, results, extend, demo, serve, student  # noqa: F401
# isort: on
from graders.cli.base import app

__all__ = ["app"]
