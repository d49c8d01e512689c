"""The runtime rules of "vectorized", as pure functions: the grader's counter and the student's self-check
both decide with these, so a student's estimate and the grader's verdict cannot drift apart.

Standard library only: the student's install (``pip install vecgrade``) imports this module too.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

GROWTH = 2  # ops or lines more at a larger size: beyond that, the work grows with the input


def one_step(counts: Sequence[int]) -> bool:
    """The counts change once, upward, between two neighbouring sizes and never again (a library that switches
    algorithms at some size, as ``torch.cdist`` does above 25 rows), as opposed to rising step after step."""
    steps = [b - a for a, b in zip(counts[:-1], counts[1:], strict=True)]
    return len(steps) >= 2 and min(steps) >= 0 and sum(1 for d in steps if d > 0) == 1


def grows(counts: Sequence[int], flat_after: int | None = None) -> bool:
    """Counts of ops (or lines) at increasing sizes: True when the work grows like a Python loop does.

    The rule, exactly: the work grows when the count at any larger size exceeds the count at the smallest by
    more than ``GROWTH``, unless the rise is ``one_step`` and ``flat_after`` -- the count at twice the largest
    size -- equals the count at the largest (a one-time switch stays flat; a loop over chunks, even unrolled
    into ``if`` blocks, rises again as the size doubles)."""
    if max(counts) - counts[0] <= GROWTH:
        return False
    return not (flat_after is not None and one_step(counts) and flat_after == counts[-1])


def op_core(name: str) -> str:
    """An op's name without the marks of internal variants: `_safe_softmax` -> `softmax`."""
    name = name.lstrip("_")
    for prefix in ("safe_", "fused_", "masked_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def forbidden_ops_used(patterns: Sequence[str], ops: Iterable[str]) -> list[str]:
    """Ops matching a pattern, as written or as their core name (`_softmax` also forbids `_safe_softmax`)."""
    cores = [op_core(p) for p in patterns]
    return sorted(op for op in ops if any(fnmatch.fnmatchcase(op, p) or fnmatch.fnmatchcase(op_core(op), c)
                                          for p, c in zip(patterns, cores, strict=True)))
