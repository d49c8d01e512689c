"""The course's reference on the timing side: the same kind of fresh child as the student's, from a warm template.

The student's answer is timed in a fresh child that loaded only its program;
the reference is timed the same way (a fresh child of a template forked like
the student's, in a jail when the student's is), so both have the same
process history and are scheduled alike. The reference's time for a request
is measured once and shared by the students of a run while it is younger than
``SHARED_FOR`` seconds, then measured again, keeping the fastest: that time
can only decide a pass (a reference measured while the machine was busy would
flatter every student compared with it); an answer near a threshold is
compared with fresh measurements taken between its own (see
graders.checks.fast).
"""
from __future__ import annotations

import time

from graders.checks.timing import Calibration, Staged, calibrate, timed
from graders.model.exercise import Assignment, Exercise
from graders.sandbox.session import Template, WorkerSession

SHARED_FOR = 30.0  # seconds a reference time is reused by the students of a run before it is measured again
SHARED_BEST_OF = 3  # measurements of a shared reference time, of which the fastest counts


def reference_cells(assignment: Assignment, ex: Exercise) -> list[tuple[str, str]]:
    """The trusted program of one exercise: the preamble, its loop version and its reference."""
    return [("preamble", assignment.preamble), (f"{ex.name} loop", ex.loop_source()),
            (f"{ex.name} reference", ex.reference_source())]


class Reference:
    """The reference of one assignment in one grading run (``run`` keeps what is measured once per run)."""

    def __init__(self, run, assignment: Assignment, template: Template):
        self.run, self.assignment, self.template = run, assignment, template

    def fresh(self, ex: Exercise) -> WorkerSession:
        """A new child running the exercise's reference program (started on first use)."""
        return WorkerSession(reference_cells(self.assignment, ex), self.template.limits, template=self.template,
                             cell_timeout=600)

    def key(self, ex: Exercise) -> str:
        return self.run.code_key(reference_cells(self.assignment, ex))

    def calibration(self, ex: Exercise) -> Calibration:
        """The loop version's time and the calls per timed request, measured once per run: every student of the
        run is timed the same way. Each step of k calls times the reference on two requests the run times every
        student on at that k (the full warm-up and the first repetition: graders.checks.fast), so that the last
        step's inputs are drawn and encoded once, here, for the whole run; the warm-up and the loop version's
        request come from the run's own calibration stream."""
        from graders.checks.fast import FIRST, warm_up_requests  # fast names the run's requests

        def steps_of(k: int) -> tuple[Staged, Staged]:
            return warm_up_requests(self.run, ex, k)[-1], self.run.bench_inputs(ex, FIRST, k)

        key = (self.key(ex), ex.bench_size)
        if key not in self.run.calibrations:
            with self.fresh(ex) as session:
                self.run.calibrations[key] = calibrate(ex, session, self.run.stream(ex, "calibration"), steps_of)
        return self.run.calibrations[key]

    def warmed(self, ex: Exercise, warm_up: list[Staged]) -> WorkerSession:
        """A fresh child that has run the same warm-up requests as the student's timing child."""
        session = self.fresh(ex)
        for staged in warm_up:
            timed(session, staged, 600)
        return session

    def shared_time(self, ex: Exercise, request: str, staged: Staged, warm_up: list[Staged]) -> float:
        """The reference's CPU seconds per call on ``staged`` (best of ``SHARED_BEST_OF``: the bar is the
        reference at its best), in a fresh child after the same ``warm_up`` requests as the student's (the first
        request of full size pays for first-touched memory: 3x for some exercises), shared by the run's students
        while it is younger than ``SHARED_FOR`` seconds; a new measurement slower than the one it replaces does
        not count."""
        key = (self.key(ex), request, len(staged.calls))
        known = self.run.reference_times.get(key)
        if known is None or time.monotonic() - known[1] > SHARED_FOR:
            with self.warmed(ex, warm_up) as session:  # the best of three: one stalled request must not
                seconds = min(timed(session, staged, 600)[0] for _ in range(SHARED_BEST_OF))  # flatter a class
            if known is not None:  # the reference at its best in this run: a slow moment only raises the bar
                seconds = min(seconds, known[0])
            known = self.run.reference_times[key] = (seconds, time.monotonic())
        return known[0]
