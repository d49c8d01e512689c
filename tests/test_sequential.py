"""The sequential rule of "fast" (graders.checks.sequential), on synthetic timings: no process, no clock."""
import json
import math
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from graders.checks.fast import BEST_ALLOWANCE, PROBE_FAR, PROBE_FLOOR, verdict_from
from graders.checks.sequential import CAP, CONFIDENCE, NOISE, Round, decide, effective_bar, probe_decision
from graders.model.verdict import Reason, Verdict

REF = 0.001  # the reference's seconds per call


def rounds(*ratios: float) -> list[Round]:
    return [Round(r * REF, REF) for r in ratios]


def noisy(ratio: float) -> list[float]:
    """``CAP`` rounds around ``ratio``: two on it, then 15% off either way in turn (its median stays on it)."""
    return [ratio, ratio] + [ratio * (1.15 if i % 2 else 1 / 1.15) for i in range(CAP - 2)]


def run_until_decided(ratios: list[float], bar: float, probe: float | None = None):
    """The decision "fast" takes when its rounds measure ``ratios`` one after the other."""
    taken = []
    for ratio in ratios:
        taken.append(Round(ratio * REF, REF))
        decision = decide(taken, bar, probe=None if probe is None else Round(probe * REF, REF))
        if decision.decided:
            return decision
    raise AssertionError(f"not decided after {len(taken)} rounds")


def test_a_clear_pass_is_decided_in_one_round():
    decision = run_until_decided([1.0] * CAP, bar=3.0)
    assert decision.passed and decision.rounds == 1 and not decision.close
    assert decision.low < 1.0 < decision.high < 3.0
    assert math.log(decision.high) == pytest.approx(2.576 * NOISE)  # one round: the noise floor's width
    # control: the same round against a bar it is close to is not decided at once
    assert not decide(rounds(1.0), bar=1.1).decided


def test_a_clear_failure_is_decided_in_one_round_when_the_probe_agrees():
    """A novice element loop, 50x the reference, against a bar of 3x: one round (the probe as slow) decides."""
    decision = run_until_decided([50.0] * CAP, bar=3.0, probe=60.0)
    assert not decision.passed and decision.rounds == 1 and not decision.close
    assert decision.low > 3.0
    # control: a fast answer with the same probe is not failed
    assert decide(rounds(1.0), bar=3.0, probe=Round(60 * REF, REF)).passed


def test_a_loop_far_over_the_bar_fails_on_its_probe_alone():
    early = probe_decision(Round(50 * REF, REF), 3.0, PROBE_FAR, PROBE_FLOOR)  # 50x: far over 4 x 3x
    assert early is not None and not early.passed and early.rounds == 0 and early.estimate == pytest.approx(50)
    # a cold probe of honest code (measured up to 5.8x): not decided, even against a low bar
    assert probe_decision(Round(5.8 * REF, REF), 3.0, PROBE_FAR, PROBE_FLOOR) is None
    assert probe_decision(Round(5.8 * REF, REF), 1.2, PROBE_FAR, PROBE_FLOOR) is None


@pytest.mark.parametrize("ratio, passes", [(2.7, True), (3.3, False)])
def test_close_either_way_is_measured_to_the_cap_and_decided_on_the_estimate(ratio, passes):
    """An answer within the noise of its bar: the interval straddles it until the cap, where the estimate (the
    median) decides and the decision says it was close."""
    decision = run_until_decided(noisy(ratio), bar=3.0)
    assert decision.rounds == CAP and decision.close and decision.passed is passes
    assert decision.low < 3.0 < decision.high
    assert decision.estimate == pytest.approx(ratio)


def test_one_stalled_round_does_not_fail_an_honest_answer():
    """The first round stalled (11x: a page-fault storm, a busy cache) and the probe did not: no failure on it;
    the rounds after it decide, on their median."""
    first = decide(rounds(11.0), bar=3.0, probe=Round(1.5 * REF, REF))
    assert not first.decided
    second = decide(rounds(11.0, 1.0), bar=3.0, probe=Round(1.5 * REF, REF))
    assert not second.decided  # two rounds, one stalled: still not a failure, not yet a pass
    decision = run_until_decided([11.0] + [1.0] * (CAP - 1), bar=3.0, probe=1.5)
    assert decision.passed and decision.rounds == 3 and not decision.close
    # control: an answer slow on every round, probe included, fails in the first
    assert not run_until_decided([11.0] * CAP, bar=3.0, probe=11.0).passed
    # and a slow answer with a stalled-looking cheap probe still fails once three rounds agree
    slow = run_until_decided([11.0] * CAP, bar=3.0, probe=1.5)
    assert not slow.passed and slow.rounds == 3


def test_a_stalled_round_among_three_does_not_move_the_estimate():
    decision = decide(rounds(1.0, 40.0, 1.0), bar=3.0)
    assert decision.estimate == pytest.approx(1.0) and decision.passed


def test_the_effective_bar_is_the_stricter_of_the_factor_and_the_speedup():
    # the reference is 100x faster than the loop: a 20x speedup allows 5x the reference; ref_factor 3 is stricter
    assert effective_bar(3.0, 20.0, loop_t=100 * REF, ref_t=REF) == pytest.approx(3.0)
    # the reference only 40x faster: a 20x speedup allows 2x the reference, stricter than 3
    bar = effective_bar(3.0, 20.0, loop_t=40 * REF, ref_t=REF)
    assert bar == pytest.approx(2.0)
    assert not run_until_decided([2.5] * CAP, bar, probe=2.5).passed  # under 3x, but short of the speedup
    assert run_until_decided([1.0] * CAP, bar).passed


EX = SimpleNamespace(speedup=20, ref_factor=3)


