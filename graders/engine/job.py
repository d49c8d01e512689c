"""One student's grading job: ``grade(request) -> outcome``, the one function every driver runs.

``vecgrade grade`` (this process, ``--jobs`` processes or a Dask cluster), ``vecgrade serve`` and ``vecgrade
validate``'s classes all grade a submission by calling ``grade`` with a ``GradingRequest`` and reading the
``GradingOutcome`` (graders.engine.request). Inside it, and nowhere else, the student's content is read: the
intake caps on the folder, the refusals (no notebook, an unknown or broken one), nbgrader's sanitize steps (the
release's cells come with the request), the kernel, the trusted verdicts (``TrustedVerdicts``, the same step plain
``nbgrader autograde`` runs), the output caps. Whatever goes wrong in there is this student's outcome, with a
reason: ``grade`` never raises for a submission, so one submission's trouble never stops another's.

Nothing here writes the course: the coordinator records a graded outcome through nbgrader (graders.engine.record).
A process keeps its share of each grading run (``GradingRun``: fork server, reference templates, calibrations,
the verdicts its jobs settled) and each version of the definitions in a folder of its own, for its whole life.
"""
from __future__ import annotations

import atexit
import os
import time
from pathlib import Path

import nbformat
from nbgrader.preprocessors import SaveAutoGrades
from nbgrader.utils import setenv

from graders.checks.fast import measure_reference
from graders.checks.own_modules import notebook_modules, read_modules
from graders.checks.reader import too_deep
from graders.checks.submission import GradingRun
from graders.engine.request import GradingOutcome, GradingRequest, SubmissionStatus
from graders.model.exercise import load_assignment_once
from graders.model.fingerprint import fingerprint
from graders.model.notebook import submission_cells
from graders.model.verdict import Reason, Status
from graders.pipeline.intake import Intake
from graders.pipeline.refusals import NotebookReads, notebook_of, refusal
from graders.pipeline.restore import MASTER
from graders.pipeline.verdicts import TrustedVerdicts
from graders.sandbox.policy import Sandbox
from graders.sandbox.scratch import Scratch
from graders.sandbox.session import ForkServer

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


def grading_run(seed: int) -> GradingRun:
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


def grade(request: GradingRequest) -> GradingOutcome:
    """The request's submission graded (see the module's docstring); never raises for anything in it."""
    start = time.perf_counter()
    try:
        outcome = _grade(request)
    except Exception as exc:  # noqa: BLE001 - the student's own job: its failure is its outcome, never the batch's
        outcome = GradingOutcome(request.student, request.assignment, SubmissionStatus.NOT_GRADED, Reason.INTERNAL,
                                 f"grading failed: {type(exc).__name__}: {exc}"[:300])
    outcome.seconds["total"] = time.perf_counter() - start
    return outcome


def grade_json(request: dict) -> dict:
    """``grade`` on a request as JSON data, the outcome as JSON data: what an executor ships between machines."""
    return grade(GradingRequest.from_json(request)).to_json()


def _refused(request: GradingRequest, message: str, for_student: str = "") -> GradingOutcome:
    return GradingOutcome(request.student, request.assignment, SubmissionStatus.REFUSED, Reason.REFUSED,
                          message, for_student)


