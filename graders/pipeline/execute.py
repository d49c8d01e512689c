"""nbgrader's ``Execute``, with a confined kernel, made to survive a kernel that dies.

Plain nbgrader drops a notebook whose kernel dies (a crash, ``os._exit``, a
memory bomb): the student gets no grade rows at all. Here the notebook keeps
the outputs it got so far and goes on to ``TrustedVerdicts``, which grades
every part in its own worker, so the honest parts of that notebook keep
their marks and the rest get a recorded zero with a reason.
"""
from __future__ import annotations

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from nbgrader.preprocessors.execute import UnresponsiveKernelError

from graders.pipeline.kernel import SandboxedKernelManager


class ResilientExecute(Execute):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)  # the kernel starts confined
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources, *args, **kwargs):
        try:
            return super().preprocess(nb, resources, *args, **kwargs)
        except (DeadKernelError, CellTimeoutError, UnresponsiveKernelError, RuntimeError) as exc:
            self.log.warning("vecgrade: the student's kernel stopped (%s); grading what ran", type(exc).__name__)
            for cell in nb.cells:
                if cell.cell_type == "code" and cell.get("execution_count") is None and not cell.get("outputs"):
                    cell.outputs = [new_output("stream", name="stdout",
                                               text="(not run: the notebook's kernel stopped before this cell)\n")]
            return nb, resources