def test_the_verdict_carries_the_decision_and_says_when_it_was_close():
    bar = effective_bar(3.0, 20, 1.0, REF)
    close = run_until_decided(noisy(2.7), bar)
    verdict = verdict_from(EX, 1.0, 100, close, REF, 2.4 * REF, REF)
    assert verdict.passed and "close to the bar: " in verdict.message and "99%" in verdict.message
    f = verdict.figures
    assert f["estimate"] == pytest.approx(2.7, rel=0.01) and f["low"] < 3 < f["high"] and f["bar"] == 3
    assert f["rounds"] == CAP and f["close"] is True and f["confidence"] == CONFIDENCE
    clear = verdict_from(EX, 1.0, 100, run_until_decided([1.0], bar), REF, REF, REF)
    assert clear.passed and "close" not in clear.message and clear.figures["close"] is False


def test_the_figures_round_trip_through_json():
    """A verdict's figures, the decision's included, come back equal from the JSON the store and the grade cell
    keep (Verdict.to_json, GradingOutcome)."""
    from graders.engine.request import GradingOutcome, SubmissionStatus

    close = run_until_decided(noisy(3.3), 3.0)
    verdict = verdict_from(EX, 1.0, 100, close, REF, 3.0 * REF, REF)
    back = Verdict.from_json(json.loads(json.dumps(verdict.to_json())))
    assert back == verdict and back.figures["close"] is True and back.figures["rounds"] == CAP
    assert set(back.figures) >= {"estimate", "low", "high", "bar", "rounds", "close", "confidence"}
    outcome = GradingOutcome.from_json(json.loads(json.dumps(
        GradingOutcome("s", "broadcasting", SubmissionStatus.GRADED, verdicts={"ex": {"fast": verdict}}).to_json())))
    assert outcome.verdicts["ex"]["fast"] == verdict


def test_a_failed_fast_keeps_its_causes():
    loop = verdict_from(EX, 1.0, 100, run_until_decided([500.0], 3.0, probe=500.0), REF, 0.5, REF)
    assert not loop.passed and loop.reason is Reason.TOO_SLOW
    assert loop.message.startswith("far too slow: a speedup of only 2.0x over the loop version, where the exercise "
                                   "asks for 20x (10.0 times short)") and "Python loop" in loop.message, loop.message
    slower = verdict_from(EX, 10.0, 100, run_until_decided([4.5] * CAP, 3.0, probe=4.5), REF, 4.5 * REF, REF)
    assert slower.message.startswith("too slow: 4.5x slower than the reference solution, where the exercise allows "
                                     "3x; this usually means a loop over part"), slower.message
    assert all(len(v.message) < 400 for v in (loop, slower))


def test_a_pass_measured_again_also_holds_against_the_reference_at_its_best():
    """A busy moment slowed the fresh reference's requests ~1.9x and not a half loop's: beside that reference a
    loop at 6x the reference's best read 3.0x. A pass must also hold within ``BEST_ALLOWANCE`` of the bar
    against the reference at its fastest in the run."""
    passing = run_until_decided([2.0] * CAP, 3.0)
    half_loop = verdict_from(EX, 1.0, 100, passing, REF, 6 * REF, REF)
    assert not half_loop.passed and "at its fastest" in half_loop.message, half_loop.message
    assert half_loop.figures["best_ref_factor"] == pytest.approx(6.0)
    honest = verdict_from(EX, 1.0, 100, passing, REF, 3.5 * REF, REF)  # 3.5x the best: within 3 * 1.25
    assert honest.passed and 3 < honest.figures["best_ref_factor"] <= 3 * BEST_ALLOWANCE


# -- with real grading, beside two busy processes ------------------------------------------------------------------

BUSY = "while True: pass"
ROW_LOOP = ("def softmax_rows(x):\n    out = torch.empty_like(x)\n    for i in range(x.shape[0]):\n"
            "        e = (x[i] - x[i].max()).exp()\n        out[i] = e / e.sum()\n    return out\n")


@pytest.fixture
def two_busy_processes():
    """Two processes spinning on a core each beside the test, stopped (and reaped) after it."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    try:
        yield busy
    finally:
        for p in busy:
            p.kill()
            p.wait()


@pytest.mark.timing
def test_under_load_a_novice_loop_is_decided_at_once_and_the_reference_passes(broadcasting, two_busy_processes):
    """The calibration set's extremes beside two busy processes: a novice element loop (far over its bar) fails
    on its probe or in its first round, a row loop too, and the reference itself (1.0x) passes, not close."""
    from graders.checks.submission import GradingRun, grade_submission

    from tests.testkit import program

    run = GradingRun(seed=11)

    def fast(name: str, source: str) -> Verdict:
        return grade_submission(broadcasting, program(broadcasting, **{name: source}), only=[name],
                                run=run)[name]["fast"]

    ex = broadcasting.exercise("batch_outer")
    element_loop = fast("batch_outer", re.sub(r"\bdef batch_outer_loop\(", "def batch_outer(", ex.loop_source()))
    assert not element_loop.passed and element_loop.figures["rounds"] <= 1, element_loop.message
    assert element_loop.figures["estimate"] > 4 * element_loop.figures["bar"], element_loop.figures
    assert "Python loop" in element_loop.message, element_loop.message
    rows = fast("softmax_rows", ROW_LOOP)
    assert not rows.passed and rows.figures["rounds"] <= 1, (rows.message, rows.figures)
    for name in ("batch_outer", "softmax_rows"):  # controls: the reference passes, clearly
        reference = fast(name, broadcasting.exercise(name).reference_source())
        assert reference.passed and not reference.figures["close"], (reference.message, reference.figures)
        assert reference.figures["estimate"] < 2, reference.figures
