"""The "fast" part: the student's compute against the reference's, in rounds, on the CPU clock, decided sequentially.

Every request is one timed request of graders.checks.timing: the CPU time the
kernel accounted to the worker's process, inputs and outputs inside the window.
The student is timed in a fresh child that loaded only its program, the
reference in a fresh child of the same kind (graders.checks.reference).

The bar is a ratio answer/reference: at most the exercise's ``ref_factor``, and
fast enough for its speedup over the loop version
(graders.checks.sequential.effective_bar, with the reference's shared time).

1. A warm-up call (first calls pay lazy init), then a *probe* of k/16 calls
   cut at four times the reference's allowed time plus ``PROBE_SLACK``, at least
   ``PROBE_LIMIT`` CPU seconds. The probe is timed: an answer whose probe costs
   more than ``PROBE_FAR`` times the bar per call (a Python loop) fails there,
   without the request of full size (graders.checks.sequential.probe_decision).
   Then one untimed request of k calls (memory touched for the first time costs
   up to 3x). The reference's timing child goes through the same requests
   (``warm_up_requests``). A request past its wall-clock deadline fails only if
   the worker spent at least half of it on the CPU; one the machine kept
   waiting (``Stalled``) is measured again, once, in a fresh child.
2. Rounds (graders.checks.sequential.decide): round 0 is one request of k
   calls against the reference's time on the same inputs, measured once and
   shared by the run's students (the best of 3, the fastest of it and the
   calibration's, so that a reference measured at a busy moment cannot flatter
   an answer); later rounds time the answer and a fresh reference child on the
   same inputs, one request each. After each round the median log ratio and its
   interval at 99% confidence (its width never under the noise measured for
   identical code) decide as soon as the interval lies on one side of the bar;
   a failure on fewer than 3 rounds needs every round and the probe far over
   it (one stalled request cannot fail an answer). Up to ``CAP`` rounds; at the
   cap the estimate decides and the verdict says it was close.
3. A pass must also hold, within ``BEST_ALLOWANCE`` of the bar, against the
   reference at its best in the run: a busy moment can slow a fresh reference's
   requests and not a Python loop's.

The loop version's time and k are measured once per grading run; each
request's inputs (new for every call: new data, or for a shape-only exercise a
new shape of equal work, graders.checks.equal_work) are the same for every
student of a run. A sample of each request's outputs, at
positions drawn by the grader, is checked against the reference.
"""
from __future__ import annotations

from graders.checks.compare import mismatch
from graders.checks.sequential import CAP, CONFIDENCE, Decision, Round, decide, effective_bar, probe_decision
from graders.checks.timing import timed
from graders.checks.vocabulary import Disrupted, StudentError, Verdict, clone_args, disruption
from graders.model.errors import VecgradeError
from graders.model.verdict import Reason, failed, passed
from graders.sandbox.session import Deadline, WorkerFailure, WorkerSession

# the probe runs k // PROBE calls, with a deadline (CPU seconds, graders.sandbox.session) of 4 times the reference's
# allowed time plus PROBE_SLACK, and at least PROBE_LIMIT
PROBE, PROBE_LIMIT, PROBE_SLACK = 16, 0.03, 0.02
# a probe this many times over the bar per call, and at least PROBE_FLOOR times the reference's, fails there:
# identical code's probe (cold) measured at most 5.8x the reference's time per call at load 0, 3.7x at load 4
# (benchmarks/sequential.py), so an honest answer, even at its bar, stays far below it
PROBE_FAR, PROBE_FLOOR = 4.0, 12.0
STALLED = 0.5  # a request past its deadline with less than this share of it on the CPU was kept waiting
# a pass must also hold within this factor of the bar against the reference at its best in the run: a busy moment
# once slowed the reference's requests ~1.9x and not a half loop's (6x the reference, measured 3.0x)
BEST_ALLOWANCE = 1.25
FAR_OFF = 3.0  # a speedup this many times below the exercise's reads "far too slow" (and names loops as the cause)


