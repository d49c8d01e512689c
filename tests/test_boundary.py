"""Issue 18 B, C and G: no student object and no untimed input crosses the clock or the counter, and "fast" is
read on the kernel's CPU clock of the worker's process. Each attack is run with a worker that executes it
(``checks_with_static_view``: the runtime half alone, as if the static check had missed it), next to an honest
control that keeps its verdict."""
import os

import pytest
import torch
from test_checks import LOOP, REF, RUN, checks_with_static_view

from graders.sandbox.protocol import Op, request
from graders.sandbox.session import WorkerSession


def _nspids(pid: int) -> list[int]:
    with open(f"/proc/{pid}/status") as f:
        return [int(v) for line in f if line.startswith("NSpid:") for v in line.split()[1:]]


# -- B1: the timed inputs arrive with the timed request -----------------------------------------------
# the function's work hidden in the worker's decoding of its inputs: a Python loop that precomputes every answer
# while the inputs are read, so that the timed calls only look them up
IN_DECODING = LOOP.replace("def batch_outer(a):", "def _slow(a):") + """
import sys
_ready = {}
_m = sys.modules.get('graders.sandbox.worker') or sys.modules['__main__']
_read = _m.read_request
def _read_and_work(data, role, regions=()):
    asked = _read(data, role, regions)
    if asked.op == 'bench':
        for args, _ in asked.payload['calls']:
            _ready[args[0].data_ptr()] = _slow(args[0])
    return asked
_m.read_request = _read_and_work
def batch_outer(a):
    done = _ready.get(a.data_ptr())
    return done.clone() if done is not None else a[:, :, None] * a[:, None, :]
"""


@pytest.mark.timing
def test_work_done_while_the_inputs_are_decoded_is_timed(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, IN_DECODING, REF)
    with worker:
        verdict = checks.fast()
    assert not verdict.passed, verdict.message
    worker, checks = checks_with_static_view(broadcasting, REF, REF)  # the same answer without the hidden loop
    with worker:
        assert checks.fast().passed


def test_there_is_no_untimed_staging_request():
    with WorkerSession([("cell", "def f(a):\n    return a\n")]) as worker:
        reply, _ = worker.request("stage", 10, calls=[((torch.ones(2),), {})])
    assert "unknown request 'stage'" in reply["error"]


# -- B2: every output of a timed or counted call is a plain tensor --------------------------------------
SUBCLASS_WHEN_MEASURED = ("class Quiet(torch.Tensor):\n    pass\n"
                          "def batch_outer(a):\n    out = a[:, :, None] * a[:, None, :]\n"
                          "    return out.as_subclass(Quiet) if a.shape[0] != a.shape[1] or a.shape[0] > 8 else out\n")


def test_a_tensor_subclass_is_refused_when_timed_and_when_counted(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, SUBCLASS_WHEN_MEASURED, REF)
    with worker:
        timed, counted = checks.fast(), checks.vectorized()
    assert not timed.passed and "not a plain torch.Tensor" in timed.message, timed.message
    assert not counted.passed and "not a plain torch.Tensor" in counted.message, counted.message


RUNS_WHEN_READ = ("class Late(torch.Tensor):\n"
                  "    @classmethod\n"
                  "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                  "        raise RuntimeError('my code ran while the output was read')\n"
                  "def batch_outer(a):\n    return (a[:, :, None] * a[:, None, :]).as_subclass(Late)\n")


def test_a_subclass_that_runs_code_when_read_never_runs_in_the_grader_or_after_the_clock(broadcasting):
    """Its `__torch_function__` would run on `.detach()` while the reply is encoded: it is refused before."""
    worker, checks = checks_with_static_view(broadcasting, RUNS_WHEN_READ, REF)
    with worker:
        verdict = checks.correct()
    assert not verdict.passed and "returned a `Late`, not a plain torch.Tensor" in verdict.message, verdict.message


# -- C1: the counted call does not repeat the warm-up's inputs ----------------------------------------
MEMO_BY_CONTENT = LOOP.replace("def batch_outer(a):", "def _slow(a):") + (
    "_memo = {}\n"
    "def batch_outer(a):\n    key = (tuple(a.shape), float(a.sum()))\n"
    "    if key not in _memo:\n        _memo[key] = _slow(a)\n    return _memo[key].clone()\n")


def test_a_cache_keyed_on_the_inputs_does_not_make_the_counted_call_free(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, MEMO_BY_CONTENT, REF)
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and ("grows" in verdict.message or "more than" in verdict.message), verdict.message


# -- C2: growth by steps -------------------------------------------------------------------------------
UNROLLED_CHUNKS = "def batch_outer(a):\n    n = a.shape[0]\n    parts = [a[:0, :, None] * a[:0, None, :]]\n" + "".join(
    f"    if n > {16 * i}:\n        c = a[{16 * i}:{16 * (i + 1)}]\n        parts.append(c[:, :, None] * c[:, None, :])\n"
    for i in range(12)) + "    return torch.cat(parts)\n"


def test_a_loop_over_chunks_unrolled_into_if_blocks_grows(broadcasting):
    worker, checks = checks_with_static_view(broadcasting, UNROLLED_CHUNKS, REF)
    with worker:
        assert checks.correct().passed
        verdict = checks.vectorized()
    assert not verdict.passed and "grows" in verdict.message, verdict.message


