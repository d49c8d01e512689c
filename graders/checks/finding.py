"""One static finding: where (the student's cell and line) and why, in words a student can act on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Finding:
    cell: str
    line: int
    what: str
    why: str


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
