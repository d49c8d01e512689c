"""Grade one submission of one assignment: every exercise, every part, inside one grading run.

This is the trusted side. It is called by the nbgrader preprocessor during
``nbgrader autograde`` and by ``vecgrade validate``; it never imports the
student's code. Each exercise is judged in a fresh child, forked from one
warm template per student, that has loaded only the program the exercise's
function reaches (``Submission.program_for``): scratch cells, magics and
tampering in cells it does not reach never run there, and a hang or crash
costs only that exercise.

A ``GradingRun`` owns what lives as long as one grading run: the seed of the
hidden cases, the reference workers (keyed by the content of the code they
run, so a changed definition never meets a stale worker) and each exercise's
timing calibration (the loop version's time, the calls per timed request),
measured once per run rather than once per student. Every
student's template is forked from the process's warm ``ForkServer``.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import time
import zlib

import torch

from graders.checks.fast import Calibration, Staged, bench_inputs, calibrate
from graders.checks.parts import ExerciseChecks, Timeouts, Verdict
from graders.checks.static import Submission
from graders.model.exercise import PARTS, Assignment, Exercise
from graders.sandbox.session import ForkServer, Limits, Template, WorkerFailure, WorkerSession


def reference_cells(assignment: Assignment) -> list[tuple[str, str]]:
    """The trusted program: the preamble, every loop version and every reference."""
    cells = [("preamble", assignment.preamble)]
    for ex in assignment.exercises:
        cells += [(f"{ex.name} loop", ex.loop_source()), (f"{ex.name} reference", ex.reference_source())]
    return cells


def exercise_seed(run_seed: int, name: str) -> int:
    """Each exercise draws from its own stream, so adding an exercise changes no other's cases."""
    return (run_seed ^ zlib.crc32(name.encode())) & 0x7FFF_FFFF_FFFF


