"""One submission's grading as a job: the expensive steps as a pure function, run anywhere.

Running a student's kernel and deciding verdicts takes seconds; recording the result in the gradebook takes
milliseconds but must happen in one process (graders.engine.coordinator), or SQLite answers "database is
locked" and rows get lost or duplicated. So ``execute_and_judge`` runs the expensive autograde steps on a
sanitized notebook anywhere (this process, a local worker process, a Dask worker on another machine):
notebook in, graded notebook and verdicts out, nothing read from or written to the course folder. The
coordinator then records it through nbgrader (``graders.pipeline.precomputed.PutBackPrecomputed``).

A process keeps its share of each grading run (``GradingRun``: fork server, reference templates, calibrations)
and each version of the definitions in a folder of its own, for its whole life.
"""
from __future__ import annotations

import atexit
import copy
import os
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import setenv
from traitlets.config import Config

from graders.checks.fast import measure_reference
from graders.checks.own_modules import write_modules
from graders.checks.submission import GradingRun
from graders.model.exercise import load_assignment_once
from graders.model.fingerprint import fingerprint
from graders.pipeline.precomputed import notebook_key
from graders.pipeline.verdicts import VERDICTS
from graders.sandbox.policy import Sandbox
from graders.sandbox.scratch import Scratch
from graders.sandbox.session import ForkServer


@dataclass
class GradingJob:
    """All one submission's expensive steps need, shipped with the task (no shared folder)."""
    student: str
    assignment: str
    notebook_id: str
    notebook: str  # the sanitized notebook, as JSON
    definitions: dict[str, str]  # the course's definitions folder: relative path -> text
    steps: list  # the preprocessor classes to run, in order
    config: Config = field(default_factory=Config)
    seed: int = 0  # the hidden cases' seed: one per grading run, shared by every job
    path: str | None = None  # the kernel's working folder; a private temporary one if None
    known: dict = field(default_factory=dict)  # exercise -> its verdicts, known from the same program's
    defer: list[str] = field(default_factory=list)  # exercises whose verdicts another job computes now
    modules: dict[str, str] = field(default_factory=dict)  # the submission's own modules (helpers.py): name -> source
    measured: dict = field(default_factory=dict)  # machine -> the reference as other processes measured it there
    # for this run (GradingRun.measured): a process adopts its own machine's, and does not measure it again

    @property
    def key(self) -> str:
        return notebook_key(nbformat.reads(self.notebook, as_version=4))


_definitions: dict[str, Scratch] = {}  # this process's folder per version of the definitions (removed at exit)


def _definitions_folder(files: dict[str, str]) -> Path:
    """A folder holding the definitions, one per version of their content so a process never mixes two."""
    digest = fingerprint(files)
    if digest not in _definitions:
        scratch = Scratch("definitions")
        for name, text in files.items():
            path = Path(scratch.name) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        _definitions[digest] = scratch
    return Path(_definitions[digest].name)


_runs: dict[int, GradingRun] = {}  # this process's share of each grading run (a run is one seed)


def _grading_run(seed: int) -> GradingRun:
    """The run a job belongs to, kept for the life of this process: its reference workers stay warm and the
    timing calibrations are measured once per process, not once per notebook (GradingRun keys them by content)."""
    if seed not in _runs:
        _runs[seed] = GradingRun(seed)
    return _runs[seed]


def _forget() -> None:
    """In a forked child: the runs and folders above are the parent's (it closes them); this process starts its own."""
    _runs.clear()
    _definitions.clear()


os.register_at_fork(after_in_child=_forget)


@atexit.register
def release() -> None:
    """What this process holds for grading, given back: each run's reference templates, the definitions folders
    and the fork server with every jail it started (idempotent; also at exit)."""
    for run in _runs.values():
        run.close()
    _runs.clear()
    for scratch in _definitions.values():
        scratch.cleanup()
    _definitions.clear()
    ForkServer.release_shared()


@dataclass
class JobResult:
    """The graded notebook (JSON), the verdicts its grading computed and may be shared (exercise -> part ->
    Verdict: only settled ones, see graders.model.store), and every exercise's verdicts as written (``results``:
    the coordinator records nothing where a part is not graded)."""
    notebook: str
    verdicts: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)


def execute_and_judge(job: GradingJob) -> JobResult:
    """Run ``job.steps`` (execute, verdicts, ...) on the job's notebook; return the graded notebook."""
    config = copy.deepcopy(job.config)
    config.TrustedVerdicts.assignments_dir = str(_definitions_folder(job.definitions))
    config.TrustedVerdicts.seed = job.seed
    config.TrustedVerdicts.run = run = _grading_run(job.seed)
    config.TrustedVerdicts.refuse_not_graded = False  # the coordinator reads every verdict and records no 0
    run.adopt(job.measured)
    nb = nbformat.reads(job.notebook, as_version=4)
    # what nbgrader's autograde sets around these steps: the notebook's self-checks see they are autograded
    with Scratch("job") as scratch, setenv(NBGRADER_EXECUTION="autograde"):
        if job.path is None:  # beside the notebook, as submitted: the kernel imports them, the verdicts read them
            write_modules(scratch, job.modules)
        shared: dict = {"known": job.known, "defer": list(job.defer), "computed": {}}
        resources: dict = {"unique_key": job.notebook_id, "metadata": {"path": job.path or scratch},
                     "nbgrader": {"student": job.student, "assignment": job.assignment,
                                  "notebook": job.notebook_id},
                     VERDICTS: shared}
        for step in job.steps:
            nb, resources = step(config=config)(nb, resources)
    final: dict = resources.get(VERDICTS) or shared  # the steps pass resources on; a copy would carry it too
    return JobResult(nbformat.writes(nb), final["computed"], final.get("results", {}))


def reference_measurements(job: GradingJob, exercise: str) -> dict:
    """Measure the reference of ``exercise`` in this process's run (its calibration and shared time, as the first
    notebook with it would), and return all this run has measured: the coordinator hands it to the pool's other
    processes with their jobs (``GradingJob.measured``). ``job`` carries the run's seed, definitions and
    configuration; its notebook is not used."""
    run = _grading_run(job.seed)
    run.adopt(job.measured)
    assignment = load_assignment_once(_definitions_folder(job.definitions) / f"{job.assignment}.py")
    # the reference's template confined as TrustedVerdicts confines it: the same Sandbox configuration
    measure_reference(run, run.reference(assignment, Sandbox(config=job.config)), assignment.exercise(exercise))
    return run.measured()


def jail_problem(job: GradingJob) -> str | None:
    """Whether a jail of this process, configured as the job's ``TrustedVerdicts`` and ``Sandbox`` configure it,
    runs torch (graders.sandbox.preflight): None, or one line naming the setting to change."""
    from traitlets.config import Configurable

    from graders.pipeline.verdicts import grading_settings
    from graders.sandbox import preflight
    from graders.sandbox.policy import SandboxUnavailableError
    limits, _, sandbox = grading_settings(Configurable(config=job.config))
    try:
        confined = sandbox.check()
    except SandboxUnavailableError as exc:
        return str(exc)
    return preflight.problem(limits, sandbox if confined else None, ForkServer.shared())
