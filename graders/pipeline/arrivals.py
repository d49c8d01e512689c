"""The time of record of a submission: when it arrived, as observed on the instructor's side, never as claimed.

nbgrader 0.9.6 dates a submission by the ``timestamp.txt`` inside it, which
the student's side writes: a forged one turned a late submission into an
on-time one, and a garbled one stopped autograde with an internal error.
Here lateness comes from the **time of record**, kept in ``arrivals.csv`` at
the course root (the instructor's folder, which students never write):

- collected by ``nbgrader collect``: the latest change time (``ctime``) of
  anything in the student's inbound folder of the exchange, read just after the
  copy. The kernel sets ``ctime`` on every change (contents, names, modes, links);
  no user can set it back, so a student can only make it later;
- put into ``submitted/`` any other way: the latest ``ctime`` of anything in
  ``submitted/<student>/<assignment>/`` when it is first graded, kept from then
  on (a regrade keeps it; a new collection replaces it).

``timestamp.txt`` is only compared with it: when it is not a time, or differs
by more than ``TOLERANCE``, ``note`` says so. ``install()`` (through
``intake.install()``) makes nbgrader's collect record the time and every nbgrader
command read a submission's time from the record.
"""
from __future__ import annotations

import datetime
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import default
from nbgrader.utils import parse_utc

from graders.model.csvsafe import read_rows, write_rows
from graders.pipeline.nbgrader_seam import patch

ARRIVALS = "arrivals.csv"
FIELDS = ["student", "assignment", "arrived", "how", "claimed"]
TOLERANCE = datetime.timedelta(minutes=2)  # nbgrader submit writes timestamp.txt, then copies the files
CLAIM_CHARS = 100
STAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's own timestamp format, read back by parse_utc


@dataclass
class Arrival:
    student: str
    assignment: str
    arrived: datetime.datetime  # naive UTC, as nbgrader's gradebook keeps times
    how: str                    # "collected" or "found in submitted/"
    claimed: str | None         # timestamp.txt as written (None: there was none, or it was empty)

    def note(self) -> str:
        """What ``timestamp.txt`` says against the time of record, when it is worth a line ("" otherwise)."""
        if self.claimed is None:
            return ""
        where = f"{self.student}/{self.assignment}"
        claim = claimed_time(self.claimed)
        if claim is None:
            return (f"{where}: timestamp.txt is not a time ({self.claimed[:40]!r}); lateness counts from the "
                    f"time of record, {stamp(self.arrived)} ({self.how})")
        gap = self.arrived - claim
        if abs(gap) <= TOLERANCE:
            return ""
        side = "before" if gap > datetime.timedelta(0) else "after"
        return (f"{where}: timestamp.txt says {stamp(claim)}, {_span(abs(gap))} {side} the time of record "
                f"{stamp(self.arrived)} ({self.how}); lateness counts from the time of record")


