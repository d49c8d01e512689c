"""The per-exercise calibration (graders.checks.timing.calibrate) on synthetic clocks, and the run's timed inputs.

A synthetic reference costs ``fixed + per_call * k`` CPU seconds per request of k calls (a request's fixed part:
receiving, decoding, replying; the figures are those measured for broadcasting's exercises); the calibration must
end at a k whose request reaches ``TARGET`` (or at ``MAX_K``), in few timed requests, and not far past the least
such k (every later request of the run, the students' included, costs k calls)."""
from __future__ import annotations

import math

import pytest
import torch

import graders.checks.timing as timing
from graders.checks.fast import warm_up_requests
from graders.checks.submission import GradingRun
from graders.checks.timing import MAX_K, TARGET, calibrate, draw

# (fixed, per call) CPU seconds: batch_outer, pairwise_sq_dists, standardize_columns as measured; a call-heavy and a
# call-light one; a request of one call already over TARGET
CLOCKS = [(0.6e-3, 12e-6), (0.5e-3, 29e-6), (0.5e-3, 38e-6), (0.1e-3, 200e-6), (1e-3, 1e-6), (0.5e-3, 0.03)]


def synthetic(monkeypatch, fixed: float, per_call: float, curve=lambda k: k) -> list[int]:
    """Replace the timed request with the clock ``fixed + per_call * curve(k)``; returns the list of the k of
    every timed request, in order."""
    requests: list[int] = []

    def timed(session, staged, timeout):
        k = len(staged.calls)
        requests.append(k)
        return (fixed + per_call * curve(k)) / k, [None] * len(staged.which)

    monkeypatch.setattr(timing, "timed", timed)
    return requests


def least_k(fixed: float, per_call: float) -> int:
    return min(MAX_K, max(1, math.ceil((TARGET - fixed) / per_call)))


@pytest.mark.parametrize("fixed, per_call", CLOCKS)
def test_a_calibration_reaches_target_in_at_most_three_steps(monkeypatch, broadcasting, fixed, per_call):
    requests = synthetic(monkeypatch, fixed, per_call)
    ex = broadcasting.exercise("softmax_rows")
    calibration = calibrate(ex, None, torch.Generator().manual_seed(1))
    k = calibration.k
    assert calibration.one * k >= TARGET or k == MAX_K  # the reference's request takes TARGET, or k is at its cap
    assert calibration.one == pytest.approx((fixed + per_call * k) / k)
    # the warm-up, the loop version, then k = 1, a guessed k and the predicted one, each the best of two (before:
    # one more step of two requests where the fixed part dominates k = 1)
    assert len(requests) <= 2 + 3 * 2, requests
    assert k <= max(2, 1.5 * least_k(fixed, per_call)), (k, least_k(fixed, per_call))  # not far past what suffices


def test_a_calibration_whose_prediction_falls_short_still_reaches_target(monkeypatch, broadcasting):
    """Per-call work that shrinks with k (a cost amortized over the calls of a request): the line through two
    small steps predicts too small a k; the next step predicts again and the calibration still ends at TARGET."""
    requests = synthetic(monkeypatch, 0.5e-3, 100e-6, curve=lambda k: k ** 0.8)
    calibration = calibrate(broadcasting.exercise("softmax_rows"), None, torch.Generator().manual_seed(1))
    assert calibration.one * calibration.k >= TARGET
    assert len(requests) > 2 + 3 * 2  # it took a fourth step: the prediction was checked, not trusted


def test_next_k_guesses_from_one_step_and_predicts_from_two():
    from graders.checks.timing import next_k

    assert next_k([(1, 0.5e-3)]) == 40  # all of it taken as per-call work: TARGET / 0.5 ms
    fixed, per_call = 0.5e-3, 29e-6
    predicted = next_k([(1, fixed + per_call), (40, fixed + 40 * per_call)])
    assert least_k(fixed, per_call) <= predicted <= 1.3 * least_k(fixed, per_call)
    assert next_k([(1, 1e-3), (40, 0.9e-3)]) == 889  # a line that does not rise: the guess, all per-call work
    assert next_k([(600, 15e-3), (700, 15.5e-3)]) == MAX_K  # never past the cap
    assert 625 <= next_k([(100, 1e-3), (500, 19.9e-3)]) < 650  # just short: about a quarter more, not doubled


