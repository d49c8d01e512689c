"""The notebook's time budget counts the time the student's own processes spend, and only that (issue 37, item 4;
graders.sandbox.budget). A notebook whose reached code sleeps or spins through the budget gets a recorded 0
(``failed``, ``out_of_time``) for the parts it did not earn, never shared or kept, while the exercise graded before
keeps its verdict; loading is bounded by the budget; an honest notebook the machine's load kept waiting is not
failed for the machine's time; the machine's wall-clock cap and a jail that cannot start stay ``not_graded``.

Real processes with a short ``notebook_timeout`` (6 s) and cells of 1.5 s: marked ``timing``."""
import time

import pytest

from graders.checks.submission import GradingRun, grade_submission
from graders.model.verdict import Reason, Status
from graders.sandbox import clock
from graders.sandbox.session import Template, WorkerFailure

from tests.testkit import program

pytestmark = pytest.mark.timing

BUDGET = 6.0
EXERCISES = ["batch_outer", "pairwise_sq_dists", "standardize_columns"]
PAIRWISE = "((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)"
SLEEP = "import time\nK{i} = time.sleep(1.5) or 0\n"
SPIN = "K{i} = spin(1.5)\n"
SPINNER = ("import time\n\n\ndef spin(seconds):\n    t = time.process_time()\n    while time.process_time() - t < seconds:\n"
           "        pass\n    return 0\n")


def slow_notebook(broadcasting, n: int, cell: str, right: bool = False):
    """``batch_outer`` answered (graded first), then ``pairwise_sq_dists`` whose function reaches ``n`` slow cells
    (each well under the per-cell limit), wrong unless ``right``; ``standardize_columns`` after it."""
    slow = [("helpers", SPINNER)] + [(f"slow cell {i}", cell.format(i=i)) for i in range(n)]
    extra = "" if right else " + 1"
    pairwise = f"def pairwise_sq_dists(x, y):\n    return {PAIRWISE}{extra} + ({' + '.join(f'K{i}' for i in range(n))})\n"
    ok = broadcasting.exercise
    return (program(broadcasting, batch_outer=ok("batch_outer").reference_source(),
                    standardize_columns=ok("standardize_columns").reference_source())
            + slow + [("your `pairwise_sq_dists` cell", pairwise)])


@pytest.mark.parametrize("cell", [SLEEP, SPIN], ids=["sleeping", "spinning"])
def test_a_notebook_whose_code_spends_the_budget_gets_a_recorded_zero_for_what_it_did_not_earn(broadcasting, cell,
                                                                                                 monkeypatch):
    """9 s of sleeping or spinning cells that the wrong answer reaches, against a 6 s budget. The wall-clock cap is
    raised here so that a spinning child gets its CPU time on a shared machine (the cap has its own test)."""
    from graders.sandbox import budget
    monkeypatch.setattr(budget, "WALL_FACTOR", 20.0)
    cells = slow_notebook(broadcasting, 6, cell)
    with GradingRun(seed=5) as run:
        got = grade_submission(broadcasting, cells, run=run, notebook_timeout=BUDGET, only=EXERCISES)
        assert all(v.passed for v in got["batch_outer"].values()), got["batch_outer"]  # earned before: kept
        for name in ("pairwise_sq_dists", "standardize_columns"):
            for part, v in got[name].items():
                assert v.status is Status.FAILED and v.reason is Reason.OUT_OF_TIME, (name, part, v)
                assert "used up its time budget" in v.message and "of the 6 s allowed" in v.message, v.message
        # recorded for this submission, never shared or kept: a classmate with the same program is graded anew
        assert run.computed == {"batch_outer"}
        for name in ("pairwise_sq_dists", "standardize_columns"):
            assert run.keys[name] not in run.verdicts


def test_loading_is_bounded_by_the_budget(broadcasting):
    """18 s of slow cells, each under the per-cell limit, stop when the code has run the 6 s budget (today's rule
    loaded them all: 638.9 s of verdicts against a budget of 600 s)."""
    cells = slow_notebook(broadcasting, 12, SLEEP)
    with GradingRun(seed=5) as run:
        run.reference(broadcasting)  # the grader's own warm-up, outside the measure
        started = time.monotonic()
        got = grade_submission(broadcasting, cells, run=run, notebook_timeout=BUDGET, only=["pairwise_sq_dists"])
        took = time.monotonic() - started
    assert took < BUDGET + 4.0, took  # the budget, its grace, and starting a jail
    assert all(v.reason is Reason.OUT_OF_TIME for v in got["pairwise_sq_dists"].values()), got