# -- G: the CPU clock of the worker's process, read from outside ---------------------------------------
@pytest.mark.timing
def test_the_clock_counts_the_workers_cpu_time_not_the_wall_time():
    cells = [("cell", "import time\ndef idle(a):\n    time.sleep(0.2)\n    return a\n"
                      "def busy(a):\n    t = time.process_time()\n    while time.process_time() - t < 0.2:\n"
                      "        pass\n    return a\n")]
    with WorkerSession(cells) as worker:
        worker.start()
        assert _nspids(worker.clock.pid)[-1] == worker.pid  # the child's own pid, as the kernel names it here
        calls = [((torch.ones(1),), {})]
        _, idle = worker.timed_request(request(Op.BENCH, name="idle", calls=calls, which=[0]), 10)
        _, busy = worker.timed_request(request(Op.BENCH, name="busy", calls=calls, which=[0]), 10)
    assert idle < 0.05 and busy >= 0.19, (idle, busy)


@pytest.mark.timing
def test_a_request_past_its_deadline_says_how_much_cpu_it_had_and_only_a_busy_one_is_slow():
    """A wall-clock deadline only bounds a request: one that computed all along is too slow, one the machine kept
    waiting (here: asleep) is a stall, measured again rather than failed."""
    from types import SimpleNamespace

    from graders.checks.fast import Slow, Stalled, _timed
    from graders.checks.parts import ExerciseChecks
    from graders.checks.timing import Staged
    from graders.sandbox.session import Deadline
    cells = [("cell", "import time\ndef idle(a):\n    time.sleep(5)\n    return a\n"
                      "def busy(a):\n    while True:\n        pass\n")]
    calls = [((torch.ones(1),), {})]
    checks = ExerciseChecks.__new__(ExerciseChecks)  # only the exercise's figures and the budget (none) are read
    checks.ex, checks.deadline = SimpleNamespace(ref_factor=3, speedup=20), None
    with WorkerSession(cells) as worker:
        with pytest.raises(Deadline) as idle:
            worker.timed_request(request(Op.BENCH, name="idle", calls=calls, which=[0]), 0.4)
        with pytest.raises(Deadline) as busy:
            worker.timed_request(request(Op.BENCH, name="busy", calls=calls, which=[0]), 0.4)
        assert idle.value.cpu is not None and idle.value.cpu < 0.1, idle.value.cpu
        assert busy.value.cpu is not None and busy.value.cpu > 0.2, busy.value.cpu
        for name, kind in (("idle", Stalled), ("busy", Slow)):
            staged = Staged.of(name, calls, torch.Generator().manual_seed(0))
            with pytest.raises(Slow) as raised:
                _timed(checks, worker, staged, 0.4)
            assert type(raised.value) is kind, name
            assert "took more than 0.4 s" in str(raised.value)


@pytest.mark.root
def test_the_reference_is_timed_in_the_same_kind_of_jailed_child_as_the_student(broadcasting, tmp_path):
    from graders.sandbox.policy import Sandbox
    sandbox = Sandbox(course_root=str(tmp_path))
    if not sandbox.status()[0] or os.geteuid() != 0:
        pytest.skip("needs the jail (root)")
    reference = RUN.reference(broadcasting, sandbox)
    with reference.fresh(broadcasting.exercise("batch_outer")) as child:
        child.start()
        assert len(_nspids(child.clock.pid)) == 2  # inside a PID namespace of its own, like a student's child
    unjailed = RUN.reference(broadcasting)
    with unjailed.fresh(broadcasting.exercise("batch_outer")) as child:
        child.start()
        assert len(_nspids(child.clock.pid)) == 1


# -- issue 17: the same program gets the same verdict within a run -------------------------------------
def test_the_same_program_is_graded_once_per_run_and_gets_the_same_verdict(broadcasting):
    from graders.checks.submission import GradingRun, grade_submission

    from tests.testkit import program
    honest = "def batch_outer(a):\n    # outer products\n    return a[:, :, None] * a[:, None, :]\n"
    restyled = "def batch_outer(a):\n    '''Each row with itself.'''\n\n    return a[:, :, None]*a[:, None, :]\n"
    other = "def batch_outer(b):\n    return b[:, :, None] * b[:, None, :]\n"  # renamed: another program
    with GradingRun(seed=11) as run:
        first = grade_submission(broadcasting, program(broadcasting, batch_outer=honest), only=["batch_outer"],
                                 run=run)
        assert run.computed == {"batch_outer"}
        again = grade_submission(broadcasting, program(broadcasting, batch_outer=restyled), only=["batch_outer"],
                                 run=run)
        assert run.computed == set() and again == first  # comments, docstrings, blank lines: the same program
        grade_submission(broadcasting, program(broadcasting, batch_outer=other), only=["batch_outer"], run=run)
        assert run.computed == {"batch_outer"}  # names count
    with GradingRun(seed=12) as run:  # another run: graded again
        grade_submission(broadcasting, program(broadcasting, batch_outer=honest), only=["batch_outer"], run=run)
        assert run.computed == {"batch_outer"}


def test_a_known_program_states_its_findings_at_each_students_own_lines(broadcasting):
    from graders.checks.submission import GradingRun, grade_submission

    from tests.testkit import program
    first = LOOP
    second = "# my answer\n\n\n" + first
    with GradingRun(seed=11) as run:
        one = grade_submission(broadcasting, program(broadcasting, batch_outer=first), only=["batch_outer"], run=run)
        two = grade_submission(broadcasting, program(broadcasting, batch_outer=second), only=["batch_outer"], run=run)
        assert run.computed == set()
    assert "lines 4, 5, 6" in one["batch_outer"]["vectorized"].message
    assert "lines 7, 8, 9" in two["batch_outer"]["vectorized"].message and not two["batch_outer"]["vectorized"].passed
