"""A Dask worker made ready to grade: ``dask worker ADDRESS --nthreads 1 --preload graders.engine.dask_worker``.

Without it a worker pays, on its first task, what a local grading process pays
before the run starts: importing the grading machinery (2.6 s: torch, nbgrader,
nbformat) and starting its fork server (1 s), so the cluster's first results came
5 s after the pool's. Preloaded, the worker does both when it starts, and every
task finds them warm. Dask runs ``dask_setup`` in the worker's process.
"""
from __future__ import annotations

import nbconvert.preprocessors  # noqa: F401 - the steps a task carries (nbgrader_config.py's autograde pipeline)
import nbgrader.preprocessors  # noqa: F401

from graders.engine import job  # noqa: F401 - the grading machinery
from graders.pipeline import execute, outputs, restore, verdicts  # noqa: F401
from graders.sandbox.session import ForkServer


def dask_setup(worker) -> None:
    """Start this worker process's fork server now (it answers the first task's jails warm)."""
    ForkServer.shared().start()
