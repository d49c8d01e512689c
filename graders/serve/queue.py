"""The queue as ``vecgrade status`` shows it: waiting, grading, graded in the last hour, refused (and why)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.markup import escape
from rich.table import Table

from graders.engine.course import Course
from graders.model.inert import inert
from graders.serve.ledger import GRADED, GRADING, QUEUED, REFUSED, SUPERSEDED, Entry, Ledger, ledger_exists, ledger_url
from graders.serve.pages import when

HOUR = 3600.0


@dataclass
class QueueStatus:
    assignment: str
    waiting: list[Entry] = field(default_factory=list)
    grading: list[Entry] = field(default_factory=list)
    graded_last_hour: list[Entry] = field(default_factory=list)
    superseded_last_hour: list[Entry] = field(default_factory=list)
    refused: list[Entry] = field(default_factory=list)  # all of them: the teacher may want to look at each

    def latencies(self) -> list[float]:
        """Seconds from first seen to graded, of the last hour's gradings."""
        return sorted((e.finished_at or e.seen_at) - e.seen_at for e in self.graded_last_hour)


def queue_status(course: Course, assignments: list[str], now: float | None = None) -> list[QueueStatus] | None:
    """Per assignment; None when no service ever ran for this course (nothing is created by looking)."""
    if not ledger_exists(course):
        return None
    now = time.time() if now is None else now
    ledger = Ledger(ledger_url(course))
    try:
        out = []
        for name in assignments:
            s = QueueStatus(name)
            for e in ledger.select([name]):
                if e.state == QUEUED:
                    s.waiting.append(e)
                elif e.state == GRADING:
                    s.grading.append(e)
                elif e.state == GRADED and (e.finished_at or 0) >= now - HOUR:
                    s.graded_last_hour.append(e)
                elif e.state == SUPERSEDED and (e.finished_at or 0) >= now - HOUR:
                    s.superseded_last_hour.append(e)
                elif e.state == REFUSED:
                    s.refused.append(e)
            out.append(s)
        return out
    finally:
        ledger.close()


def _names(found: list[Entry]) -> str:
    return escape(inert(", ".join(e.student for e in found))) or "0"


def queue_table(course: Course, assignments: list[str]) -> tuple[Table, list[str]] | None:
    """``queue_status`` as a table (waiting, grading, graded in the last hour, latency, refused) and one line per
    waiting or refused submission; None when no service ever ran for this course. Student-controlled text (ids, entry
    names, reasons) is ``inert`` everywhere, and escaped as rich markup in the table (the lines print without it)."""
    found = queue_status(course, assignments)
    if found is None:
        return None
    table = Table(title="vecgrade serve: verdicts on submit")
    for col in ("assignment", "waiting", "grading", "graded (last hour)", "latency p50 / max", "refused"):
        table.add_column(col)
    lines = []
    for s in found:
        lat = s.latencies()
        table.add_row(escape(inert(s.assignment)), _names(s.waiting), _names(s.grading), str(len(s.graded_last_hour)),
                      f"{lat[len(lat) // 2]:.1f} s / {lat[-1]:.1f} s" if lat else "-", str(len(s.refused)))
        lines += [inert(f"{s.assignment}: waiting {e.student} (submitted {e.timestamp}"
                        + (f", graded from {when(e.not_before)})" if e.not_before else ")")) for e in s.waiting]
        lines += [inert(f"{s.assignment}: refused {e.entry} (folder of {e.owner or 'unknown'}): {e.reason}")
                  for e in s.refused]
    return table, lines
