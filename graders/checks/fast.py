"""The "fast" part: compute time, measured by the grader, against the reference and the loop version.

One worker round trip costs about 0.6 ms, more than many answers take, so a
timed request runs the function on k staged inputs (k chosen so that the
reference's request takes at least ``TARGET`` seconds) and the grader times
the whole request: the IPC cost is spread over k calls. The student's and
the reference's requests alternate, under the same load, five times (three
when the verdict is already clear by a factor of two on both thresholds).
Before them a *probe* of k/16 calls, cut at ``PROBE_LIMIT``, stops an answer
that takes seconds per request (a Python loop) in a fraction of a second;
an honest answer needs a few milliseconds for it, a hundredth of the limit.
The loop version's time and k are measured once per grading run
(``GradingRun.calibration``) on inputs of the run's own stream, so every
student meets the same k. The
outputs of the timed calls are checked against the reference afterwards
(a random sample of each request's outputs). Each request's inputs are the
same for every student of a run (``GradingRun.bench_inputs``), drawn and
encoded once: each request has its own, so nothing can be memoized.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from graders.checks.compare import mismatch
from graders.sandbox.session import Deadline, WorkerFailure
from graders.sandbox.wire import encode

TARGET = 0.02
MAX_K = 1024  # tiny calls (15 us) still reach TARGET: a short request is at the mercy of one stall
CHECKED = 4  # outputs checked per timed request
MIN_REPS, MARGIN = 3, 2.0  # repetitions stop after MIN_REPS when the verdict is MARGIN-fold clear
PROBE, PROBE_LIMIT = 16, 0.3  # the probe runs k // PROBE calls; its deadline's floor, in seconds


@dataclass(frozen=True)
class Staged:
    """Inputs for one timed request, encoded once for both workers (1024 calls take ~15 ms to encode)."""

    calls: list
    message: bytes

    @classmethod
    def of(cls, calls: list) -> Staged:
        return cls(calls, encode(("stage", {"calls": calls})))


def timed(session, name: str, staged: Staged, timeout: float, which=()) -> tuple[float, list]:
    """Seconds per call of ``name`` over the staged calls in one timed request, and the outputs at ``which``."""
    from graders.checks.parts import StudentError
    reply, _ = session.request_encoded(staged.message, timeout)
    if "error" in reply:
        raise StudentError(f"raised {reply['error']}")
    reply, seconds = session.request("bench", timeout, name=name)
    if "error" in reply:
        raise StudentError(f"raised {reply['error']}")
    # the fetch is timed too (for both sides): work deferred from `bench` to here is still counted
    outs, fetch = session.request("bench_outputs", timeout, which=list(which))
    if "error" in outs:
        raise StudentError(f"raised {outs['error']}")
    got = outs["ok"]["outs"]
    if not isinstance(got, list) or len(got) != len(which):
        raise StudentError("sent back a different number of outputs than it was asked for")
    return (seconds + fetch) / max(1, len(staged.calls)), got


def bench_inputs(ex, gen, k) -> Staged:
    return Staged.of([(ex.sized(gen, ex.bench_size), {}) for _ in range(k)])


@dataclass(frozen=True)
class Calibration:
    """What one grading run measures once per exercise, with the course's own code."""

    loop: float  # seconds per call of the loop version at the benchmark size
    k: int  # calls per timed request
    one: float  # the reference's seconds per call, in a request of k calls


def calibrate(ex, reference, gen: torch.Generator) -> Calibration:
    loop = min(timed(reference, ex.loop_name, bench_inputs(ex, gen, 1), 600, [0])[0]
               for _ in range(2))
    timed(reference, ex.name, bench_inputs(ex, gen, 1), 600, [0])  # warm-up: first calls pay lazy init
    k, one = 1, 0.0
    while k < MAX_K:  # grow k until the reference's request takes TARGET seconds (best of two)
        one = min(timed(reference, ex.name, bench_inputs(ex, gen, k), 600, range(min(k, CHECKED)))[0]
                  for _ in range(2))
        if one * k >= TARGET:
            break
        k = min(MAX_K, k * max(2, math.ceil(TARGET / max(one * k, 1e-7))))
    return Calibration(loop, k, one)