def warm_up_requests(run, ex, k: int, full: bool = True) -> list:
    """The untimed requests a timing child (the student's and the reference's alike) serves before its first
    timed one: one call, the probe, and (``full``) one request of full size (a second one cost every honest answer
    20 ms of CPU and decided nothing: see the module's docstring)."""
    first = [run.bench_inputs(ex, "warm-up", 1), run.bench_inputs(ex, "probe", max(1, k // PROBE))]
    return first + [run.bench_inputs(ex, "warm-up", k)] if full else first


def repetition(rep: int) -> str:
    """The name of timed request ``rep`` (its inputs are the same for every student of a run)."""
    return f"repetition {rep}"


FIRST = repetition(0)  # the first timed request: its reference time is measured once and shared


def measure_reference(run, reference, ex) -> None:
    """Measure now, in this process, what every timed answer of ``ex`` is compared with: the calibration and the
    reference's shared time on the first timed request (``run`` keeps both). A pool's processes share them
    (graders.engine.coordinator) rather than each measuring every exercise before its first notebook."""
    k = reference.calibration(ex).k
    reference.shared_time(ex, FIRST, run.bench_inputs(ex, FIRST, k), warm_up_requests(run, ex, k))


LOOP_CAUSE = ("this usually means a Python loop over rows or elements, or building a Python list \u2014 replace it "
              "with one tensor operation over the whole input")
EXTRA_WORK_CAUSE = ("this usually means a loop over part of the input, stacking many small results, or needless "
                    "copies \u2014 use fewer, larger tensor operations")


def too_slow(ex, calls: int, limit: float, one: float | None = None, bar: float | None = None) -> Verdict:
    """A request cut at its CPU ``limit``: far too slow. With the reference's ``one`` (seconds per call) and the
    ``bar``, its figures are the decision's, the ratio at least ``limit`` over the reference's time, in no round."""
    what = "one call" if calls == 1 else f"{calls} calls"
    figures = {}
    if one is not None and bar is not None:
        at_least = limit / (calls * one)
        figures = Decision(at_least, at_least, at_least, bar, 0, True, False, False).figures()
    return failed("fast", Reason.TOO_SLOW, f"far too slow: {what} took more than {limit:.2g} s, over "
                  f"{4 * ex.ref_factor:g} times the reference solution's time (the exercise asks for a speedup of "
                  f"{ex.speedup:g}x over the loop version); {LOOP_CAUSE}", figures)


def _check_outputs(ex, staged, outs) -> Verdict | None:
    for i, out in zip(staged.which, outs, strict=True):
        args, kwargs = staged.calls[i]
        expected = ex.reference(*clone_args(args), **kwargs)
        rtol, atol = ex.tolerance(expected.dtype)
        if mismatch(out, expected, rtol, atol, ex.magnitude(args)):
            return failed("fast", Reason.WRONG_VALUE, "gave a wrong result on a benchmark input while being timed")
    return None


class Slow(VecgradeError):
    """A request ran past its wall-clock deadline computing all along: the answer is too slow (``verdict``)."""

    def __init__(self, verdict: Verdict):
        super().__init__(verdict.message)
        self.verdict = verdict


class Stalled(Slow):
    """A request ran past its wall-clock deadline while the worker got less than ``STALLED`` of that time on the CPU:
    the machine kept it waiting, which says nothing of the answer (``verdict``: what it would cost if it happened
    again)."""


def _timed(checks, student: WorkerSession, staged, limit: float, one: float | None = None,
           bar: float | None = None) -> tuple[float, list]:
    """``timing.timed`` against a wall-clock ``limit`` (within the notebook's budget: ``checks.budgeted``): a worker
    that spent it computing is too slow (``too_slow``, with ``one`` and ``bar`` for its figures), one that spent it
    waiting for the CPU has stalled (``Stalled``)."""
    try:
        with checks.budgeted(limit) as allowed:
            return timed(student, staged, allowed)
    except Deadline as exc:
        verdict = too_slow(checks.ex, len(staged.calls), limit, one, bar)
        if exc.cpu is not None and exc.cpu < STALLED * limit:
            raise Stalled(verdict) from None
        raise Slow(verdict) from None


def fast(checks) -> Verdict:
    """The "fast" verdict; a measurement the machine stalled is taken again, once, in a fresh child, and a second
    stall decides nothing (``Disrupted``: the process was kept from running, which says nothing of the answer)."""
    for attempt in range(2):
        try:
            return _fast(checks)
        except Stalled as exc:
            if attempt:
                raise Disrupted(Reason.STOPPED, f"{exc.verdict.message}, while the machine gave it almost no "
                                "CPU time (it was stopped or kept waiting)") from None
        except Slow as exc:
            return exc.verdict
    raise AssertionError("unreachable: the second attempt returns")


def _fast(checks) -> Verdict:
    ex, run, reference = checks.ex, checks.run_state, checks.reference
    try:
        calibration = reference.calibration(ex)
        loop_t, k, one = calibration.loop, calibration.k, calibration.one
        probe = max(1, k // PROBE)
        # the same requests, in the same order, for the student's and the reference's timing children; the one of
        # full size is drawn only for an answer its probe did not decide (drawing k inputs costs up to 0.2 s)
        warm_up = warm_up_requests(run, ex, k, full=False)
        with checks.student.sibling() as student:  # a fresh child: the same process history as the reference's
            full = max(checks.timeouts.bench_min, 4 * ex.ref_factor * one * k + 0.5)
            limits = [max(checks.timeouts.bench_min, 4 * ex.ref_factor * one + 0.5),
                      max(PROBE_LIMIT, 4 * ex.ref_factor * one * probe + PROBE_SLACK), full]
            probed: Round | None = None
            bar = effective_bar(ex.ref_factor, ex.speedup, loop_t, one)  # until round 0's reference is known
            for i, limit in enumerate(limits):
                if i == len(warm_up):
                    warm_up = warm_up_requests(run, ex, k)
                staged = warm_up[i]
                t, outs = _timed(checks, student, staged, limit, one, bar)
                wrong = _check_outputs(ex, staged, outs)
                if wrong:
                    return wrong
                if i == 1:  # the probe, timed: a loop far over the bar fails here
                    probed = Round(t, one)
                    early = probe_decision(probed, bar, PROBE_FAR, PROBE_FLOOR)
                    if early is not None:
                        return verdict_from(ex, loop_t, k, early, one, t, one)
            # round 0's reference: the reference at its best, in the shared request or in the calibration (a
            # reference measured at a busy moment would flatter the answer)
            ref0 = min(reference.shared_time(ex, FIRST, run.bench_inputs(ex, FIRST, k), warm_up), one)
            bar = effective_bar(ex.ref_factor, ex.speedup, loop_t, ref0)
            rounds: list[Round] = []
            fresh: WorkerSession | None = None
            try:
                for rep in range(CAP):
                    staged = run.bench_inputs(ex, repetition(rep), k)
                    # far slower than the reference already fails: the limit stops a loop answer early
                    t, outs = _timed(checks, student, staged, full, one, bar)
                    wrong = _check_outputs(ex, staged, outs)
                    if wrong:
                        return wrong
                    if rep == 0:
                        ref_t = ref0
                    else:  # not decided on the shared time: a fresh reference child, timed beside the answer
                        fresh = fresh or reference.warmed(ex, warm_up)
                        ref_t = timed(fresh, staged, 600)[0]
                    rounds.append(Round(t, ref_t))
                    decision = decide(rounds, bar, probe=probed)
                    if decision.decided:
                        break
            finally:
                if fresh is not None:
                    fresh.close()
    except WorkerFailure as exc:
        raise disruption(exc, " on a benchmark input") from None
    except StudentError as exc:
        return failed("fast", Reason.RAISED, f"{exc} on a benchmark input")
    return verdict_from(ex, loop_t, k, decision, ref0, min(r.answer for r in rounds),
                        min(r.reference for r in rounds))


def verdict_from(ex, loop_t: float, k: int, decision: Decision, ref_t: float, student_best: float,
                 best_ref: float) -> Verdict:
    """The verdict from the sequential ``decision`` (graders.checks.sequential): its estimate, a ratio over the
    reference at ``ref_t`` seconds per call (what the bar was set from), read as a speedup over the loop version
    and a factor over the reference; a pass must also hold, within ``BEST_ALLOWANCE`` of the bar, for the answer
    at its best (``student_best``) against the reference at its best in the run (``best_ref``), which a busy
    moment cannot have slowed."""
    factor = decision.estimate
    speedup, best_factor = loop_t / (factor * ref_t), student_best / best_ref
    figures = {"speedup": speedup, "ref_factor": factor, "reference_speedup": loop_t / ref_t, "k": k,
               "repetitions": decision.rounds, "best_ref_factor": best_factor, **decision.figures()}
    close = (f"; close to the bar: {factor:.2f}x the reference's time (between {decision.low:.2f}x and "
             f"{decision.high:.2f}x at {CONFIDENCE:.0%} confidence), where {decision.bar:.2f}x is allowed, "
             f"decided on the estimate after {decision.rounds} rounds") if decision.close else ""
    if not decision.passed:
        if speedup < ex.speedup:
            far = ex.speedup >= FAR_OFF * speedup
            return failed("fast", Reason.TOO_SLOW,
                          f"{'far too slow' if far else 'too slow'}: a speedup of only {speedup:.1f}x over the loop "
                          f"version, where the exercise asks for {ex.speedup:g}x ({ex.speedup / speedup:.1f} times "
                          f"short); {LOOP_CAUSE if far else EXTRA_WORK_CAUSE}{close}", figures)
        return failed("fast", Reason.TOO_SLOW,
                      f"{'far too slow' if factor > FAR_OFF * ex.ref_factor else 'too slow'}: {factor:.1f}x slower "
                      f"than the reference solution, where the exercise allows {ex.ref_factor:g}x; "
                      f"{LOOP_CAUSE if factor > FAR_OFF * ex.ref_factor else EXTRA_WORK_CAUSE}{close}", figures)
    if best_factor > decision.bar * BEST_ALLOWANCE:
        return failed("fast", Reason.TOO_SLOW,
                      f"a little too slow: {best_factor:.1f}x slower than the reference solution at its fastest in "
                      f"this grading run, where {decision.bar * BEST_ALLOWANCE:.3g}x is allowed ({factor:.1f}x "
                      f"beside a reference the machine's load had slowed); {EXTRA_WORK_CAUSE}", figures)
    return passed("fast", f"fast enough: a speedup of {speedup:.1f}x over the loop version (the exercise asks for "
                  f"{ex.speedup:g}x), {factor:.1f} times the reference solution's time{close}", figures)
