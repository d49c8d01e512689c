"""Admission: each new inbound entry is recorded once, as ``queued`` or as ``refused`` with the reason.

An entry is judged once ``nbgrader submit`` has finished writing it (or a
minute after it appeared). It is refused, before anything of it is collected,
when its name is not nbgrader's, when its student already has
``Serve.max_pending`` submissions waiting, when its folder or a file in it is not
owned by the student it names (``Serve.check_owner``), holds a symlink or special
file, passes a cap (name lengths, depth, files, bytes: counted before anything is
copied; cells of a notebook: counted before nbformat reads it), holds no notebook
or a notebook that is not JSON or not one of the assignment's. Anything else that
goes wrong while admitting one entry (an error of the host, a bug) refuses that
entry with the reason, and the others are admitted as usual. After nbgrader's due
date (``Serve.after_due`` off) it is collected for the teacher's batch and not
graded on submit: recorded ``late``, not refused (``refused`` when even the
collect failed). A queued entry gets a page at once: its place in the queue and
the estimated wait (``estimate``), replaced by its feedback once graded. A
refused entry gets a feedback page with its one-line reason and never touches
the student's submission in ``submitted/`` or the gradebook; its staged copy is
removed at once (a queued one's when it ends). Queued times count from the
first scan that listed the entry.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Callable

from nbgrader.utils import parse_utc

from graders.course.lock import gradebook_lock
from graders.coursedir.course import Course
from graders.model.inert import inert
from graders.pipeline.refusals import known_notebooks
from graders.pipeline.safecopy import Caps, Refused, owner, stage
from graders.serve import pages
from graders.serve.estimate import RECENT, estimate
from graders.serve.ledger import LATE, OPEN, QUEUED, REFUSED, Entry, Ledger
from graders.serve.logline import log, outcome_line
from graders.serve.steps import StepFailed, collect, due_date
from graders.serve.watcher import (
    SETTLE_SECONDS,
    InboundName,
    check_notebooks,
    is_complete,
    is_folder,
    parse_name,
    read_secret,
    scan,
)

PAGES_MAX, PAGE_SCAN_MAX = 20, 1000  # notebooks given a page; entries of an inbound folder looked at to find them


def _is_text(name: str) -> bool:
    try:
        name.encode()
        return True
    except UnicodeEncodeError:
        return False


def _notebook_ids(folder: Path) -> list[str]:
    """The notebooks ``nbgrader fetch_feedback`` looks for a page of, bounded: at most ``PAGES_MAX`` of them, found
    among the first ``PAGE_SCAN_MAX`` entries (a refused entry may hold a million files)."""
    found: list[str] = []
    with os.scandir(folder) as entries:
        for i, entry in enumerate(entries):
            if i >= PAGE_SCAN_MAX or len(found) >= PAGES_MAX:
                break
            if entry.name.endswith(".ipynb") and entry.is_file(follow_symlinks=False) and _is_text(entry.name):
                found.append(entry.name[:-len(".ipynb")])
    return sorted(found)


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


class Admission:
    Refused = Refused

    def __init__(self, course: Course, ledger: Ledger, exchange: Path, staging: Path, served: list[str],
                 check_owner: bool, after_due: bool, max_bytes: int | Caps, tz: str,
                 clock: Callable[[], float] = time.time, max_pending: int = 3, workers: int = 1):
        self.course, self.ledger, self.exchange, self.staging = course, ledger, exchange, staging
        self.inbound = exchange / "inbound"
        self.served, self.check_owner, self.after_due = served, check_owner, after_due
        self.caps = max_bytes if isinstance(max_bytes, Caps) else Caps(max_bytes)
        self.tz, self.clock, self.max_pending, self.workers = tz, clock, max_pending, workers
        self.known = ledger.known()
        self.others: set[str] = set()  # entries of assignments this service does not serve
        self.first_seen: dict[str, float] = {}  # this service's clock, at the first scan that listed the entry
        self.retry_at: dict[str, float] = {}  # entries whose refusal could not even be recorded: tried again then
        self.course_id = exchange.name

    def admit_new(self) -> None:
        """Admit each new entry; one entry never stops the others or the service: whatever goes wrong while
        admitting it is recorded as its refusal, with the reason in one line."""
        now = self.clock()
        for name in scan(self.inbound):
            if name in self.known or name in self.others or self.retry_at.get(name, now) > now:
                continue
            if not _is_text(name):  # bytes that are not UTF-8: no nbgrader client writes it, no ledger stores it
                log.warning("skipped an inbound entry whose name is not UTF-8: %s", inert(name))
                self.others.add(name)
                continue
            self.first_seen.setdefault(name, now)
            try:
                self.admit(name)
            except Exception as exc:  # noqa: BLE001 - a bug or an error of the host: refused, and the loop goes on
                log.exception("%s: could not be admitted", inert(name))
                parsed = parse_name(name)
                try:
                    self._record(name, parsed.student if parsed else name.split("+")[0],
                                 parsed.assignment if parsed else "", parsed.timestamp if parsed else "", REFUSED,
                                 f"the service could not admit this submission ({inert(_first_line(exc))}): submit "
                                 "again; if it happens again, tell your teacher")
                except Exception:  # noqa: BLE001 - not even recorded (the ledger is down): tried again later
                    log.exception("%s: could not record its refusal; trying again in %g s", inert(name),
                                  SETTLE_SECONDS)
                    self.retry_at[name] = now + SETTLE_SECONDS
                    self.discard(name)

    def admit(self, name: str) -> None:
        parsed = parse_name(name)
        if parsed is None:
            self._record(name, name.split("+")[0], "", "", REFUSED, "not an nbgrader submission "
                         "(<student>+<assignment>+<timestamp>+<random>)")
            return
        if parsed.assignment not in self.served:
            self.others.add(name)  # left in the queue, for a service of that assignment
            return
        if not is_complete(self.inbound / name) and \
                self.clock() - self.first_seen.setdefault(name, self.clock()) < SETTLE_SECONDS:
            return  # nbgrader submit is still writing it
        try:
            who = owner(self.inbound / name)
        except OSError:
            who = ""
        try:
            self._within_pending(parsed)  # before anything is copied: the disk holds at most this many per student
            staged_root, staged = self._stage(parsed)
            due = due_date(self.course, parsed.assignment, parsed.student)
        except Refused as exc:
            self._record(name, parsed.student, parsed.assignment, parsed.timestamp, REFUSED, str(exc), who)
            return
        if due is not None and parse_utc(parsed.timestamp) > due and not self.after_due:
            self._collect_late(parsed, staged_root, staged, due, who)
            return
        self._record(name, parsed.student, parsed.assignment, parsed.timestamp, QUEUED, "", who)

    def _within_pending(self, parsed: InboundName) -> None:
        """At most ``Serve.max_pending`` submissions of one student wait to be graded (all assignments)."""
        waiting = self.ledger.select(self.served, [QUEUED], parsed.student)
        if len(waiting) >= self.max_pending:
            raise Refused(f"you already have {len(waiting)} submission{'s' if len(waiting) != 1 else ''} waiting to "
                          f"be graded, the most that may wait at once: this one is not graded; submit again once "
                          "your waiting submission has been graded (its feedback page says when)")

    def _collect_late(self, parsed: InboundName, staged_root: Path, staged: Path, due, who: str) -> None:
        """Past the due date: collected as ``nbgrader collect`` would, for the teacher's batch; not graded."""
        state, reason = LATE, (f"submitted after the due date ({due:%Y-%m-%d %H:%M:%S} UTC): collected for your "
                               "teacher's grading, not graded on submit")
        try:
            with gradebook_lock(self.course, "vecgrade serve"), self.course.api() as api:
                collect(api, self.course, staged_root, staged, parsed.assignment, parsed.student)
        except StepFailed as exc:  # not even collected: the teacher must look at it, as at any refusal
            state, reason = REFUSED, f"submitted after the due date ({due:%Y-%m-%d %H:%M:%S} UTC), and {exc}"
        self._record(parsed.name, parsed.student, parsed.assignment, parsed.timestamp, state, reason, who)

    def _record(self, name: str, student: str, assignment: str, timestamp: str, state: str, reason: str,
                who: str = "") -> None:
        seen = self.first_seen.get(name, self.clock())
        if state == REFUSED:  # the page first: a crash before the record admits the entry again, page and all
            self.page(name, assignment, timestamp, "Not graded", f"not graded: {reason}")
        elif state == LATE:
            self.page(name, assignment, timestamp, "Collected after the due date", reason)
        elif state == QUEUED:
            self.page(name, assignment, timestamp, "Queued", self.queued_words(seen))
        self.ledger.add(name, student, assignment, timestamp, who, state, reason, seen_at=seen)
        self.known.add(name)
        self.first_seen.pop(name, None)
        self.retry_at.pop(name, None)
        if state not in OPEN:
            self.discard(name)  # an entry that ended leaves no copy behind
            log.info(outcome_line(self.ledger.get(name)))
        else:
            log.info("student=%s assignment=%s queued (%s)", inert(student), inert(assignment), inert(name))

    def queued_words(self, seen: float) -> str:
        """What the queued page says: when it was received, its place in the queue and the estimated wait."""
        place = self.ledger.ahead_of(self.served, seen) + 1
        found = estimate(place, self.workers, self.ledger.grading_times(self.served, RECENT))
        return f"received at {pages.when(seen, self.tz)}, {found.words()}"

    def _paths(self, name: str) -> tuple[Path, Path]:
        root = self.staging / name
        return root, root / self.course_id / "inbound" / name

    def discard(self, name: str) -> None:
        """Remove the entry's staged copy (it was graded, refused or superseded: nothing more is read from it)."""
        shutil.rmtree(self._paths(name)[0], ignore_errors=True)

    def _stage(self, parsed: InboundName) -> tuple[Path, Path]:
        """A private checked copy of the entry, laid out as an exchange root that holds only it; every cap is
        counted before anything is copied, and no copy is left behind by a refusal."""
        root, staged = self._paths(parsed.name)
        try:
            stage(self.inbound / parsed.name, staged, parsed.student, self.check_owner, self.caps)
            check_notebooks(staged, sorted(known_notebooks(self.course.db_url, parsed.assignment) or ()),
                            self.caps.max_cells)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        return root, staged

    def staged(self, e: Entry) -> tuple[Path, Path]:
        """The entry's checked copy (made again, and checked again, after a restart)."""
        root, staged = self._paths(e.entry)
        if staged.is_dir():
            return root, staged
        parsed = parse_name(e.entry)
        if parsed is None:
            raise Refused("not an nbgrader submission")
        return self._stage(parsed)

    def page_for(self, e: Entry, title: str, line: str) -> None:
        self.page(e.entry, e.assignment, e.timestamp, title, line)

    def page(self, name: str, assignment: str, timestamp: str, title: str, line: str) -> None:
        """One line as this submission's feedback, where ``nbgrader fetch_feedback`` finds it (never raises: a page
        that cannot be written is logged, and the entry's record goes on)."""
        try:
            _, staged = self._paths(name)
            folder = self.inbound / name if is_folder(self.inbound / name) else staged
            secret = read_secret(folder)
            notebooks = _notebook_ids(folder) if is_folder(folder) else []
            if not secret or not notebooks:
                return  # nothing the student's client could find a page by
            pages.publish(self.exchange, secret, notebooks,
                          pages.page(f"{assignment}: {title}", f"Submission of {timestamp}: {line}"))
        except Exception as exc:  # noqa: BLE001 - the page is the student's courtesy; the record is what counts
            log.warning("%s: no feedback page (%s)", inert(name), inert(_first_line(exc)))
