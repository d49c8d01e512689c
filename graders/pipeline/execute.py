"""The step that runs a submitted notebook for its feedback: nbgrader's ``Execute``, without a kernel to start.

nbgrader's ``Execute`` starts a Jupyter kernel per notebook and talks to it over
ZeroMQ; that start cost more than grading the notebook. Feedback needs what each
cell printed, displayed, returned or raised, so here the cells run in IPython's
shell (the core of that kernel) forked warm into a jail of its own
(graders.sandbox.shell, graders.sandbox.shell_session), and their outputs are
recorded as a kernel's would be. The verdicts never depend on these outputs:
``TrustedVerdicts`` decides every grade cell in processes of its own.

- Plain nbgrader drops a notebook whose kernel dies (a crash, ``os._exit``, a
  memory bomb): the student gets no grade rows at all. Here the notebook keeps
  the outputs it got so far and goes on to ``TrustedVerdicts``, so the honest
  parts keep their marks.
- ``timeout``: a cell is interrupted after it; ``notebook_budget``: the
  wall-clock time for the whole notebook. Each cell gets at most what is left
  of it; once it is spent, the remaining cells are not run.
- A cell that runs past its time shows one line ("stopped after 20 s: ..."),
  not the ``KeyboardInterrupt`` traceback the interrupt produces.
- Outputs are capped by bytes as they arrive (see ``graders.pipeline.outputs``),
  so a flood never piles up in the grader's memory.
- The shell works in a private copy of the notebook's folder (regular files
  only, within the ``Intake`` caps, without the notebooks and the names
  nbgrader ignores), inside its own scratch folder: nothing it writes reaches
  the course.
- When the sandbox is asked for and unavailable, ``SandboxUnavailableError``
  is not swallowed: the notebook is not graded.
"""
from __future__ import annotations

import math
import os
import time
from typing import TYPE_CHECKING

from nbformat.v4 import new_output
from nbgrader.converters.base import NbGraderException
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Integer

from graders.model.errors import VecgradeError
from graders.pipeline.intake import Intake, copy_regular_files
from graders.pipeline.outputs import cap_outputs, cut_notice
from graders.sandbox.jail import PASSED_ENV
from graders.sandbox.policy import Sandbox

if TYPE_CHECKING:
    from graders.sandbox.shell_session import ShellSession

TIMED_OUT = "stopped after {seconds:g} s: the cell ran past its time budget"
NOT_RUN = "(not run: {why})\n"
STOPPED = "the notebook's kernel stopped before this cell"


class KernelNotStarted(VecgradeError, NbGraderException):
    """The notebook's kernel could not start: an accident of the grading machine, never the student's 0. The
    submission is not graded (nothing is recorded) and the teacher is told why."""

DIED = "(the notebook's kernel stopped while this cell ran)\n"


def not_run(cell, why: str) -> None:
    cell.outputs = [new_output("stream", name="stdout", text=NOT_RUN.format(why=why))]
    cell.execution_count = None


def timed_out(seconds: float):
    line = TIMED_OUT.format(seconds=seconds)
    return new_output("error", ename="CellTimeout", evalue=line, traceback=[line])


class ResilientExecute(NbGraderPreprocessor):
    """Run every code cell in a confined, warm IPython shell and record its outputs, as nbgrader's ``Execute``."""

    timeout = Integer(20, help="Seconds one cell may run before it is interrupted").tag(config=True)
    notebook_budget = Float(180.0, help="Seconds of kernel time for the whole notebook; "
                                        "cells after it are not run").tag(config=True)
    max_output_bytes = Integer(64 * 1024, help="Largest output a cell keeps, in bytes").tag(config=True)
    max_notebook_bytes = Integer(1024 * 1024, help="Largest total of a notebook's outputs, in bytes").tag(config=True)
    start_timeout = Float(60.0, help="Seconds the notebook's shell may take to start").tag(config=True)

    def preprocess(self, nb, resources):
        sandbox = Sandbox(parent=self)
        self.log.info("vecgrade: student kernel %s", sandbox.status()[1])
        folder = (resources.get("metadata") or {}).get("path") or os.getcwd()
        scratch = sandbox.scratch("kernel")
        try:
            work = os.path.join(scratch.name, "work")
            skip = [*CourseDirectory(config=self.config).ignore, "*.ipynb"]  # what nbgrader does not copy either
            copy_regular_files(folder, work, Intake(config=self.config), skip)
            env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
            from graders.sandbox.shell_session import ShellSession  # torch: when a notebook runs, not in the config
            with ShellSession(sandbox, scratch.name, work, env, sandbox.limits(self.start_timeout)) as shell:
                self._run_cells(nb, shell)
        finally:
            scratch.cleanup()
        return nb, resources

    def _run_cells(self, nb, shell: ShellSession) -> None:
        from graders.sandbox.shell_session import ShellStopped
        deadline = time.monotonic() + self.notebook_budget
        bytes_left = self.max_notebook_bytes
        stopped = ""  # why no more cells run
        for cell in nb.cells:
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            left = deadline - time.monotonic()
            if stopped or left < 1:
                not_run(cell, stopped or f"the notebook ran past its time budget of {self.notebook_budget:g} s")
                continue
            budget = max(1, min(self.timeout or math.inf, math.floor(left)))
            started = time.monotonic()
            try:
                ran = shell.run(cell.source, budget, self.max_notebook_bytes)
            except ShellStopped as exc:
                self.log.warning("vecgrade: the student's kernel stopped (%s); grading what ran", exc)
                if not shell.started:
                    raise KernelNotStarted(f"not graded: the notebook's kernel could not start ({exc})") from None
                stopped = STOPPED
                died = timed_out(budget) if time.monotonic() - started >= budget else \
                    new_output("stream", name="stdout", text=DIED)
                cell.outputs, cell.execution_count = [died], None
                continue
            outputs = ran.outputs
            if ran.seconds >= budget:  # interrupted: one line, not the interrupt's traceback
                outputs = [o for o in outputs if o.get("output_type") != "error"] + [timed_out(budget)]
            if ran.cut:
                outputs.append(cut_notice(self.max_notebook_bytes))
            cell.outputs, used = cap_outputs(outputs, self.max_output_bytes, max(bytes_left, 0))
            bytes_left -= used
            cell.execution_count = ran.count
