"""nbgrader's ``Execute``, with a confined kernel, bounded in time and output, surviving a kernel that dies.

- Plain nbgrader drops a notebook whose kernel dies (a crash, ``os._exit``, a
  memory bomb): the student gets no grade rows at all. Here the notebook keeps
  the outputs it got so far and goes on to ``TrustedVerdicts``, which grades
  every part in its own worker, so the honest parts keep their marks.
- ``notebook_budget``: the kernel's wall-clock time for the whole notebook.
  Each cell gets at most what is left of it; once it is spent, the remaining
  cells are not run and the notebook still goes on to grading.
- A cell that runs past its time shows one line ("stopped after 20 s: ..."),
  not the ``KeyboardInterrupt`` traceback (with the kit's install paths) that
  the interrupt produces.
- Outputs are capped by bytes as they arrive (see ``graders.pipeline.outputs``),
  so a flood never piles up in the grader's memory.
- When the sandbox is asked for and unavailable, ``SandboxUnavailableError``
  is not swallowed: the notebook is not graded.
"""
from __future__ import annotations

import math
import time

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from nbgrader.preprocessors.execute import UnresponsiveKernelError
from traitlets import Float, Integer

from graders.pipeline.kernel import SandboxedKernelManager
from graders.pipeline.outputs import cut_notice, output_bytes, shorten

TIMED_OUT = "stopped after {seconds:g} s: the cell ran past its time budget"
NOT_RUN = "(not run: {why})\n"


def not_run(cell, why: str) -> None:
    cell.outputs = [new_output("stream", name="stdout", text=NOT_RUN.format(why=why))]


class ResilientExecute(Execute):
    notebook_budget = Float(180.0, help="Seconds of kernel time for the whole notebook; "
                                        "cells after it are not run").tag(config=True)
    max_output_bytes = Integer(64 * 1024, help="Largest output a cell keeps, in bytes").tag(config=True)
    max_notebook_bytes = Integer(1024 * 1024, help="Largest total of a notebook's outputs, in bytes").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)  # the kernel starts confined
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources, *args, **kwargs):
        self._deadline = time.monotonic() + self.notebook_budget
        self._output_left = self.max_notebook_bytes
        self._cut_cells: set[int] = set()
        try:
            return super().preprocess(nb, resources, *args, **kwargs)
        except (DeadKernelError, CellTimeoutError, UnresponsiveKernelError, RuntimeError) as exc:
            self.log.warning("vecgrade: the student's kernel stopped (%s); grading what ran", type(exc).__name__)
            for cell in nb.cells:
                if cell.cell_type == "code" and cell.get("execution_count") is None and not cell.get("outputs"):
                    not_run(cell, "the notebook's kernel stopped before this cell")
            return nb, resources

    # -- time -----------------------------------------------------------------------------------
    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.source.strip():
            return super().preprocess_cell(cell, resources, index)
        left = self._deadline - time.monotonic()
        if left < 1:
            not_run(cell, f"the notebook ran past its time budget of {self.notebook_budget:g} s")
            return cell, resources
        self._cell_timeout = max(1, min(self.timeout or math.inf, math.floor(left)))
        self._timed_out = False
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except CellTimeoutError:  # after the interrupt, the kernel's output did not settle in time
            if not self._timed_out:
                raise
        if self._timed_out:
            line = TIMED_OUT.format(seconds=self._cell_timeout)
            cell.outputs = [o for o in cell.outputs if o.get("output_type") != "error"]
            cell.outputs.append(new_output("error", ename="CellTimeout", evalue=line, traceback=[line]))
        return cell, resources

    def _get_timeout(self, cell):
        return getattr(self, "_cell_timeout", None) or super()._get_timeout(cell)

    async def _async_handle_timeout(self, timeout, cell=None):
        self._timed_out = True
        return await super()._async_handle_timeout(timeout, cell)

    # -- output ---------------------------------------------------------------------------------
    def output(self, outs, msg, display_id, cell_index):
        if cell_index in self._cut_cells:
            return None
        out = super().output(outs, msg, display_id, cell_index)
        if out is None or not outs or outs[-1] is not out:
            return out
        out = outs[-1] = shorten(out, self.max_output_bytes)
        size = output_bytes(out)
        if size > self._output_left:
            outs[-1] = cut_notice(self.max_notebook_bytes)
            self._cut_cells.add(cell_index)
            self._output_left = 0
            return outs[-1]
        self._output_left -= size
        return out