def stamp(when: datetime.datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def _span(gap: datetime.timedelta) -> str:
    seconds = gap.total_seconds()
    return f"{seconds / 3600:.1f} h" if seconds >= 360 else f"{seconds:.0f} s"


def claimed_time(text: str) -> datetime.datetime | None:
    """``timestamp.txt``'s time as nbgrader reads it (naive UTC), None when it is not one."""
    try:
        when = parse_utc(text.strip())
    except Exception:  # noqa: BLE001 - dateutil raises ValueError, OverflowError, TypeError ...: all mean "not a time"
        return None
    return when if isinstance(when, datetime.datetime) else None


def latest_change(folder: str | Path) -> datetime.datetime:
    """The latest ``ctime`` of ``folder`` and of everything under it (lstat: a link counts, its target does not)."""
    latest = os.lstat(folder).st_ctime
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            latest = max(latest, os.lstat(os.path.join(dirpath, name)).st_ctime)
    return datetime.datetime.fromtimestamp(latest, datetime.timezone.utc).replace(tzinfo=None)


def read_claim(folder: str | Path) -> str | None:
    """The start of ``timestamp.txt`` in ``folder`` as written, None without one (a link is not followed)."""
    path = os.path.join(folder, "timestamp.txt")
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return f"(not a regular file: {path})"
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as f:
            return f.read(CLAIM_CHARS).decode("utf-8", "replace").strip() or None
    except FileNotFoundError:
        return None


def arrivals(root: str | Path) -> dict[tuple[str, str], Arrival]:
    """Every time of record of the course at ``root``, by (student, assignment)."""
    out = {}
    for r in read_rows(Path(root) / ARRIVALS):
        arrived = claimed_time(r.get("arrived", ""))
        if arrived is not None:
            out[r["student"], r["assignment"]] = Arrival(r["student"], r["assignment"], arrived, r.get("how", ""),
                                                         r.get("claimed") or None)
    return out


def save(root: str | Path, arrival: Arrival) -> None:
    """Record (or replace) one time of record."""
    known = arrivals(root)
    known[arrival.student, arrival.assignment] = arrival
    rows = [{"student": a.student, "assignment": a.assignment, "arrived": a.arrived.strftime(STAMP_FORMAT),
             "how": a.how, "claimed": a.claimed or ""}
            for a in sorted(known.values(), key=lambda a: (a.assignment, a.student))]
    write_rows(Path(root) / ARRIVALS, FIELDS, rows)


def time_of_record(root: str | Path, student: str, assignment: str, folder: str | Path) -> Arrival:
    """The recorded arrival of ``folder`` (``submitted/<student>/<assignment>``); recorded now when there is none."""
    found = arrivals(root).get((student, assignment))
    if found is None:
        found = Arrival(student, assignment, latest_change(folder), "found in submitted/", read_claim(folder))
        save(root, found)
    return found


def observed(root: str | Path, student: str, assignment: str, folder: str | Path) -> datetime.datetime:
    """The time of record, or what it would be if recorded now (nothing is written: for views)."""
    found = arrivals(root).get((student, assignment))
    return found.arrived if found is not None else latest_change(folder)


def submission_of(coursedir: CourseDirectory, path: str | Path) -> tuple[str, str] | None:
    """(student, assignment) when ``path`` is a submission folder ``submitted/<student>/<assignment>``."""
    base = Path(coursedir.root, coursedir.submitted_directory).resolve()
    try:
        parts = Path(path).resolve().relative_to(base).parts
    except ValueError:
        return None
    return (parts[0], parts[1]) if len(parts) == 2 and os.path.isdir(path) else None


def recorded_timestamp(coursedir: CourseDirectory, dest_path: str) -> datetime.datetime | None:
    """``CourseDirectory.get_existing_timestamp`` as vecgrade reads it: a submission's time of record; for any other
    folder (autograded/, feedback/: the instructor's copies) its ``timestamp.txt``, None when that is not a time."""
    who = submission_of(coursedir, dest_path)
    if who is not None:
        return time_of_record(coursedir.root, *who, dest_path).arrived
    claim = read_claim(dest_path)
    when = claimed_time(claim) if claim else None
    if claim and when is None:
        coursedir.log.warning("vecgrade: %s/timestamp.txt is not a time (%r); ignored", dest_path, claim[:40])
    return when


def write_stamp(folder: str | Path, when: datetime.datetime) -> None:
    """Put the time of record in ``folder``'s ``timestamp.txt`` (the instructor's copy of a submission)."""
    path = os.path.join(folder, "timestamp.txt")
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "w") as f:
        f.write(when.strftime(STAMP_FORMAT))


def note_arrival(converter, assignment_id: str, student_id: str) -> Arrival | None:
    """Before nbgrader's autograde looks at a submission (and before any check may refuse it, so that fixing
    it later does not move its time): its time of record, recorded now if it has none."""
    folder = converter._format_source(assignment_id, student_id)
    if not os.path.isdir(folder):
        return None
    return time_of_record(converter.coursedir.root, student_id, assignment_id, folder)


def stamp_graded_copy(converter, assignment_id: str, student_id: str) -> None:
    """After nbgrader's autograde set up ``autograded/<student>/<assignment>/``: its ``timestamp.txt`` (the one
    feedback copies) becomes the time of record, and a claim that disagrees is logged."""
    arrival = note_arrival(converter, assignment_id, student_id)
    if arrival is None:
        return
    dest = converter._format_dest(assignment_id, student_id)
    os.makedirs(dest, exist_ok=True)
    write_stamp(dest, arrival.arrived)
    if arrival.note():
        converter.log.warning("vecgrade: TimestampNote: %s", arrival.note())


class RecordingCollect(default.ExchangeCollect):
    """nbgrader's collect, recording each copied submission's time of record (its inbound folder's latest change)."""

    def do_copy(self, src, dest, log=None):
        super().do_copy(src, dest, log)
        who = submission_of(self.coursedir, dest)
        if who is not None:
            arrival = Arrival(*who, latest_change(src), "collected", read_claim(src))
            save(self.coursedir.root, arrival)
            self.log.info("vecgrade: %s/%s arrived %s (%s)", *who, stamp(arrival.arrived), os.path.basename(src))
            if arrival.note():
                self.log.warning("vecgrade: %s", arrival.note())


def install() -> None:
    """Every nbgrader command in this process reads submission times from the record, and collect records them
    (unless ``ExchangeFactory.collect`` is configured to another plugin)."""
    patch("nbgrader.coursedir.CourseDirectory.get_existing_timestamp", recorded_timestamp)
    patch("nbgrader.exchange.ExchangeFactory.collect.default_value", RecordingCollect)
