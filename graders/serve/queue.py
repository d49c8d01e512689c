"""The queue as ``vecgrade status`` shows it: waiting, grading, graded in the last hour, collected after the due date,
refused (and why). A student with several submissions waiting is named once, with their number."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.markup import escape
from rich.table import Table

from graders.coursedir.course import Course
from graders.model.inert import inert
from graders.serve.ledger import (
    GRADED,
    GRADING,
    LATE,
    QUEUED,
    REFUSED,
    SUPERSEDED,
    Entry,
    Ledger,
    ledger_exists,
    ledger_url,
)
from graders.serve.pages import when

HOUR = 3600.0


@dataclass
class QueueStatus:
    assignment: str
    waiting: list[Entry] = field(default_factory=list)
    grading: list[Entry] = field(default_factory=list)
    graded_last_hour: list[Entry] = field(default_factory=list)
    superseded_last_hour: list[Entry] = field(default_factory=list)
    late: list[Entry] = field(default_factory=list)  # collected for the teacher's batch after the due date: all
    refused: list[Entry] = field(default_factory=list)  # all of them: the teacher may want to look at each

    def latencies(self) -> list[float]:
        """Seconds from first seen to graded, of the last hour's gradings."""
        return sorted((e.finished_at or e.seen_at) - e.seen_at for e in self.graded_last_hour)


def queue_status(course: Course, assignments: list[str], now: float | None = None) -> list[QueueStatus] | None:
    """Per assignment; None when no service ever ran for this course (nothing is created by looking). One query:
    the graded and superseded entries of more than an hour ago are left in the database."""
    if not ledger_exists(course):
        return None
    now = time.time() if now is None else now
    ledger = Ledger(ledger_url(course))
    try:
        out = {name: QueueStatus(name) for name in assignments}
        for e in ledger.current(assignments, since=now - HOUR):
            s = out[e.assignment]
            column = {QUEUED: s.waiting, GRADING: s.grading, GRADED: s.graded_last_hour,
                      SUPERSEDED: s.superseded_last_hour, LATE: s.late, REFUSED: s.refused}.get(e.state)
            if column is not None:
                column.append(e)
        return list(out.values())
    finally:
        ledger.close()


def by_student(found: list[Entry]) -> dict[str, list[Entry]]:
    """``found`` grouped by student, in the order each student first appears."""
    out: dict[str, list[Entry]] = {}
    for e in found:
        out.setdefault(e.student, []).append(e)
    return out


def _names(found: list[Entry]) -> str:
    """Each student once, with the number of their entries when more than one."""
    shown = [s if len(es) == 1 else f"{s} ({len(es)})" for s, es in by_student(found).items()]
    return escape(inert(", ".join(shown))) or "0"


def _waiting_line(assignment: str, student: str, found: list[Entry]) -> str:
    times = ", ".join(e.timestamp + (f", graded from {when(e.not_before)}" if e.not_before else "") for e in found)
    return inert(f"{assignment}: waiting {student} (submitted {times})")


def queue_table(course: Course, assignments: list[str]) -> tuple[Table, list[str]] | None:
    """``queue_status`` as a table (waiting, grading, graded in the last hour, latency, collected late, refused) and
    one line per waiting student and per late or refused submission; None when no service ever ran for this course.
    Student-controlled text (ids, entry names, reasons) is ``inert`` everywhere, and escaped as rich markup in the
    table (the lines print without it)."""
    found = queue_status(course, assignments)
    if found is None:
        return None
    table = Table(title="vecgrade serve: verdicts on submit")
    for col in ("assignment", "waiting", "grading", "graded (last hour)", "latency p50 / max", "collected late",
                "refused"):
        table.add_column(col)
    lines = []
    for s in found:
        lat = s.latencies()
        table.add_row(escape(inert(s.assignment)), _names(s.waiting), _names(s.grading), str(len(s.graded_last_hour)),
                      f"{lat[len(lat) // 2]:.1f} s / {lat[-1]:.1f} s" if lat else "-", str(len(s.late)),
                      str(len(s.refused)))
        lines += [_waiting_line(s.assignment, student, es) for student, es in by_student(s.waiting).items()]
        lines += [inert(f"{s.assignment}: collected late {e.entry} ({e.student}), for your grading: not graded on "
                        "submit") for e in s.late]
        lines += [inert(f"{s.assignment}: refused {e.entry} (folder of {e.owner or 'unknown'}): {e.reason}")
                  for e in s.refused]
    return table, lines
