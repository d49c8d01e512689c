"""What waits in nbgrader's exchange for the teacher, read from names and times only (never a student's file).

nbgrader's default exchange keeps each submission as ``<Exchange.root>/<course_id>/inbound/<student>+<assignment>+
<timestamp>[+<random>]`` (``ExchangeSubmit``; ``ExchangeCollect._path_to_record`` reads it back the same way) and the
released feedback pages as ``<Exchange.root>/<course_id>/feedback/<hash>.html``. The course's
``nbgrader_config.py`` says where (``Exchange.root``, ``CourseDirectory.course_id``), as nbgrader reads it.
"""
from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from nbgrader.utils import parse_utc

from graders.coursedir.course import Course
from graders.coursedir.paths import exchange_feedback

NBGRADER_DEFAULT_ROOT = "/srv/nbgrader/exchange"  # nbgrader's ``Exchange.root`` when the config sets none


@dataclass(frozen=True)
class Entry:
    """One submission in the exchange's inbound folder, as its name says."""
    name: str
    student: str
    assignment: str
    timestamp: datetime.datetime | None  # naive UTC; None when the name's time is not one


def exchange_course(course: Course) -> Path | None:
    """``<Exchange.root>/<course_id>``, as the course's config says (None without a course id: no exchange)."""
    config = course.config()
    course_id = config.CourseDirectory.get("course_id")
    if not isinstance(course_id, str) or not course_id:
        return None
    root = config.Exchange.get("root")
    return Path(root if isinstance(root, str) and root else NBGRADER_DEFAULT_ROOT) / course_id


def _timestamp(text: str) -> datetime.datetime | None:
    try:
        when = parse_utc(text)
    except Exception:  # noqa: BLE001 - dateutil's many errors all mean "not a time"
        return None
    return when if isinstance(when, datetime.datetime) else None


def parse_entry(name: str) -> Entry | None:
    """An inbound folder's name as nbgrader's collect reads it (``rsplit('+', 3)``: a student id may hold ``+``)."""
    parts = name.rsplit("+", 3)
    if len(parts) < 3:
        return None
    if len(parts) == 4 and _timestamp(parts[2]) is None and _timestamp(parts[3]) is not None:
        parts = [f"{parts[0]}+{parts[1]}", parts[2], parts[3]]  # "<student with +>+<assignment>+<timestamp>"
    return Entry(name, parts[0], parts[1], _timestamp(parts[2]))


def exchange_entries(course: Course) -> list[Entry]:
    """Every submission in the course's exchange inbound folder ([] where there is none or it cannot be read)."""
    where = exchange_course(course)
    if where is None:
        return []
    try:
        names = os.listdir(where / "inbound")
    except OSError:
        return []
    return [e for e in map(parse_entry, sorted(names)) if e is not None]


def released_feedback(course: Course) -> list[Path]:
    """The feedback pages released into the exchange (``nbgrader release_feedback``), [] where there are none."""
    where = exchange_course(course)
    if where is None:
        return []
    folder = exchange_feedback(where)
    try:
        return sorted(folder / n for n in os.listdir(folder) if n.endswith(".html"))
    except OSError:
        return []
