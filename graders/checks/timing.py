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


def calibrate(ex, reference: WorkerSession, gen: torch.Generator) -> Calibration:
    timed(reference, draw(ex, ex.name, gen, 1), 600)  # warm-up: first calls pay lazy init
    # one request of the loop version (10-100 ms): a slow moment only lowers the speedup bar, which every
    # answer near it fails on the reference's bar anyway (the reference's speedup is at least 3x the bar)
    loop = timed(reference, draw(ex, ex.loop_name, gen, 1), 600)[0]
    k = 1
    while True:  # grow k until the reference's request takes TARGET seconds (best of two), or k is MAX_K
        one = min(timed(reference, draw(ex, ex.name, gen, k), 600)[0] for _ in range(2))
        if one * k >= TARGET or k >= MAX_K:
            return Calibration(loop, k, one)
        k = min(MAX_K, k * max(2, math.ceil(TARGET / max(one * k, 1e-7))))
