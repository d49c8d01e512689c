"""The sequential rule of "fast": from rounds of (answer, reference) times, is the answer over its bar, and how sure?

Pure arithmetic, no I/O: graders.checks.fast times the rounds and asks ``decide`` after each one.

A round is one timed request of the answer and the reference's time on the same inputs. The rule works in
log ratios, ``log(answer / reference)``, one per round:

- the **estimate** is their median (one round far off, a moment the machine stalled, moves a median of three or
  more rounds not at all);
- its **interval** at ``CONFIDENCE`` is the estimate plus or minus ``Z`` times the spread over the square root of
  the number of rounds, where the spread is the rounds' own (1.4826 times their median absolute deviation: the
  standard deviation of normal noise, which one far-off round does not inflate) but never less than ``NOISE``,
  the standard deviation measured for identical code (the reference timed as an answer) on the grading machine
  at load 0 and 4 (benchmarks/sequential.py);
- the answer **passes** as soon as the interval lies wholly below ``log(bar)``, and **fails** as soon as it lies
  wholly above it, where a failure on fewer than ``ROBUST`` rounds needs more: every one of those rounds, and
  the probe (``probe``: the warm-up's small request, timed too), must lie above the bar by ``STALL`` beyond
  the half-width. One request may be one the machine slowed (a page-fault storm, a busy cache), and a slowed
  request must not fail an answer alone; load only makes a request slower, so a pass needs no such care;
- while the interval straddles the bar, more rounds are taken, up to ``CAP``; at the cap the estimate decides
  and the decision is marked ``close``.

A loop far over its bar is decided in its first round: at 50x a bar of 3x, ``log(50 / 3) = 2.8`` clears the
half-width ``Z * NOISE`` plus ``log(STALL)`` by far, and its probe is as slow. ``probe_decision`` decides such a
loop on the probe alone, before the untimed request of full size, when the probe is ``far`` over the bar.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CONFIDENCE = 0.99  # two-sided: the interval holds the answer's true log ratio 99 times in 100
Z = 2.576  # the normal quantile of (1 + CONFIDENCE) / 2
# the standard deviation of one round's log ratio for identical code, measured at load 0 and 4 beside the grader
# (benchmarks/sequential.py, 80 sequences of 8 rounds per level on a machine other work kept at a load average of
# 6-16: 0.140 at load 0, 0.179 at load 4; 0.121 and 0.110 on a quieter one), the largest rounded up
NOISE = 0.18
# a failure on fewer than ROBUST rounds must clear the bar by STALL more: the largest single round of identical code
# measured 1.73x the reference beside it at load 0, 1.90x at load 4 (benchmarks/sequential.py); a stall past a
# deadline is graders.checks.fast's Stalled
STALL, ROBUST = 2.0, 3
CAP = 8  # rounds at most; at the cap the estimate decides, marked close


@dataclass(frozen=True)
class Round:
    """One round: the answer's and the reference's CPU seconds per call on the same request."""

    answer: float
    reference: float

    @property
    def log_ratio(self) -> float:
        return math.log(max(self.answer, 1e-12) / max(self.reference, 1e-12))


@dataclass(frozen=True)
class Decision:
    """What the rounds so far say: the ratio answer/reference (``estimate``, with ``low`` and ``high`` at
    ``CONFIDENCE``), the ``bar`` it is held to, the ``rounds`` taken, and ``passed`` once ``decided``
    (``close``: decided on the estimate at the cap, the interval straddling the bar)."""

    estimate: float
    low: float
    high: float
    bar: float
    rounds: int
    decided: bool
    passed: bool
    close: bool

    def figures(self) -> dict[str, float | int | bool]:
        """The decision as a verdict's figures (JSON scalars)."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "bar": self.bar,
                "rounds": self.rounds, "close": self.close, "confidence": CONFIDENCE}


def effective_bar(ref_factor: float, speedup: float, loop_t: float, ref_t: float) -> float:
    """The largest ratio answer/reference that passes both thresholds: at most ``ref_factor`` times the
    reference, and at least ``speedup`` times faster than the loop version (``loop_t``), with the reference at
    ``ref_t`` seconds per call."""
    return min(ref_factor, loop_t / (max(ref_t, 1e-12) * speedup))


def probe_decision(probe: Round, bar: float, far: float, floor: float) -> Decision | None:
    """A failure decided on the probe alone when its ratio is more than ``far`` times the bar and more than
    ``floor`` (the probe runs cold: memory touched for the first time costs an honest answer more), else None."""
    ratio = math.exp(probe.log_ratio)
    if ratio <= max(far * bar, floor):
        return None
    return Decision(ratio, ratio / far, ratio, bar, 0, True, False, False)


def decide(rounds: list[Round], bar: float, cap: int = CAP, noise: float = NOISE,
           probe: Round | None = None) -> Decision:
    """The decision after ``rounds`` (at least one) against ``bar`` (see the module's docstring); ``probe``:
    the probe's round, which a failure on fewer than ``ROBUST`` rounds must also be far over the bar on."""
    assert rounds, "at least one round"
    logs = [r.log_ratio for r in rounds]
    n = len(logs)
    centre = statistics.median(logs)
    deviation = statistics.median(abs(x - centre) for x in logs)
    half = Z * max(noise, 1.4826 * deviation) / math.sqrt(n)
    limit = math.log(bar)
    low, high = centre - half, centre + half
    if n < ROBUST:  # every observation far over the bar, not only their median
        evidence = logs + ([probe.log_ratio] if probe is not None else [])
        fails = min(evidence) - half - math.log(STALL) > limit
    else:
        fails = low > limit
    if high < limit:
        decided, passed, close = True, True, False
    elif fails:
        decided, passed, close = True, False, False
    elif n >= cap:
        decided, passed, close = True, centre <= limit, True
    else:
        decided, passed, close = False, False, False
    return Decision(math.exp(centre), math.exp(low), math.exp(high), bar, n, decided, passed, close)
