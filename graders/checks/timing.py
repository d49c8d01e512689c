"""One timed request, measured on the kernel's CPU clock of the process that ran it.

A worker round trip costs more than many answers take, so a timed request
runs the function on k inputs at once (k chosen per run so that the
reference's request takes at least ``TARGET`` seconds of CPU time) and its
cost is spread over k calls. The inputs arrive with the request (in a sealed
memfd the worker maps: no copy of them through the socket) and the outputs
the grader checks leave with the reply: receiving, decoding, computing and
encoding all fall inside the measured window, and nothing of the student's
code runs outside it. What is measured is the CPU time the kernel accounted
to the worker's process during the request (graders.sandbox.clock), so the
rest of the machine's load does not count; wall time only bounds it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch

from graders.checks.equal_work import equal_work, shape_only
from graders.checks.vocabulary import StudentError, answer
from graders.sandbox.protocol import Op, request
from graders.sandbox.sealed import SealedMessage
from graders.sandbox.session import WorkerSession
from graders.sandbox.wire import Calls

TARGET = 0.02  # CPU seconds of the reference's work per timed request
MAX_K = 1024  # tiny calls (15 us) still reach TARGET: a short request is at the mercy of one stall
CHECKED = 4  # outputs checked per timed request


@dataclass(frozen=True)
class Staged:
    """One timed request: its calls, the positions of the outputs the grader checks, and the message, encoded
    once, sealed in a memfd and sent as is to every worker timed on it (the student's and the reference's)."""

    calls: list
    which: list[int]
    message: SealedMessage

    @classmethod
    def of(cls, name: str, calls: list, gen: torch.Generator) -> Staged:
        which = torch.randperm(len(calls), generator=gen)[:CHECKED].tolist()
        return cls(calls, which, SealedMessage(request(Op.BENCH, name=name, calls=Calls(calls), which=which)))


def draw(ex, name: str, gen: torch.Generator, k: int) -> Staged:
    """A request of ``k`` fresh inputs at the exercise's benchmark size, for the function ``name``: new data for
    every call, and for a shape-only exercise a new shape of equal work for every call
    (graders.checks.equal_work), so that nothing computed before a call can answer it."""
    return Staged.of(name, [(inputs(ex, gen), {}) for _ in range(k)], gen)


def inputs(ex, gen: torch.Generator) -> tuple:
    """One timed call's arguments at the benchmark size."""
    args = ex.sized(gen, ex.bench_size)
    return equal_work(args, gen) if shape_only(args) else args


def timed(session: WorkerSession, staged: Staged, timeout: float) -> tuple[float, list]:
    """CPU seconds per call of the staged request in ``session``, and the outputs at ``staged.which``."""
    reply, cpu = session.timed_request(staged.message, timeout)
    outs = answer(reply)["outs"]
    if not isinstance(outs, list) or len(outs) != len(staged.which):
        raise StudentError("sent back a different number of outputs than it was asked for")
    return cpu / max(1, len(staged.calls)), outs


@dataclass(frozen=True)
class Calibration:
    """What one grading run measures once per exercise, with the course's own code."""

    loop: float  # CPU seconds per call of the loop version at the benchmark size
    k: int  # calls per timed request
    one: float  # the reference's CPU seconds per call, in a request of k calls


def calibrate(ex, reference: WorkerSession, gen: torch.Generator,
              steps_of: Callable[[int], tuple[Staged, Staged]] | None = None) -> Calibration:
    """The loop version's time and the calls per timed request ``k``: the smallest step at which the reference's
    request takes ``TARGET`` CPU seconds (best of two), or ``MAX_K``. Each step's k is predicted from the steps
    before it (``next_k``), so a typical exercise needs three steps (k = 1, a small k, the predicted k).

    ``steps_of(k)``: the two requests of k calls a step times (two requests of the run that every student is
    timed on later at that k, so that the last step's inputs, drawn and encoded here, serve the run again);
    by default two requests drawn from ``gen``. The warm-up and the loop version's request are drawn from
    ``gen``."""
    timed(reference, draw(ex, ex.name, gen, 1), 600)  # warm-up: first calls pay lazy init
    # one request of the loop version (10-100 ms): a slow moment only lowers the speedup bar, which every
    # answer near it fails on the reference's bar anyway (the reference's speedup is at least 3x the bar)
    loop = timed(reference, draw(ex, ex.loop_name, gen, 1), 600)[0]
    if steps_of is None:
        def steps_of(k: int) -> tuple[Staged, Staged]:
            return draw(ex, ex.name, gen, k), draw(ex, ex.name, gen, k)
    k, steps = 1, []
    while True:  # until the reference's request takes TARGET seconds (best of two), or k is MAX_K
        one = min(timed(reference, staged, 600)[0] for staged in steps_of(k))
        if one * k >= TARGET or k >= MAX_K:
            return Calibration(loop, k, one)
        steps.append((k, one * k))
        k = next_k(steps)


HEADROOM = 1.25  # a predicted k aims this far past TARGET, so that its step confirms it (a short one costs a step)
GROWTH = 2.0, 1.25  # the least growth of k per step: guessed (one step so far), predicted (a line through two)


def next_k(steps: list[tuple[int, float]]) -> int:
    """The next step's calls per request, from the steps so far (``(k, CPU seconds of the request)``, k rising,
    each short of ``TARGET``). A request costs a fixed part (receiving, decoding, replying) plus a part per call:
    from two steps, the line through the last two predicts the k at which it reaches TARGET (``HEADROOM`` past
    it); from one, or when the line does not rise, the request is taken as all per-call work. At least ``GROWTH``
    times the last k (so that the steps end, at MAX_K at worst: a prediction just short of TARGET is not doubled),
    at most MAX_K."""
    k, seconds = steps[-1]
    predicted, growth = k * TARGET / max(seconds, 1e-7), GROWTH[0]
    if len(steps) >= 2:
        k0, seconds0 = steps[-2]
        per_call = (seconds - seconds0) / (k - k0)
        if per_call > 0:
            predicted, growth = HEADROOM * (k + (TARGET - seconds) / per_call), GROWTH[1]
    return min(MAX_K, max(math.ceil(growth * k), math.ceil(predicted)))