def test_an_exercise_that_loads_within_the_budget_is_graded_and_a_regrade_does_the_same(broadcasting):
    """Control: the same wrong answer with two slow cells (3 s) is decided from what it does: wrong, recorded."""
    cells = slow_notebook(broadcasting, 2, SLEEP)
    with GradingRun(seed=5) as run:
        for _ in range(2):
            got = grade_submission(broadcasting, cells, run=run, notebook_timeout=BUDGET, only=EXERCISES)
            assert got["pairwise_sq_dists"]["correct"].reason is Reason.WRONG_VALUE, got["pairwise_sq_dists"]
            assert got["standardize_columns"]["correct"].passed


def _all_waiting(monkeypatch) -> None:
    """A machine so busy that every second of the children's wall time was spent in the run queue (a fake
    schedstat reader): only their CPU time is theirs."""
    monkeypatch.setattr(clock, "run_queue_wait", lambda pid: time.monotonic())


def test_an_honest_notebook_kept_waiting_by_the_machine_is_not_failed_for_the_machines_time(broadcasting,
                                                                                           monkeypatch):
    """The same 7.5 s of the cells' wall time, once as the program's own (asleep: it spends the 6 s budget) and once
    as the machine's (kept in the run queue: it spends nothing, and 7.5 s is well under the wall-clock cap): then
    the answer is graded on what it does: right, and (for the ``time`` module it reaches, outside the checked
    subset) neither vectorized nor fast."""
    cells = slow_notebook(broadcasting, 5, SLEEP, right=True)
    only = ["pairwise_sq_dists"]
    with GradingRun(seed=5) as run:
        asleep = grade_submission(broadcasting, cells, run=run, notebook_timeout=BUDGET, only=only)
        assert all(v.reason is Reason.OUT_OF_TIME for v in asleep["pairwise_sq_dists"].values()), asleep
        _all_waiting(monkeypatch)
        waiting = grade_submission(broadcasting, cells, run=run, notebook_timeout=BUDGET, only=only)
    verdicts = waiting["pairwise_sq_dists"]
    assert verdicts["correct"].passed, verdicts
    assert all(verdicts[p].reason is Reason.OUTSIDE_SUBSET for p in ("vectorized", "fast")), verdicts


def test_a_machine_so_busy_that_the_wall_cap_passes_leaves_the_parts_not_graded(broadcasting, monkeypatch):
    from graders.sandbox import budget
    monkeypatch.setattr(budget, "WALL_FACTOR", 0.5)  # a cap of 3 s of wall time for the 6 s budget
    _all_waiting(monkeypatch)
    cells = slow_notebook(broadcasting, 3, SLEEP, right=True)
    got = grade_submission(broadcasting, cells, seed=5, notebook_timeout=BUDGET, only=["pairwise_sq_dists"])
    for part, v in got["pairwise_sq_dists"].items():
        assert v.status is Status.NOT_GRADED and v.reason is Reason.BUDGET, (part, v)
        assert "grading machine was too busy" in v.message, v.message


def test_a_jail_that_cannot_start_is_still_not_graded_under_a_budget(broadcasting, monkeypatch):
    def cannot_start(self):
        raise WorkerFailure("no jail today")

    cells = slow_notebook(broadcasting, 1, SLEEP, right=True)
    with GradingRun(seed=5) as run:
        run.reference(broadcasting)  # the reference's own template starts; the students' jails do not
        monkeypatch.setattr(Template, "start", cannot_start)
        got = grade_submission(broadcasting, cells, run=run, notebook_timeout=BUDGET, only=["pairwise_sq_dists"])
    for v in got["pairwise_sq_dists"].values():
        assert v.status is Status.NOT_GRADED and v.reason is Reason.COULD_NOT_START, v


def test_a_request_that_starts_its_child_is_cut_to_what_the_loading_left():
    """A fresh child (as "fast" forks one) loads its cells inside a request: what the loading spent is taken off that
    request's limit, so a call that sleeps past it ends at what was left of the budget, as the program's doing."""
    import torch

    from graders.sandbox.budget import NotebookBudget, OutOfTime
    from graders.sandbox.protocol import Op, request
    from graders.sandbox.session import Limits, WorkerSession
    cells = [("slow", SLEEP.format(i=0)), ("answer", "import time\ndef idle(a):\n    time.sleep(30)\n    return a + K0\n")]
    budget = NotebookBudget(2.0)
    with Template(Limits()) as template:
        template.start()  # the jail's start is the machine's, outside the measure
        worker = WorkerSession(cells, template=template, budget=budget)
        started = time.monotonic()
        with pytest.raises(OutOfTime):
            worker.timed_request(request(Op.BENCH, name="idle", calls=[((torch.ones(1),), {})], which=[0]), 10.0)
        took = time.monotonic() - started
        worker.close()
    assert budget.spent >= 2.0 and took < 1.5 + 1.0 + 2.0 + 2.0, took  # loads, what was left (+grace), STILL, slack
