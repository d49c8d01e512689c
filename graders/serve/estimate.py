"""A queued submission's place in the queue and how long until its feedback, in words a student reads.

The place counts the submissions not finished (queued or grading, of the
assignments this service serves) that the service saw before this one, plus
this one. The estimate comes from the gradings this service observed: the
middle value (median) of the last ``RECENT`` gradings' durations (grading began
to feedback released), times the number of rounds before this one's turn (the
service grades ``workers`` submissions at a time). Without an observed grading
there is no estimate, and the page says so. It is the time of the queue as it
stood: a queue that grows behind this one does not delay it, one whose
submissions take longer does.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

RECENT = 20  # gradings the estimate reads: recent enough to follow a slower or faster assignment


@dataclass(frozen=True)
class Estimate:
    place: int              # 1: next to be graded
    workers: int            # submissions graded at a time
    typical: float | None   # median seconds of one grading, None before any was observed
    observed: int           # how many gradings ``typical`` comes from

    @property
    def rounds(self) -> int:
        """Gradings of ``workers`` submissions at a time until this one's is done (its own included)."""
        return math.ceil(self.place / max(1, self.workers))

    @property
    def seconds(self) -> float | None:
        return None if self.typical is None else self.rounds * self.typical

    def words(self) -> str:
        """One paragraph for the student: place, estimate, and how the estimate was made."""
        ahead = self.place - 1
        where = (f"number {self.place} in the queue ({ahead} submission{'s' if ahead != 1 else ''} ahead of yours)"
                 if ahead else "next in the queue")
        if self.typical is None or self.seconds is None:
            return (f"{where}. No grading has finished on this service yet, so there is no estimate of the wait; "
                    "this page is replaced by your feedback once your submission is graded.")
        at_once = f"{self.workers} submissions are graded at a time" if self.workers > 1 else \
            "one submission is graded at a time"
        return (f"{where}. Estimated wait for your feedback: about {duration(self.seconds)}. How this is estimated: "
                f"of the last {self.observed} grading{'s' if self.observed != 1 else ''} here, the middle one took "
                f"{duration(self.typical)}; {at_once}, so yours should be done after {self.rounds} such "
                f"round{'s' if self.rounds != 1 else ''}. This page is replaced by your feedback once your "
                "submission is graded.")


def duration(seconds: float) -> str:
    """Seconds as a student reads them: "40 seconds", "3 minutes", "1.5 hours"."""
    if seconds < 90:
        return f"{max(1, round(seconds))} second{'s' if round(seconds) > 1 else ''}"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} minutes"
    return f"{seconds / 3600:.1f} hours"


def estimate(place: int, workers: int, durations: list[float]) -> Estimate:
    """``place`` in the queue; ``durations``: the recent gradings' seconds (at most ``RECENT`` are read)."""
    recent = durations[:RECENT]
    return Estimate(place, workers, statistics.median(recent) if recent else None, len(recent))
