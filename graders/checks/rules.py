"""The runtime rules of "vectorized", as pure functions: the grader's counter and the student's self-check
both decide with these, so a student's estimate and the grader's verdict cannot drift apart.

Standard library only: the student's install (``pip install vecgrade``) imports this module too.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

GROWTH = 2  # ops or lines more at a larger size: beyond that, the work grows with the input


def grows(counts: Sequence[int], sizes: Sequence[int]) -> bool:
    """Counts of ops (or lines) at increasing ``sizes``: True when the work grows like a Python loop does.

    A loop over an axis that scales with the size adds at least one op or line per element, so from the
    smallest to the largest size its count grows by about the size's growth or more. A library that
    switches algorithms at some size (``torch.cdist`` above 25 rows) adds a few ops once: that is not a loop,
    and neither is anything within half the size's growth."""
    allowance = max(GROWTH, (sizes[-1] - sizes[0]) // 2)
    return max(counts) - counts[0] > allowance


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
