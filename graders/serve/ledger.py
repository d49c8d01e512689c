"""The ledger: what happened to each inbound submission, the seed of each assignment, the verdicts kept.

The inbound folder is the queue; the ledger records each of its entries once
(by folder name) as ``queued``, ``grading``, ``graded``, ``refused``,
``late`` (after the due date: collected for the teacher's grading, not graded
on submit) or ``superseded`` (a later submission of the same student was graded
instead), with the reason. Each state is committed before the step it announces, so a
service killed at any moment finds, at its next start, every entry it had not
finished still ``queued`` or ``grading`` and does it again; every step is
idempotent. It lives in the gradebook's database when that is PostgreSQL (tables
``vecgrade_serve_*``), else in a SQLite file beside ``gradebook.db``.
"""
from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    func,
    inspect,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Engine

from graders.coursedir.course import Course
from graders.model.verdict import Verdict, settled

QUEUED, GRADING, GRADED, REFUSED, SUPERSEDED = "queued", "grading", "graded", "refused", "superseded"
LATE = "late"  # after the due date: collected into submitted/ for the teacher's batch, not graded on submit
OPEN = (QUEUED, GRADING)  # not finished: a restart takes them up again
LEDGER_FILE = "vecgrade-serve.db"

metadata = MetaData()
entries = Table(
    "vecgrade_serve_entries", metadata,
    Column("entry", String(512), primary_key=True),  # the inbound folder's name
    Column("student", String(255), nullable=False, index=True),
    Column("assignment", String(255), nullable=False, index=True),
    Column("timestamp", String(64), nullable=False, default=""),  # nbgrader's, from the folder's name
    Column("owner", String(255), nullable=False, default=""),
    Column("state", String(16), nullable=False, index=True),
    Column("reason", Text, nullable=False, default=""),
    Column("seen_at", Float, nullable=False),  # this service's clock, not the student's
    Column("not_before", Float),  # set while it waits for the student's grading window
    Column("started_at", Float),
    Column("finished_at", Float),
    Column("attempts", Integer, nullable=False, default=0),
    Column("score", Float),
    Column("max_score", Float),
)
seeds = Table(
    "vecgrade_serve_seeds", metadata,
    Column("assignment", String(255), primary_key=True),
    Column("seed", BigInteger, nullable=False),
    Column("drawn_at", Float, nullable=False),
)
kept_verdicts = Table(
    "vecgrade_serve_verdicts", metadata,
    Column("student", String(255), primary_key=True),
    Column("assignment", String(255), primary_key=True),
    Column("exercise", String(255), primary_key=True),
    Column("program_key", String(64), primary_key=True),
    Column("verdicts", Text, nullable=False),  # {part: Verdict.to_json()} (graders.model.verdict)
    Column("entry", String(512), nullable=False),
    Column("at", Float, nullable=False),
)


@dataclass(frozen=True)
class Entry:
    """One inbound submission as the ledger knows it."""
    entry: str
    student: str
    assignment: str
    timestamp: str
    owner: str
    state: str
    reason: str
    seen_at: float
    not_before: float | None
    started_at: float | None
    finished_at: float | None
    attempts: int
    score: float | None
    max_score: float | None


def ledger_url(course: Course) -> str:
    """The gradebook's own database unless it is SQLite; then a SQLite file beside it."""
    url = course.db_url
    if url.startswith("sqlite:"):
        path = Path(url[len("sqlite:///"):]) if url.startswith("sqlite:///") else course.root / "gradebook.db"
        return "sqlite:///" + str(path.with_name(LEDGER_FILE))
    return url


def ledger_exists(course: Course) -> bool:
    """Whether a service ever ran for this course (reading never creates a ledger)."""
    url = ledger_url(course)
    if url.startswith("sqlite:///"):
        if not Path(url[len("sqlite:///"):]).exists():
            return False
    engine = create_engine(url)
    try:
        return inspect(engine).has_table(entries.name)
    finally:
        engine.dispose()


