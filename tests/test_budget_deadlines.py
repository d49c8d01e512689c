"""The notebook's time budget in the checks (graders.sandbox.budget, graders.checks.parts): a request's deadline that
the budget cut short decides nothing about the answer. When the notebook's code spent the budget, the part fails
``out_of_time`` (recorded for this submission, never shared nor kept); when the machine's load kept the code from
what was left, it is ``not_graded`` (``Reason.BUDGET``). A deadline the budget did not cut stays the answer's.
Both ways, without processes but the last test's."""
import pytest

from graders.checks import fast as fast_part
from graders.checks.parts import ExerciseChecks
from graders.checks.submission import GradingRun, grade_submission
from graders.checks.vocabulary import Disrupted, MachineOutOfTime, OutOfTime
from graders.model.verdict import Reason, Status, settled
from graders.sandbox.budget import GRACE, NotebookBudget
from graders.sandbox.clock import Mark, ProgramClock
from graders.sandbox.processes import Deadline

from tests.testkit import program


def _checks(budget):
    checks = ExerciseChecks.__new__(ExerciseChecks)  # only the budget is used here
    checks.notebook_budget = budget
    return checks


def test_a_deadline_the_budget_cut_short_after_the_code_spent_it_is_the_codes():
    budget = NotebookBudget(1.0)
    budget.charge(0.9)
    with pytest.raises(OutOfTime, match="used up its time budget: it ran 1.6 s of the 1 s"):
        with _checks(budget).budgeted(10.0) as allowed:
            assert allowed == pytest.approx(0.1 + GRACE)
            budget.charge(0.7)  # what the session charges for the request: the code ran through its limit
            raise Deadline("no reply in time")


def test_a_deadline_the_budget_cut_short_while_the_code_had_time_left_is_the_machines():
    budget = NotebookBudget(1.0)
    budget.charge(0.9)
    with pytest.raises(MachineOutOfTime, match="grading machine was too busy"):
        with _checks(budget).budgeted(10.0):
            budget.charge(0.05)  # the request's wall time was mostly the run queue's
            raise Deadline("no reply in time")


@pytest.mark.parametrize("budget", [None, "far"])
def test_a_deadline_the_budget_left_whole_is_the_answers(budget):
    checks = _checks(None if budget is None else NotebookBudget(600))
    with pytest.raises(Deadline):
        with checks.budgeted(10.0) as allowed:
            assert allowed == 10.0
            raise Deadline("no reply in time")


def test_a_spent_budget_fails_the_next_part_and_a_passed_wall_cap_leaves_it_not_graded():
    spent = NotebookBudget(2.0)
    spent.charge(2.5)
    with pytest.raises(Disrupted) as program_s:
        _checks(spent).budget(1.0)
    assert program_s.value.reason is Reason.OUT_OF_TIME
    verdict = program_s.value.verdict("fast")
    assert verdict.status is Status.FAILED and not verdict.shared and "2.5 s of the 2 s" in verdict.message
    capped = NotebookBudget(2.0)
    capped.charge(0.5, wall=1.0)
    assert _checks(capped).budget(1.0) == 1.0
    capped.charge(0.0, wall=5.0)  # the wall-clock cap (3x the budget) passed while the code had run 0.5 s
    with pytest.raises(Disrupted) as machine_s:
        _checks(capped).budget(1.0)
    assert machine_s.value.reason is Reason.BUDGET
    assert machine_s.value.verdict("fast").status is Status.NOT_GRADED


def test_a_limit_is_cut_to_what_is_left_and_to_the_wall_cap():
    budget = NotebookBudget(10.0)
    assert budget.limit(30.0) == pytest.approx(10.0 + GRACE)
    budget.charge(8.0)
    assert budget.limit(1.0) == 1.0 and budget.limit(30.0) == pytest.approx(2.0 + GRACE)
    budget.charge(0.0, wall=21.0)  # the machine kept the code waiting: one second of wall time left to the cap
    assert budget.limit(30.0) == pytest.approx(1.0)


def test_the_programs_time_is_the_wall_time_less_the_run_queue_wait_and_at_least_its_cpu():
    waited = ProgramClock.between(Mark(0.0, 1.0, 0.0), Mark(10.0, 8.0, 1.0))
    assert waited == (pytest.approx(3.0), True)  # 7 s in the run queue are the machine's
    asleep = ProgramClock.between(Mark(0.0, 1.0, 0.0), Mark(10.0, 1.0, 0.01))
    assert asleep == (pytest.approx(10.0), True)  # asleep all along: the program's
    threads = ProgramClock.between(Mark(0.0, 0.0, 0.0), Mark(2.0, 2.0, 3.5))
    assert threads == (pytest.approx(2.0), True)  # its own threads kept its main thread waiting: its own time
    unknown = ProgramClock.between(Mark(0.0, None, 0.0), Mark(10.0, None, 1.0))
    assert unknown == (pytest.approx(10.0), False)  # no schedstat: the whole wall time counts


def test_a_budget_running_out_while_fast_is_timed_fails_fast_for_this_submission_only(broadcasting, monkeypatch):
    """The notebook's code spends the budget at the first timed repetition (as when other exercises of the notebook
    spent most of it), and that request runs past its cut limit: "fast" fails ``out_of_time``, not ``too_slow``,
    and is neither shared nor kept; the next student with the same program, on a full budget, is graded."""
    ex = broadcasting.exercise("softmax_rows")
    cells = program(broadcasting, softmax_rows=ex.reference_source())
    fast, real_timed, cut = ExerciseChecks.fast, fast_part.timed, {"on": False}

    def fast_near_the_budget(self):
        budget, asked = self.budget, {"n": 0}

        def running_out(seconds):
            asked["n"] += 1
            if asked["n"] == 4:  # three warm-up requests, then the first timed repetition
                b = self.notebook_budget
                b.charge(b.seconds - b.spent - 0.2)
                cut["on"] = True
            return budget(seconds)

        self.budget = running_out
        return fast(self)

    def timed(student, staged, limit):
        if cut["on"] and limit <= 0.2 + GRACE + 1e-6:  # the request the budget cut: past it, sleeping all the while
            student.budget.charge(limit)
            raise Deadline(f"no reply within {limit:.3g} s", cpu=0.0)
        return real_timed(student, staged, limit)

    monkeypatch.setattr(fast_part, "timed", timed)
    with GradingRun(seed=7) as run:
        monkeypatch.setattr(ExerciseChecks, "fast", fast_near_the_budget)
        first = grade_submission(broadcasting, cells, only=["softmax_rows"], run=run, notebook_timeout=600)
        monkeypatch.setattr(ExerciseChecks, "fast", fast)
        cut["on"] = False
        assert first["softmax_rows"]["correct"].passed and first["softmax_rows"]["vectorized"].passed  # in time
        timed_part = first["softmax_rows"]["fast"]
        assert timed_part.status is Status.FAILED and timed_part.reason is Reason.OUT_OF_TIME, timed_part.message
        assert "used up its time budget" in timed_part.message
        assert not settled(first["softmax_rows"]) and "softmax_rows" not in run.computed  # neither shared nor kept
        second = grade_submission(broadcasting, cells, only=["softmax_rows"], run=run, notebook_timeout=600)
        assert "softmax_rows" in run.computed  # graded, not handed the first one's verdict
        assert second["softmax_rows"]["fast"].reason is not Reason.OUT_OF_TIME
        assert second["softmax_rows"]["fast"].status is not Status.NOT_GRADED
