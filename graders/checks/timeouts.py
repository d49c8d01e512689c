"""The timeouts of a grading: a module of its own, without torch, since ``nbgrader_config.py``'s verdict step reads
its defaults when the config is loaded (``vecgrade status`` loads it too)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Timeouts:
    """Seconds one call of the student's function may take, per purpose; ``cell``: per cell while loading."""

    call: float = 10.0
    count: float = 20.0
    bench_min: float = 1.0  # floor of a timed request's deadline: far above an honest request (~20-40 ms)
    cell: float = 30.0
