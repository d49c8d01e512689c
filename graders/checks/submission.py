"""Grade one submission of one assignment: every exercise, every part.

This is the trusted side. It is called by the nbgrader preprocessor during
``nbgrader autograde`` and by ``vecgrade validate``; it never imports the
student's code, only talks to a worker that runs it.
"""
from __future__ import annotations

import atexit
import zlib

from graders.checks.parts import ExerciseChecks, Timeouts, Verdict
from graders.model.exercise import PARTS, Assignment
from graders.sandbox.session import Limits, WorkerFailure, WorkerSession
from graders.checks.static import Submission

_reference_workers: dict[str, WorkerSession] = {}


def reference_cells(assignment: Assignment) -> list[tuple[str, str]]:
    """The trusted program: the preamble, every loop version and every reference."""
    cells = [("preamble", assignment.preamble)]
    for ex in assignment.exercises:
        cells += [(f"{ex.name} loop", ex.loop_source()), (f"{ex.name} reference", ex.reference_source())]
    return cells


def reference_worker(assignment: Assignment, limits: Limits) -> WorkerSession:
    """One warm reference worker per assignment, shared by every notebook graded in this process."""
    worker = _reference_workers.get(assignment.name)
    if worker is None:
        worker = _reference_workers[assignment.name] = WorkerSession(reference_cells(assignment), limits)
        worker.start()
        if worker.load_errors:
            raise RuntimeError(f"the reference program of {assignment.name} fails: {worker.load_errors}")
    return worker


@atexit.register
def _close_reference_workers() -> None:
    for worker in _reference_workers.values():
        worker.close()
    _reference_workers.clear()


def exercise_seed(run_seed: int, name: str) -> int:
    """Each exercise draws from its own stream, so adding an exercise changes no other's cases."""
    return (run_seed ^ zlib.crc32(name.encode())) & 0x7FFF_FFFF_FFFF


def grade_submission(assignment: Assignment, cells: list[tuple[str, str]], seed: int,
                     limits: Limits = Limits(), timeouts: Timeouts = Timeouts(),
                     only: list[str] | None = None, sandbox=None) -> dict[str, dict[str, Verdict]]:
    """Verdicts by exercise name and part for the notebook code ``cells`` (label, source).

    ``sandbox`` (a ``graders.sandbox.policy.Sandbox``) confines the student's worker; the
    reference worker runs the course's own code and is never confined.
    """
    submission = Submission(cells)
    notebook_findings = submission.reach_findings()
    exercises = [ex for ex in assignment.exercises if only is None or ex.name in only]
    results: dict[str, dict[str, Verdict]] = {}
    with WorkerSession(cells, limits, sandbox) as student:
        try:
            student.start()
        except WorkerFailure as exc:
            failed = {p: Verdict(p, False, f"the notebook's code {exc}") for p in PARTS}
            return {ex.name: dict(failed) for ex in exercises}
        reference = reference_worker(assignment, limits)
        for ex in exercises:
            checks = ExerciseChecks(ex, student, reference, submission, notebook_findings,
                                    exercise_seed(seed, ex.name), timeouts)
            results[ex.name] = checks.run()
    return results
