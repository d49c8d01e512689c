"""Fair resubmission: one grading per student and assignment per ``Serve.min_interval``, the latest wins.

The window is measured on the service's clock from the start of the student's
last grading, never from a timestamp the student's client wrote. Submissions
that arrive inside it wait; when it opens, only the latest of them (by
nbgrader's timestamp, as ``nbgrader collect`` picks) is graded and the others are
superseded. So resubmitting every minute earns no more gradings than waiting.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nbgrader.utils import parse_utc

from graders.serve.ledger import Entry


@dataclass
class Decision:
    opens: float  # when the student's next grading may begin
    ready: Entry | None = None  # grade this one now
    superseded: list[Entry] = field(default_factory=list)  # older ones, dropped in favour of ``ready``
    waiting: list[Entry] = field(default_factory=list)  # until ``opens``


def latest_first(pending: list[Entry]) -> list[Entry]:
    return sorted(pending, key=lambda e: (parse_utc(e.timestamp), e.seen_at, e.entry), reverse=True)


def next_opening(last_started: float | None, interval: float) -> float:
    return float("-inf") if last_started is None else last_started + interval


def decide(pending: list[Entry], last_started: float | None, interval: float, now: float) -> Decision:
    """What to do with one student's queued submissions of one assignment (``pending``, non-empty)."""
    opens = next_opening(last_started, interval)
    if now < opens:
        return Decision(opens, waiting=latest_first(pending))
    latest, *older = latest_first(pending)
    return Decision(opens, ready=latest, superseded=older)