class Ledger:
    def __init__(self, url: str):
        self.engine: Engine = create_engine(url)
        metadata.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def _rows(self, query) -> list[Entry]:
        with self.engine.connect() as conn:
            return [Entry(**row._mapping) for row in conn.execute(query)]

    def add(self, entry: str, student: str, assignment: str, timestamp: str, owner: str, state: str = QUEUED,
            reason: str = "", seen_at: float | None = None) -> None:
        """Record a new entry; ``seen_at``: when the service first saw it in the exchange (default: now)."""
        now = time.time()
        with self.engine.begin() as conn:
            conn.execute(entries.insert().values(
                entry=entry, student=student, assignment=assignment, timestamp=timestamp, owner=owner,
                state=state, reason=reason, seen_at=now if seen_at is None else min(seen_at, now), attempts=0,
                finished_at=None if state in OPEN else now))

    def known(self) -> set[str]:
        with self.engine.connect() as conn:
            return set(conn.execute(select(entries.c.entry)).scalars())

    def get(self, entry: str) -> Entry:
        found = self._rows(select(entries).where(entries.c.entry == entry))
        if not found:
            raise KeyError(entry)
        return found[0]

    def set(self, entry: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(entries).where(entries.c.entry == entry).values(**values))

    def start(self, entry: str) -> None:
        """Announce a grading before it begins: a crash leaves the entry ``grading``, counted as an attempt."""
        with self.engine.begin() as conn:
            conn.execute(update(entries).where(entries.c.entry == entry).values(
                state=GRADING, started_at=time.time(), attempts=entries.c.attempts + 1))

    def finish(self, entry: str, state: str, reason: str = "", score: float | None = None,
               max_score: float | None = None) -> None:
        self.set(entry, state=state, reason=reason, finished_at=time.time(), score=score, max_score=max_score,
                 not_before=None)

    def select(self, assignments: Iterable[str] | None = None, states: Iterable[str] | None = None,
               student: str | None = None, since: float | None = None) -> list[Entry]:
        query = select(entries).order_by(entries.c.seen_at, entries.c.entry)
        if assignments is not None:
            query = query.where(entries.c.assignment.in_(list(assignments)))
        if states is not None:
            query = query.where(entries.c.state.in_(list(states)))
        if student is not None:
            query = query.where(entries.c.student == student)
        if since is not None:
            query = query.where(entries.c.finished_at >= since)
        return self._rows(query)

    def current(self, assignments: Iterable[str], since: float) -> list[Entry]:
        """What ``vecgrade status`` shows: every entry not finished, late or refused, and the others finished since
        ``since`` (one query, whatever the history holds)."""
        query = select(entries).where(entries.c.assignment.in_(list(assignments)),
                                      or_(entries.c.state.in_([*OPEN, LATE, REFUSED]), entries.c.finished_at >= since))
        return self._rows(query.order_by(entries.c.seen_at, entries.c.entry))

    def ahead_of(self, assignments: Iterable[str], seen_at: float) -> int:
        """How many entries not finished (queued or grading) the service saw before ``seen_at``."""
        query = select(func.count()).select_from(entries).where(
            entries.c.assignment.in_(list(assignments)), entries.c.state.in_(list(OPEN)), entries.c.seen_at <= seen_at)
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar() or 0)

    def grading_times(self, assignments: Iterable[str], last: int) -> list[float]:
        """Seconds from grading began to finished, of the ``last`` gradings (most recent first)."""
        query = (select(entries.c.finished_at - entries.c.started_at)
                 .where(entries.c.assignment.in_(list(assignments)), entries.c.state == GRADED,
                        entries.c.started_at.is_not(None), entries.c.finished_at.is_not(None))
                 .order_by(entries.c.finished_at.desc()).limit(last))
        with self.engine.connect() as conn:
            return [float(x) for x in conn.execute(query).scalars()]

    def last_graded(self, student: str, assignment: str) -> Entry | None:
        """The student's latest graded submission of ``assignment`` (by when its grading began)."""
        graded = self.select([assignment], [GRADED], student)
        return max(graded, key=lambda e: e.started_at or 0.0) if graded else None

    def seed(self, assignment: str, fixed: int | None = None) -> int:
        """The assignment's hidden-case seed: drawn once (or ``fixed``, the course's own) and kept."""
        with self.engine.begin() as conn:
            found = conn.execute(select(seeds.c.seed).where(seeds.c.assignment == assignment)).scalar()
            if found is not None and (fixed is None or found == fixed):
                return int(found)
            seed = secrets.randbits(48) if fixed is None else fixed
            if found is None:
                conn.execute(seeds.insert().values(assignment=assignment, seed=seed, drawn_at=time.time()))
            else:
                conn.execute(update(seeds).where(seeds.c.assignment == assignment).values(seed=seed))
            return seed

    def verdicts(self, assignment: str) -> dict[str, dict[str, Verdict]]:
        """Every verdict kept for ``assignment``: program key -> {part: verdict}. A row this version cannot read
        as a settled verdict (an older ledger's text) is left out: that program is graded again."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(kept_verdicts).where(kept_verdicts.c.assignment == assignment))
            out: dict[str, dict[str, Verdict]] = {}
            for r in rows:
                try:
                    parts = {p: Verdict.from_json(v) for p, v in json.loads(r.verdicts).items()}
                except (ValueError, AttributeError):
                    continue
                found = {p: v for p, v in parts.items() if v is not None}
                if found and len(found) == len(parts) and settled(found):
                    out[r.program_key] = found
            return out

    def keep_verdicts(self, assignment: str, entry: str, student: str,
                      found: Iterable[tuple[str, dict[str, Verdict]]]) -> None:
        """Record (program key, verdicts) graded from ``entry`` (of ``student``); an existing key stays."""
        known = self.verdicts(assignment)
        rows = [dict(student=student, assignment=assignment, exercise="", program_key=k,
                     verdicts=json.dumps({p: v.to_json() for p, v in verdicts.items()}), entry=entry, at=time.time())
                for k, verdicts in found if k not in known and settled(verdicts)]
        if rows:
            with self.engine.begin() as conn:
                conn.execute(kept_verdicts.insert(), rows)