def clear_after(student_t: list[float], ref_t: list[float], loop_t: float, ex, margin: float = MARGIN) -> bool:
    """True when the best times so far put the answer ``margin`` times beyond both thresholds (passing both,
    or failing one): more repetitions only lower the minima, which cannot cross such a gap."""
    speedup, factor = loop_t / min(student_t), min(student_t) / min(ref_t)
    clear_pass = speedup >= margin * ex.speedup and factor <= ex.ref_factor / margin
    clear_fail = speedup < ex.speedup / margin or factor > margin * ex.ref_factor
    return clear_pass or clear_fail


def too_slow(ex, calls: int, limit: float):
    from graders.checks.parts import Verdict
    what = "one call" if calls == 1 else f"{calls} calls"
    return Verdict("fast", False, f"{what} took more than {limit:.2g} s: over {4 * ex.ref_factor:g}x the "
                   f"reference's time, far from the speedup of {ex.speedup:g}x required")


def fast(checks, reps: int = 5, min_reps: int = MIN_REPS):
    from graders.checks.parts import StudentError, Verdict, clone_args
    ex, gen, run = checks.ex, checks.gen, checks.run_state
    try:
        calibration = run.calibration(ex, checks.reference)
        loop_t, k, one = calibration.loop, calibration.k, calibration.one
        student_t: list[float] = []
        ref_t: list[float] = []
        warm = checks.budget(max(checks.timeouts.bench_min, 4 * ex.ref_factor * one + 0.5))
        try:
            # warm-up: first calls pay lazy init
            timed(checks.student, ex.name, run.bench_inputs(ex, "warm-up", 1), warm, [0])
        except Deadline:
            return too_slow(ex, 1, warm)
        probe = max(1, k // PROBE)
        limit = checks.budget(max(PROBE_LIMIT, 4 * ex.ref_factor * one * probe + 0.1))
        try:
            timed(checks.student, ex.name, run.bench_inputs(ex, "probe", probe), limit)
        except Deadline:
            return too_slow(ex, probe, limit)
        for rep in range(reps):
            if rep >= min_reps and clear_after(student_t, ref_t, loop_t, ex):
                break
            staged = run.bench_inputs(ex, f"repetition {rep}", k)
            # far slower than the reference already fails: the limit stops a loop answer early
            limit = checks.budget(max(checks.timeouts.bench_min, 4 * ex.ref_factor * one * k + 0.5))
            # a sample the student cannot predict: checking all k outputs would cost more than timing them
            which = torch.randperm(k, generator=gen)[:CHECKED].tolist()
            try:
                t, outs = timed(checks.student, ex.name, staged, limit, which)
            except Deadline:
                return too_slow(ex, k, limit)
            student_t.append(t)
            for i, out in zip(which, outs, strict=True):
                args, kwargs = staged.calls[i]
                if mismatch(out, ex.reference(*clone_args(args), **kwargs), ex.rtol, ex.atol, ex.magnitude(args)):
                    return Verdict("fast", False, "gave a wrong result on a benchmark input while being timed")
            t, _ = timed(checks.reference, ex.name, staged, 600, which)
            ref_t.append(t)
    except (WorkerFailure, StudentError) as exc:
        return Verdict("fast", False, f"{exc} on a benchmark input")
    student, ref = min(student_t), min(ref_t)
    speedup, factor = loop_t / student, student / ref
    figures = {"speedup": speedup, "ref_factor": factor, "reference_speedup": loop_t / ref, "k": k}
    if speedup < ex.speedup:
        return Verdict("fast", False, f"speedup {speedup:.1f}x over the loop version, required {ex.speedup:g}x",
                       figures)
    if factor > ex.ref_factor:
        return Verdict("fast", False, f"{factor:.1f}x slower than the reference solution, allowed {ex.ref_factor:g}x",
                       figures)
    return Verdict("fast", True, f"speedup {speedup:.1f}x over the loop version (required {ex.speedup:g}x), "
                   f"{factor:.1f}x the reference's time", figures)