def test_the_calls_of_a_request_and_the_warm_ups_never_share_inputs(broadcasting):
    """Every call of a request has its own data, and so do the one-call warm-up and the full one (before, both
    were drawn from the stream named "warm-up": the full warm-up's first call was the one-call warm-up's)."""
    ex = broadcasting.exercise("pairwise_sq_dists")
    run = GradingRun(seed=11)
    staged = warm_up_requests(run, ex, 32)
    data = [a.numpy().tobytes() for s in staged for args, _ in s.calls for a in args]
    assert len(data) == 2 * (1 + 2 + 32) and len(set(data)) == len(data)
    one = draw(ex, ex.name, torch.Generator().manual_seed(3), 16)
    assert len({args[0].numpy().tobytes() for args, _ in one.calls}) == 16


@pytest.fixture
def strides():
    from graders.model.exercise import load_assignment

    from tests.testkit import ROOT

    return load_assignment(ROOT / "assignments" / "strides.py")


def test_a_shape_only_calibration_times_a_new_shape_of_equal_work_in_every_call(monkeypatch, strides):
    """Every step of a shape-only exercise's calibration (the run's own requests now) gets a new shape per call, of
    the benchmark's work (graders.checks.equal_work): the reference is not timed on one shape again and again."""
    import contextlib

    from graders.checks.equal_work import TOLERANCE
    from graders.checks.reference import Reference

    requests = synthetic(monkeypatch, 0.5e-3, 29e-6)
    staged_seen: list = []
    timed = timing.timed
    monkeypatch.setattr(timing, "timed", lambda session, staged, t: staged_seen.append(staged) or timed(session,
                                                                                                       staged, t))
    monkeypatch.setattr(Reference, "fresh", lambda self, ex: contextlib.nullcontext())
    ex = strides.exercise("nhwc_to_nchw_offsets")
    Reference(GradingRun(seed=13), strides, None).calibration(ex)
    work = math.prod(ex.sized(torch.Generator().manual_seed(0), ex.bench_size)[0])
    assert [len(staged.calls) for staged in staged_seen] == requests
    for staged in staged_seen[2:]:  # the steps' requests
        shapes = [args[0] for args, _ in staged.calls]
        assert len(set(shapes)) >= 0.75 * len(shapes), shapes  # a finite set of shapes: some meet twice by chance
        assert all(abs(math.prod(s) / work - 1) <= TOLERANCE for s in shapes)


def test_the_calibrations_last_step_is_timed_on_the_runs_own_requests(monkeypatch, broadcasting):
    """The last step's two requests are the run's full warm-up and first repetition at the calibrated k: drawn and
    encoded once for the run (the student's timing child and the reference's shared time meet the same objects),
    not a third and fourth time; two different requests, so the best of two is still of two inputs."""
    import contextlib

    from graders.checks.fast import FIRST
    from graders.checks.reference import Reference

    requests: list = []

    def timed(session, staged, timeout):
        requests.append(staged)
        return (0.5e-3 + 29e-6 * len(staged.calls)) / len(staged.calls), [None] * len(staged.which)

    monkeypatch.setattr(timing, "timed", timed)
    monkeypatch.setattr(Reference, "fresh", lambda self, ex: contextlib.nullcontext())
    ex = broadcasting.exercise("pairwise_sq_dists")
    run = GradingRun(seed=12)
    k = Reference(run, broadcasting, None).calibration(ex).k
    last = requests[-2:]
    assert last[0] is warm_up_requests(run, ex, k)[-1] and last[1] is run.bench_inputs(ex, FIRST, k)
    assert last[0] is not last[1] and all(len(s.calls) == k for s in last)
    data = [a.numpy().tobytes() for s in last for args, _ in s.calls for a in args]
    assert len(set(data)) == len(data)  # no call of the two shares an input
