"""One static finding: where (the student's cell and line), why, in words a student can act on, and its kind.

The kind says what the finding costs (graders.checks.parts):

- ``iteration``: Python-level iteration (loops, comprehensions, recursion, iterating builtins and library calls
  that call Python code once per element): "vectorized";
- ``forbidden``: one of the exercise's forbidden functions: "vectorized";
- ``definition``: the function cannot be judged as written (a syntax error in a cell it needs, a function
  that is not a plain ``def``): "vectorized";
- ``form``: code written in a way the checker does not grade as vectorized (a module of the student's own):
  "vectorized";
- ``state``: a function that keeps state between calls (it writes to a module-level value, a mutable default,
  a closure's cell or a function's attribute, or declares ``global``/``nonlocal``): "vectorized" and "fast",
  since a memo makes the timed calls measure a lookup instead of the compute;
- ``outside``: code outside the checked subset (reflection, ``exec``/``eval``, dunders, foreign modules,
  string evaluation, hooks, Tensor subclasses, files): "vectorized" and "fast", since the process that ran
  unchecked code cannot be trusted for its timing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

ITERATION, FORBIDDEN, DEFINITION, FORM, OUTSIDE = "iteration", "forbidden", "definition", "form", "outside"
STATE = "state"
KINDS = (ITERATION, FORBIDDEN, DEFINITION, FORM, OUTSIDE, STATE)
# the kinds that also cost "fast": the timing of such a program does not measure its compute
COSTS_FAST = (OUTSIDE, STATE)


@dataclass(frozen=True)
class Finding:
    cell: str
    line: int
    what: str
    why: str
    kind: str

    def __post_init__(self) -> None:
        assert self.kind in KINDS, f"unknown finding kind {self.kind!r}"


def summarize(findings: Sequence[Finding], limit: int = 3) -> str:
    """Findings grouped by cell and kind: 'cell 3, lines 4, 5: `for` loop; <why>'."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for f in findings:
        groups.setdefault((f.cell, f.what, f.why), []).append(f.line)
    parts = []
    for (cell, what, why), lines in groups.items():
        where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        parts.append(f"{cell}, {where}: {what}; {why}")
    more = len(parts) - limit
    return "; ".join(parts[:limit]) + (f" (and {more} more)" if more > 0 else "")


def sorted_unique(findings: list[Finding]) -> list[Finding]:
    return sorted(set(findings), key=lambda f: (f.cell, f.line, f.what))
