"""The service's log: one line per finished submission, for the teacher's terminal or the journal."""
from __future__ import annotations

import logging

from graders.model.inert import inert
from graders.serve.ledger import GRADED, Entry

log = logging.getLogger("vecgrade.serve")


def outcome_line(e: Entry) -> str:
    """Who, what, seconds queued (first seen in the exchange -> grading began), seconds grading, and the outcome with
    its reason: one line, whatever the student put in the folder's name or the files' (``inert``)."""
    started = e.started_at if e.started_at is not None else e.finished_at
    queued = max(0.0, (started or e.seen_at) - e.seen_at)
    grading = (e.finished_at - e.started_at) if e.started_at is not None and e.finished_at is not None else 0.0
    outcome = e.state
    if e.state == GRADED and e.score is not None and e.max_score is not None:
        outcome += f" {e.score:g}/{e.max_score:g}"
    if e.reason:
        outcome += f": {e.reason}"
    return (f"student={inert(e.student)} assignment={inert(e.assignment)} queued={queued:.1f}s "
            f"grading={grading:.1f}s outcome={inert(outcome)}")
