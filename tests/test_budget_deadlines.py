"""A request's deadline that the notebook's time budget cut short decides nothing about the answer: the part is
``not_graded`` (``Reason.BUDGET``), never a failed "too slow" or "hang" that answer groups would share with another
student who wrote the same program. A deadline the budget did not cut stays the answer's. Both ways."""
import time

import pytest

from graders.checks import fast as fast_part
from graders.checks.parts import ExerciseChecks
from graders.checks.submission import GradingRun, grade_submission
from graders.checks.vocabulary import OutOfTime
from graders.model.verdict import Reason, Status, settled
from graders.sandbox.processes import Deadline

from tests.testkit import program


def _checks(deadline):
    checks = ExerciseChecks.__new__(ExerciseChecks)  # only the budget is used here
    checks.deadline = deadline
    return checks


def test_a_deadline_the_budget_cut_short_is_the_budgets():
    with pytest.raises(OutOfTime):
        with _checks(time.monotonic() + 0.05).budgeted(10.0) as allowed:
            assert allowed <= 0.05
            raise Deadline("no reply in time")


@pytest.mark.parametrize("deadline", [None, "far"])
def test_a_deadline_the_budget_left_whole_is_the_answers(deadline):
    checks = _checks(None if deadline is None else time.monotonic() + 600)
    with pytest.raises(Deadline):
        with checks.budgeted(10.0) as allowed:
            assert allowed == 10.0
            raise Deadline("no reply in time")


def test_a_budget_running_out_while_fast_is_timed_is_never_a_shared_too_slow(broadcasting, monkeypatch):
    """The budget is cut to 0.2 s at the first timed repetition (as when other exercises of the notebook spent it),
    and that request runs past it computing all along (the worker's CPU clock: the whole window): "fast" is not
    graded and not kept; the next student with the same program, on a full budget, is graded."""
    ex = broadcasting.exercise("softmax_rows")
    cells = program(broadcasting, softmax_rows=ex.reference_source())
    fast, real_timed, cut = ExerciseChecks.fast, fast_part.timed, {"on": False}

    def fast_near_the_budget(self):
        budget, asked = self.budget, {"n": 0}

        def running_out(seconds):
            asked["n"] += 1
            if asked["n"] == 4:  # three warm-up requests, then the first timed repetition
                self.deadline, cut["on"] = time.monotonic() + 0.2, True
            return budget(seconds)

        self.budget = running_out
        return fast(self)

    def timed(student, staged, limit):
        if cut["on"] and limit <= 0.2:  # the request the budget cut: past it, computing all the while
            raise Deadline(f"no reply within {limit:.3g} s", cpu=limit)
        return real_timed(student, staged, limit)

    monkeypatch.setattr(fast_part, "timed", timed)
    with GradingRun(seed=7) as run:
        monkeypatch.setattr(ExerciseChecks, "fast", fast_near_the_budget)
        first = grade_submission(broadcasting, cells, only=["softmax_rows"], run=run, notebook_timeout=600)
        monkeypatch.setattr(ExerciseChecks, "fast", fast)
        cut["on"] = False
        assert first["softmax_rows"]["correct"].passed  # control: graded up to the timing
        timed_part = first["softmax_rows"]["fast"]
        assert timed_part.status is Status.NOT_GRADED and timed_part.reason is Reason.BUDGET, timed_part.message
        assert not settled(first["softmax_rows"]) and "softmax_rows" not in run.computed  # neither shared nor kept
        second = grade_submission(broadcasting, cells, only=["softmax_rows"], run=run, notebook_timeout=600)
        assert "softmax_rows" in run.computed  # graded, not handed the first one's verdict
        assert second["softmax_rows"]["fast"].status is not Status.NOT_GRADED