class GradingRun:
    """One grading run: its seed, its reference workers and the timing calibrations."""

    def __init__(self, seed: int | None = None, limits: Limits = Limits()):
        self.seed = secrets.randbits(48) if seed is None else seed
        torch.set_num_threads(1)  # the grader's comparisons are small; more threads only contend with workers
        self.limits = limits
        self._references: dict[str, WorkerSession] = {}
        self._calibrations: dict[tuple[str, str, int], Calibration] = {}
        self._bench_inputs: dict[tuple, Staged] = {}
        self.server = ForkServer.shared()  # starts every student's template (and kernel) warm

    @staticmethod
    def _key(cells) -> str:
        return hashlib.sha256(json.dumps(cells).encode()).hexdigest()

    def reference(self, assignment: Assignment) -> WorkerSession:
        """A warm worker running the course's own code (unconfined: it is trusted), forked from the server."""
        cells = reference_cells(assignment)
        key = self._key(cells)
        worker = self._references.get(key)
        if worker is None:
            worker = self._references[key] = WorkerSession(cells, self.limits, cell_timeout=600, server=self.server)
            worker.start()
            if worker.load_errors:
                raise RuntimeError(f"the reference program of {assignment.name} fails: {worker.load_errors}")
        return worker

    def calibration(self, ex: Exercise, reference: WorkerSession) -> Calibration:
        """The loop version's time and the calls per timed request, measured once per run on inputs of the
        run's own stream (not a student's): every student of the run is timed the same way."""
        key = (self._key([ex.loop_source(), ex.reference_source()]), ex.name, ex.bench_size)
        if key not in self._calibrations:
            gen = torch.Generator().manual_seed(exercise_seed(self.seed, f"{ex.name} calibration"))
            self._calibrations[key] = calibrate(ex, reference, gen)
        return self._calibrations[key]

    def bench_inputs(self, ex: Exercise, request: str, k: int) -> Staged:
        """The inputs of one timed request (``request`` names it), the same for every student of the run:
        drawn from the run's own stream and encoded once per run, not per student."""
        key = (ex.name, ex.sized, ex.bench_size, request, k)
        if key not in self._bench_inputs:
            gen = torch.Generator().manual_seed(exercise_seed(self.seed, f"{ex.name} {request}"))
            self._bench_inputs[key] = bench_inputs(ex, gen, k)
        return self._bench_inputs[key]

    def grade(self, assignment: Assignment, cells: list[tuple[str, str]], limits: Limits | None = None,
              timeouts: Timeouts = Timeouts(), only: list[str] | None = None, sandbox=None,
              notebook_timeout: float | None = None,
              modules: dict[str, str] | None = None) -> dict[str, dict[str, Verdict]]:
        """Verdicts by exercise name and part for the notebook code ``cells`` (label, source).

        ``sandbox`` confines the student's template (and so every child); ``notebook_timeout``
        bounds the whole notebook's grading: exercises past it are not graded; ``modules``: the
        submission's own modules beside the notebook (name -> source, graders.checks.own_modules).
        """
        deadline = None if notebook_timeout is None else time.monotonic() + notebook_timeout
        submission = Submission(cells, modules)
        exercises = [ex for ex in assignment.exercises if only is None or ex.name in only]
        results: dict[str, dict[str, Verdict]] = {}
        with Template(limits or self.limits, sandbox, self.server) as template:
            try:
                template.start()
            except WorkerFailure as exc:
                return {ex.name: {p: Verdict(p, False, f"the notebook's code: {exc}") for p in PARTS}
                        for ex in exercises}
            reference = self.reference(assignment)
            for ex in exercises:
                results[ex.name] = self._grade_exercise(ex, submission, template, reference, timeouts, deadline)
        return results

    def _grade_exercise(self, ex, submission, template, reference, timeouts, deadline) -> dict[str, Verdict]:
        def failed(message):
            return {p: Verdict(p, False, message) for p in PARTS}
        if deadline is not None and time.monotonic() >= deadline:
            return failed("not graded: the notebook's time budget ran out")
        with WorkerSession(submission.program_for(ex.name), template=template, cell_timeout=timeouts.cell,
                           modules=submission.modules_for(ex.name)) as student:
            try:
                student.start()
            except WorkerFailure as exc:
                return failed(f"the code of `{ex.name}` could not run: {exc}")
            checks = ExerciseChecks(ex, student, reference, submission, exercise_seed(self.seed, ex.name),
                                    timeouts, run=self, deadline=deadline)
            return with_load_errors(checks.run(), ex.name, student.load_errors)

    def __deepcopy__(self, memo):
        """A run is a live resource: traitlets deep-copies config values, and every copy must be this run."""
        return self

    def close(self) -> None:
        for worker in self._references.values():
            worker.close()
        self._references.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def with_load_errors(verdicts: dict[str, Verdict], name: str, errors: list[str]) -> dict[str, Verdict]:
    """A failed "correct" says what went wrong while the code loaded (a cell that raised, an import that
    failed), not only what followed from it ("no function ... is defined")."""
    correct = verdicts["correct"]
    if correct.passed or not errors:
        return verdicts
    loaded = "; ".join(errors)
    if f"no function `{name}` is defined" in correct.message:
        message = f"`{name}` was not defined because its code failed while loading: {loaded}"
    else:
        message = f"{correct.message}; while its code loaded: {loaded}"
    return {**verdicts, "correct": Verdict("correct", False, message, correct.figures)}


def grade_submission(assignment: Assignment, cells: list[tuple[str, str]], seed: int | None = None,
                     limits: Limits = Limits(), timeouts: Timeouts = Timeouts(),
                     only: list[str] | None = None, sandbox=None, run: GradingRun | None = None,
                     notebook_timeout: float | None = None,
                     modules: dict[str, str] | None = None) -> dict[str, dict[str, Verdict]]:
    """Verdicts for one notebook, in ``run`` (or in a run of its own, with ``seed``); ``modules``: the
    submission's own modules beside the notebook (name -> source)."""
    if run is not None:
        return run.grade(assignment, cells, limits, timeouts, only, sandbox, notebook_timeout, modules)
    with GradingRun(seed, limits) as own:
        return own.grade(assignment, cells, limits, timeouts, only, sandbox, notebook_timeout, modules)
