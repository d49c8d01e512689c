"""The three parts of an exercise: correct, vectorized, fast.

Each check runs in the trusted process. It generates the inputs, asks a
worker (a child that loaded only this exercise's program) to call the
student's function, and decides from what it observes itself: expected
outputs are computed here, times are measured here, the AST is read here,
and in-place and view requirements are read from argument memory the grader
owns. The student's process only ever sees arguments and returns outputs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from graders.checks.compare import describe_args, mismatch
from graders.checks.static import Submission
from graders.model.exercise import Case, Exercise
from graders.sandbox.session import WorkerFailure, WorkerSession
from graders.sandbox.shared import SharedArgs


@dataclass
class Verdict:
    part: str
    passed: bool
    message: str
    figures: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Timeouts:
    """Seconds one call of the student's function may take, per purpose; ``cell``: per cell while loading."""

    call: float = 10.0
    count: float = 20.0
    bench_min: float = 1.0  # floor of a timed request's deadline: far above an honest request (~20-40 ms)
    cell: float = 30.0


class StudentError(Exception):
    """The student's function raised; the message is shown to the student."""


class OutOfTime(WorkerFailure):
    """The notebook's wall-clock budget is spent."""


def clone_args(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def param_names(ex: Exercise) -> list[str]:
    inside = ex.signature[ex.signature.index("(") + 1: ex.signature.rindex(")")]
    return [p.split("=")[0].split(":")[0].strip() for p in inside.split(",") if p.strip()]


class ExerciseChecks:
    """The checks of one exercise for one submission.

    ``student`` runs this exercise's program only; ``run`` (a ``GradingRun``) holds what is
    measured once per grading run (the loop version's time); ``deadline`` (time.monotonic())
    is the notebook's budget.
    """

    def __init__(self, ex: Exercise, student: WorkerSession, reference: WorkerSession | None,
                 submission: Submission, seed: int = 0,
                 timeouts: Timeouts = Timeouts(), run=None, deadline: float | None = None):
        self.ex, self.student, self.reference = ex, student, reference
        self.submission = submission
        self.gen = torch.Generator().manual_seed(seed)
        self.timeouts = timeouts
        self.run_state, self.deadline = run, deadline

    def run(self) -> dict[str, Verdict]:
        correct = self.correct()
        if not correct.passed:
            gated = "not graded until the answer is correct"
            return {"correct": correct, "vectorized": Verdict("vectorized", False, gated),
                    "fast": Verdict("fast", False, gated)}
        return {"correct": correct, "vectorized": self.vectorized(), "fast": self.fast()}

    def budget(self, seconds: float) -> float:
        """``seconds``, cut to what is left of the notebook's budget."""
        if self.deadline is None:
            return seconds
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OutOfTime("was not graded: the notebook's time budget ran out")
        return min(seconds, left)

    def ask(self, op: str, timeout: float, **payload) -> dict:
        reply, _ = self.student.request(op, self.budget(timeout), name=self.ex.name, **payload)
        if "error" in reply:
            raise StudentError(f"raised {reply['error']}")
        return reply["ok"]

    # -- correct ----------------------------------------------------------------------------
    def correct(self) -> Verdict:
        cases = list(self.ex.hidden(self.gen))
        for case in cases:
            problem = self._check_case(case)
            if problem:
                return Verdict("correct", False, f"{problem} ({case.label}; {describe_args(case.args)})")
        return Verdict("correct", True, f"all {len(cases)} hidden cases match in shape, dtype and value",
                       {"cases": len(cases)})

    def _check_case(self, case: Case) -> str | None:
        ex = self.ex
        expected_args = clone_args(case.args)
        expected = ex.reference(*expected_args, **case.kwargs)
        with SharedArgs(case.args) as shared:
            try:
                reply, _ = self.student.request("call", self.budget(self.timeouts.call), fds=shared.fds,
                                                regions=shared.regions, name=ex.name, args=shared.args,
                                                kwargs=case.kwargs)
            except WorkerFailure as exc:
                return str(exc)
            if "error" in reply:
                return f"raised {reply['error']}"
            out = reply["ok"]["out"]
            where = shared.region_of(out)
            is_arg0 = shared.is_argument(out, 0)
            args_after, out = shared.snapshot(out)  # what the grader reads in its own memory, now
        problem = mismatch(out, expected, ex.rtol, ex.atol, ex.magnitude(case.args))
        if problem:
            return problem
        names = param_names(ex)
        for i, (before, after) in enumerate(zip(expected_args if ex.in_place else case.args, args_after, strict=True)):
            if isinstance(before, torch.Tensor) and mismatch(after, before, 0.0, 0.0):
                what = names[i] if i < len(names) else f"argument {i + 1}"
                if ex.in_place and i == 0:
                    return f"`{what}` was not changed in place as required"
                return f"modified its input `{what}`; compute the result without writing into the inputs"
        if ex.in_place and not is_arg0:
            return f"returned a new tensor; return `{names[0]}` itself after changing it in place"
        if ex.must_be_view and where != 0:
            return f"returned a copy; return a view that shares the storage of `{names[0]}`"
        return None

    # -- vectorized, fast: see graders.checks.vectorized and graders.checks.fast ------------------
    def vectorized(self) -> Verdict:
        from graders.checks.vectorized import vectorized
        return vectorized(self)

    def fast(self) -> Verdict:
        # a process that ran code outside the checked subset cannot be trusted for its timing
        outside = self.submission.outside_findings(self.ex.name)
        if outside:
            f, more = outside[0], f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
            return Verdict("fast", False, f"{f.cell}, line {f.line}: {f.what}{more}; your code ran outside the "
                           "checked subset, so its timing cannot be trusted", {"findings": len(outside)})
        from graders.checks.fast import fast
        return fast(self)
