"""The queue as ``vecgrade status`` shows it: waiting, grading, graded in the last hour, refused (and why)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from graders.course.directory import Course
from graders.serve.ledger import GRADED, GRADING, QUEUED, REFUSED, SUPERSEDED, Entry, Ledger, ledger_exists, ledger_url

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
