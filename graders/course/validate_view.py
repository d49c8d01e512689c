"""What ``vecgrade validate`` prints: one table per assignment that fits 100 columns, as markdown, or as CSV.

Each column is defined once (``COLUMNS``: a short header, a long header, what it
shows); the terminal table and markdown use the short headers and explain them in
``LEGEND``, the CSV uses the long ones. Exercise names are never cut: the table
folds other columns first.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Callable, Sequence

from rich import box
from rich.table import Table

from graders.checks.parts import Verdict
from graders.course.validate import Row
from graders.model.exercise import PARTS


def _marks(verdicts: dict[str, Verdict] | None, parts: Sequence[str]) -> tuple[bool, ...] | None:
    return None if verdicts is None else tuple(verdicts[p].passed for p in parts)


@dataclass(frozen=True)
class Column:
    short: str
    long: str
    value: Callable[[Row], object]


COLUMNS = (
    Column("exercise", "exercise", lambda r: r.exercise.name),
    Column("ref", "reference passes correct/vectorized/fast", lambda r: _marks(r.reference, PARTS)),
    Column("alts", "alternatives passing all parts",
           lambda r: f"{sum(all(v.passed for v in a.values()) for a in r.alternatives)}/{len(r.alternatives)}"),
    Column("loop", "loop version passes vectorized", lambda r: _marks(r.loop, ("vectorized",))),
    Column("half", "half loop passes vectorized/fast", lambda r: _marks(r.half_loop, ("vectorized", "fast"))),
    Column("list", "list version passes vectorized/fast", lambda r: _marks(r.python_list, ("vectorized", "fast"))),
    Column("stub", "stub passes correct", lambda r: _marks(r.stub, ("correct",))),
    Column("speedup", "reference speedup over the loop version", lambda r: r.speedup),
    Column("needed", "speedup threshold", lambda r: float(r.exercise.speedup)),
    Column("half ×", "half loop time over the reference's", lambda r: r.half_loop_factor),
    Column("list ×", "list version time over the reference's", lambda r: r.python_list_factor),
    Column("result", "problems", lambda r: "; ".join(r.problems) or "ok"),
)

LEGEND = ("✓ passes, ✗ fails. ref: the reference on correct/vectorized/fast (must pass all); alts: alternatives "
          "that pass all three parts; loop: the loop version on vectorized (must fail); half, list: the half loop "
          "and the Python-list version on vectorized/fast (must fail both); stub: the stub on correct (must fail). "
          "speedup: the reference's over the loop version, against the exercise's threshold (needed); half ×, "
          "list ×: their time over the reference's (failing fast means over ref_factor, 3x by default, or a "
          "speedup below needed). - : not measured (stopped early as far slower, not timed because it was not "
          "correct, or no half loop).")


def _factor(x: object) -> str:
    if x is None:
        return "-"
    assert isinstance(x, float)
    return f"{x:.1f}x" if x < 100 else f"{x:.0f}x"


def _text(column: Column, row: Row) -> str:
    """A cell as the table and markdown show it."""
    value = column.value(row)
    if column.short == "result":
        return "ok" if not row.problems else f"{len(row.problems)} problem{'s' * (len(row.problems) > 1)}"
    if isinstance(value, tuple):
        return "".join("✓" if passed else "✗" for passed in value)
    if column.short == "needed":
        return f"{value:g}x"
    if isinstance(value, float) or value is None:
        return _factor(value)
    return str(value)


def _csv_value(column: Column, row: Row) -> str:
    """A cell as the CSV holds it: pass/fail words, bare numbers, empty where nothing was measured."""
    value = column.value(row)
    if isinstance(value, tuple):
        return "/".join("pass" if passed else "fail" for passed in value)
    if isinstance(value, float):
        return str(round(value, 3))
    return "" if value is None else str(value)


def table(assignment: str, rows: list[Row]) -> Table:
    """The terminal view: no outer border, one-space gaps, exercise names never cut."""
    out = Table(title=f"vecgrade validate {assignment}", box=box.SIMPLE_HEAD, padding=(0, 0), title_justify="left")
    width = max([len(r.exercise.name) for r in rows] + [len("exercise")])
    for column in COLUMNS:
        if column.short == "exercise":
            out.add_column(column.short, min_width=width, no_wrap=True)
        else:
            out.add_column(column.short, justify="left" if column.short == "result" else "right",
                           no_wrap=column.short == "result")
    for r in rows:
        cells = [_text(c, r) for c in COLUMNS]
        cells[-1] = f"[red]{cells[-1]}[/red]" if r.problems else f"[green]{cells[-1]}[/green]"
        out.add_row(*cells)
    return out


def markdown(assignment: str, rows: list[Row]) -> str:
    """A GitHub-flavoured table per assignment, the problems listed under it, the legend last."""
    head = [c.short for c in COLUMNS]
    lines = [f"### {assignment}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_text(c, r) for c in COLUMNS) + " |" for r in rows]
    lines += [""] + [f"- {r.exercise.name}: {problem}" for r in rows for problem in r.problems]
    return "\n".join(lines).rstrip() + "\n\n" + LEGEND + "\n"


def csv_header() -> str:
    return _csv_line(["assignment"] + [c.long for c in COLUMNS])


def csv_rows(assignment: str, rows: list[Row]) -> str:
    return "".join(_csv_line([assignment] + [_csv_value(c, r) for c in COLUMNS]) for r in rows)


def _csv_line(cells: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()
