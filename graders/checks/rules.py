"""The runtime rules of "vectorized", as pure functions: the grader's counter and the student's self-check
both decide with these, so a student's estimate and the grader's verdict cannot drift apart.

Standard library only: the student's install (``pip install vecgrade``) imports this module too.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

GROWTH = 2  # ops or lines more at a larger size: beyond that, the work grows with the input


def grows(counts: Sequence[int]) -> bool:
    """Counts at increasing sizes: True when any step, or the whole range, adds more than ``GROWTH``."""
    steps = zip(counts, counts[1:], strict=False)
    return any(b > a + GROWTH for a, b in steps) or (len(counts) > 1 and counts[-1] > counts[0] + GROWTH)


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
