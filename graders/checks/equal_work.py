"""The timed inputs of a shape-only exercise: a new shape of about the same work for every timed call.

An exercise whose arguments hold no tensor (``nhwc_to_nchw_offsets(shape)``: its argument is a shape, not data)
would be timed on the same input in every call if its benchmark arguments were used as they are, and a memo, a
table built at import or a freed output found again could then answer the timed calls without computing them.
So each timed call gets its own draw: every size of at least ``MIN_SIZE`` is scaled by its own random factor in
``[1/SPREAD, SPREAD]``, the factors' product kept at one, and a draw whose element count is not within
``TOLERANCE`` of the benchmark's is drawn again. Every axis stays about as long as at the benchmark size on
average (the factors are log-uniform around one), so a loop over any axis costs what it cost there. The student
and the reference are timed on the same calls (graders.checks.timing), so their work is the same draw for draw.
Data exercises are left as they are: ``sized`` draws fresh data for every call.
"""
from __future__ import annotations

import math

import torch

SPREAD = 2.0  # each size is scaled by a factor in [1/SPREAD, SPREAD]
TOLERANCE = 0.1  # a draw's element count is within this share of the benchmark's
MIN_SIZE = 2  # sizes below this (0 and 1: an empty or a single axis) are kept
TRIES = 64  # draws before the benchmark's own sizes are used (no draw fits: too few sizes to vary)


def shape_only(args: tuple) -> bool:
    """The arguments hold no tensor, and at least one of them is a sequence of ints (a shape)."""
    return not any(isinstance(a, torch.Tensor) for a in args) and any(_is_sizes(a) for a in args)


def equal_work(args: tuple, gen: torch.Generator) -> tuple:
    """``args`` with each shape among them drawn again at about the same element count (see the module)."""
    return tuple(equal_work_sizes(a, gen) if _is_sizes(a) else a for a in args)


def equal_work_sizes(sizes, gen: torch.Generator):
    """A shape of the type of ``sizes`` (tuple, list, torch.Size) whose element count is within ``TOLERANCE`` of
    theirs, each size of at least ``MIN_SIZE`` scaled by a log-uniform factor in ``[1/SPREAD, SPREAD]``."""
    varied = [i for i, s in enumerate(sizes) if s >= MIN_SIZE]
    target = math.prod(sizes)
    if len(varied) < 2 or target == 0:
        return sizes
    for _ in range(TRIES):
        logs = (torch.rand(len(varied), generator=gen, dtype=torch.float64) * 2 - 1) * math.log(SPREAD)
        logs -= logs.mean()  # the factors' product is one: the work stays where it was
        drawn = list(sizes)
        for i, log in zip(varied, logs.tolist(), strict=True):
            drawn[i] = max(1, round(sizes[i] * math.exp(log)))
        if abs(math.prod(drawn) / target - 1) <= TOLERANCE:
            return type(sizes)(drawn)
    return sizes


def _is_sizes(value) -> bool:
    return isinstance(value, (tuple, list, torch.Size)) and len(value) > 0 \
        and all(isinstance(s, int) and not isinstance(s, bool) for s in value)
