"""The three parts of an exercise, composed: correct, then vectorized and fast (which score only once correct).

Each check runs in the trusted process. It generates the inputs, asks a
worker (a child that loaded only this exercise's program) to call the
student's function, and decides from what it observes itself: expected
outputs are computed here, CPU times are read here from the kernel, the AST
is read here, and in-place and view requirements are read from argument
memory the grader owns. The student's process only ever sees arguments and
returns outputs. The parts live in graders.checks.correct, .vectorized and
.fast; their shared words in graders.checks.vocabulary.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

from graders.checks.correct import correct
from graders.checks.fast import fast
from graders.checks.finding import STATE
from graders.checks.precision import float32_work
from graders.checks.static import Submission
from graders.checks.vectorized import vectorized
from graders.checks.vocabulary import Disrupted, MachineOutOfTime, OutOfTime, Timeouts, Verdict, disruption
from graders.model.exercise import Exercise
from graders.model.verdict import GATED_MESSAGE as GATED
from graders.model.verdict import PARTS, Reason, failed, gated
from graders.sandbox.budget import NotebookBudget
from graders.sandbox.processes import Deadline
from graders.sandbox.session import WorkerSession

__all__ = ["GATED", "ExerciseChecks"]


class ExerciseChecks:
    """The checks of one exercise for one submission.

    ``student`` runs this exercise's program only; ``reference`` (a ``graders.checks.reference.Reference``)
    times the course's code; ``run`` (a ``GradingRun``) holds what is measured once per grading run;
    ``notebook_budget`` (graders.sandbox.budget) is the notebook's time budget, the one ``student`` charges.
    """

    notebook_budget: NotebookBudget | None = None  # none: no budget (also for checks made without __init__)

    def __init__(self, ex: Exercise, student: WorkerSession, reference, submission: Submission, seed: int = 0,
                 timeouts: Timeouts = Timeouts(), run=None, notebook_budget: NotebookBudget | None = None):
        self.ex, self.student, self.reference = ex, student, reference
        self.submission = submission
        self.gen = torch.Generator().manual_seed(seed)
        self.timeouts = timeouts
        self.run_state, self.notebook_budget = run, notebook_budget

    def run(self) -> dict[str, Verdict]:
        """The three verdicts; all three ``not_graded`` when a process was disrupted (graders.model.verdict): a
        verdict is a property of the program, and a disrupted run observed something else. A part the notebook's
        budget ended is ``Disrupted.verdict``'s: failed ``out_of_time`` when the notebook's code spent it (and so is
        every part after it: the budget is spent), not graded when the machine did."""
        try:
            first = self.correct()
        except Disrupted as exc:
            return {p: exc.verdict(p) for p in PARTS}
        if not first.passed:
            return {"correct": first, "vectorized": gated("vectorized"), "fast": gated("fast")}
        verdicts = {"correct": first}
        for part, check in (("vectorized", self.vectorized), ("fast", self.fast)):
            try:
                verdicts[part] = check()
            except Disrupted as exc:
                verdicts[part] = exc.verdict(part)
        return verdicts

    def budget(self, seconds: float) -> float:
        """``seconds``, cut to what is left of the notebook's budget (``NotebookBudget.limit``); ``Disrupted`` with
        ``Reason.OUT_OF_TIME`` when the notebook's code has spent it, ``Reason.BUDGET`` when the machine's wall
        clock passed its cap first."""
        if self.notebook_budget is None:
            return seconds
        try:
            return self.notebook_budget.limit(seconds)
        except (OutOfTime, MachineOutOfTime) as exc:
            raise disruption(exc) from None

    @contextmanager
    def budgeted(self, seconds: float) -> Iterator[float]:
        """The limit of one request of ``seconds``: ``budget(seconds)``. A deadline it misses because the budget cut
        it is the budget's, not the answer's (``NotebookBudget.settle``): ``OutOfTime`` when the notebook's code
        spent the budget (the part fails ``out_of_time``, never shared), ``MachineOutOfTime`` when the machine's
        load kept the code from what was left (not graded); never a failed "too slow" or "hang"."""
        limit = self.budget(seconds)
        try:
            yield limit
        except Deadline:
            if self.notebook_budget is not None:
                self.notebook_budget.settle(cut=limit < seconds)
            raise

    def correct(self) -> Verdict:
        return correct(self)

    def vectorized(self) -> Verdict:
        return vectorized(self)

    def fast(self) -> Verdict:
        """A process that ran code outside the checked subset cannot be trusted for its timing, and a function that
        keeps state between calls is not timed on its compute: both fail before anything is timed. A pass is kept
        only when the float64 work was done in float64 (graders.checks.precision)."""
        found = self.submission.outside_findings(self.ex.name)
        if found:
            state = [f for f in found if f.kind == STATE]
            f, more = (state or found)[0], f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            if state:
                return failed("fast", Reason.KEEPS_STATE, f"{f.cell}, line {f.line}: {f.what}{more}; a function that "
                              "keeps state between calls is not timed on its compute", {"findings": len(found)})
            return failed("fast", Reason.OUTSIDE_SUBSET, f"{f.cell}, line {f.line}: {f.what}{more}; your code ran "
                          "outside the checked subset, so its timing cannot be trusted", {"findings": len(found)})
        verdict = fast(self)
        return (float32_work(self) or verdict) if verdict.passed else verdict