def _files_into(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = (folder / name).resolve()
        if folder.resolve() not in path.parents:
            raise ValueError(f"a shipped file outside its folder: {name!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _grade(request: GradingRequest) -> GradingOutcome:
    config = request.config()
    who = f"{request.student}/{request.assignment}"
    with Scratch("job") as scratch:
        if request.folder is not None:
            folder = Path(request.folder)
        else:
            folder = Path(scratch) / "submission"
            folder.mkdir()
            _files_into(folder, request.files or {})
        if not request.master:
            return GradingOutcome(request.student, request.assignment, SubmissionStatus.NOT_GRADED, Reason.INTERNAL,
                                  f"the assignment {request.assignment} is not in the gradebook: run nbgrader "
                                  f"generate_assignment {request.assignment}")
        reads = NotebookReads()  # each notebook read and parsed once, for every check and the grading
        if not request.warm_up:
            unsafe = Intake(config=config).refusal(str(folder), who, reads)
            if unsafe:
                return _refused(request, unsafe)
            refused = refusal(folder, set(request.master), request.shown or f"{who}/", request.assignment,
                              request.student, reads)
            if refused is not None:
                return _refused(request, str(refused), getattr(refused, "for_student", ""))
        return _judge(request, config, folder, reads)


def _judge(request: GradingRequest, config, folder: Path, reads: NotebookReads) -> GradingOutcome:
    """Every notebook of the submission through nbgrader's sanitize steps and the expensive autograde steps."""
    pipeline = list(config.Autograde.autograde_preprocessors)
    cut = next((i for i, step in enumerate(pipeline) if issubclass(step, SaveAutoGrades)), len(pipeline))
    steps = list(config.Autograde.sanitize_preprocessors) + pipeline[:cut]
    config.TrustedVerdicts.assignments_dir = str(_definitions_folder(request.definitions))
    config.TrustedVerdicts.seed = request.seed
    run = grading_run(request.seed)
    run.adopt(request.measured)
    run.verdicts.follow(request.known)  # found by the keys this job computes (GradingRun.grade)
    outcome = GradingOutcome(request.student, request.assignment, SubmissionStatus.GRADED)
    seconds = {"kernel": 0.0, "verdicts": 0.0}
    # what nbgrader's autograde sets around these steps: the notebook's self-checks see they are autograded
    with setenv(NBGRADER_EXECUTION="autograde"):
        for path in sorted(folder.glob("*.ipynb")):
            notebook_id = path.stem
            read = reads.get(path)
            try:
                nb = notebook_of(read)
            except Exception as exc:  # noqa: BLE001 - JSON that is not a notebook: the student's to fix
                return _refused(request, f"NotANotebookError: {path.name}: {type(exc).__name__}: {exc}"[:300])
            deep = _too_deep(request, nb, folder)
            if deep:
                return _refused(request, f"TooDeepError: {path.name}: {deep}"[:300], deep)
            resources: dict = {"unique_key": notebook_id, "metadata": {"path": str(folder)},
                               "nbgrader": {"student": request.student, "assignment": request.assignment,
                                            "notebook": notebook_id, "db_url": ""},
                               MASTER: request.master.get(notebook_id, {})}
            for step in steps:
                began = time.perf_counter()
                instance = step(config=config, run=run, refuse_not_graded=False) if issubclass(step, TrustedVerdicts) \
                    else step(config=config)
                try:
                    nb, resources = instance(nb, resources)
                except Exception as exc:  # noqa: BLE001 - what a step refuses is this student's, with its reason
                    if step in config.Autograde.sanitize_preprocessors:
                        return _refused(request, f"nbgrader could not read {path.name}: {type(exc).__name__}: "
                                                 f"{exc}"[:300])
                    raise
                spent = time.perf_counter() - began
                if isinstance(instance, TrustedVerdicts):
                    seconds["verdicts"] += spent
                    outcome.verdicts.update(instance.results)
                    outcome.keys.update(instance.keys)
                    outcome.computed.extend(instance.computed)
                elif "Execute" in step.__name__:
                    seconds["kernel"] += spent
            outcome.notebooks[notebook_id] = nbformat.writes(nb)
    outcome.seconds.update(seconds)
    ungraded = [(name, v) for name, parts in outcome.verdicts.items() for v in parts.values()
                if v.status is Status.NOT_GRADED]
    if ungraded:
        name, first = ungraded[0]
        why = "; ".join(dict.fromkeys(f"`{n}`: {v.message}" for n, v in ungraded))
        outcome.status, outcome.reason, outcome.message = SubmissionStatus.NOT_GRADED, first.reason, \
            f"not graded: {why}"[:300]
        outcome.notebooks = {}
    return outcome


def _too_deep(request: GradingRequest, nb, folder: Path) -> str | None:
    """The student's reason when a cell of ``nb`` or a module of theirs nests past what vecgrade reads
    (graders.checks.reader.too_deep), checked before any of it runs; None otherwise (or without definitions)."""
    definitions = _definitions_folder(request.definitions) / f"{request.assignment}.py"
    if not definitions.is_file():
        return None
    assignment = load_assignment_once(definitions)
    return too_deep(submission_cells(nb, assignment), notebook_modules(nb, read_modules(folder)))


def reference_measurements(request: GradingRequest, exercise: str) -> dict:
    """Measure the reference of ``exercise`` in this process's run (its calibration and shared time, as the first
    notebook with it would), and return all this run has measured: the coordinator hands it to the pool's other
    processes with their requests (``GradingRequest.measured``). ``request`` carries the run's seed, definitions
    and settings; its submission is not used."""
    run = grading_run(request.seed)
    run.adopt(request.measured)
    assignment = load_assignment_once(_definitions_folder(request.definitions) / f"{request.assignment}.py")
    # the reference's template confined as TrustedVerdicts confines it: the same Sandbox configuration
    measure_reference(run, run.reference(assignment, Sandbox(config=request.config())), assignment.exercise(exercise))
    return run.measured()


def jail_problem(request: GradingRequest) -> str | None:
    """Whether a jail of this process, configured as the request's ``TrustedVerdicts`` and ``Sandbox`` settings
    configure it, runs torch (graders.sandbox.preflight): None, or one line naming the setting to change."""
    from traitlets.config import Configurable

    from graders.pipeline.verdicts import grading_settings
    from graders.sandbox import preflight
    from graders.sandbox.policy import SandboxUnavailableError
    limits, _, sandbox = grading_settings(Configurable(config=request.config()))
    try:
        confined = sandbox.check()
    except SandboxUnavailableError as exc:
        return str(exc)
    return preflight.problem(limits, sandbox if confined else None, ForkServer.shared())
