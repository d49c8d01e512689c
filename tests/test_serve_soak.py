"""A hostile exchange beside honest students: ``vecgrade serve`` never exits, grades every honest submission as
deserved, ends every entry, and keeps its staging folder within its bound.

Each Hypothesis example is one round: the honest students (Unix users running nbgrader's own client) answer
and ``nbgrader submit`` while the test plants, in the same inbound folder, one entry of every hostile kind under a
drawn name (newlines, ``+``, any Unicode, 255 bytes): deep trees, a FIFO, a symlink, a hard link, a sparse file, a
file that keeps growing during the copy, a notebook with too many cells, truncated JSON, and an entry that is a FIFO
itself. ``Serve.check_owner`` is off: the planted entries belong to root, and the owner check would refuse every one
of them before the checks this test is about. The CI size is one round of two honest students (under a minute on an
idle 2-core machine); ``benchmarks/serve_soak.py`` runs it at full size through ``VECGRADE_SOAK_ROUNDS`` and
``VECGRADE_SOAK_HONEST``.
"""
from __future__ import annotations

import json
import os
import secrets
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbgrader.api import Gradebook
from serve_kit import entries, release_and_fetch, running, students, wait_for, world_exchange

from graders import KIT_ROOT
from graders.course.demo import deserved_marks
from graders.course.marks import exercise_marks
from graders.course.personas import load_roster
from graders.model.exercise import load_assignment
from graders.model.inert import inert
from graders.sandbox import owner
from graders.serve.ledger import GRADED, OPEN, REFUSED

from tests.testkit import generated_course

pytestmark = [pytest.mark.e2e, pytest.mark.root]  # students are Unix users (useradd)
A = "broadcasting"
TS = "2025-01-01 10:00:00.000000 UTC"
ROUNDS = int(os.environ.get("VECGRADE_SOAK_ROUNDS", "1"))
HONEST = int(os.environ.get("VECGRADE_SOAK_HONEST", "2"))
MAX_BYTES = 20 * 1024 ** 2  # Intake.max_bytes: the cap of one staged copy
MAX_CELLS = 10_000  # Intake.max_cells
KINDS = ("deep", "fifo", "symlink", "hardlink", "sparse", "growing", "cells", "truncated", "fifo_entry")
ROSTER = {p.student: p for p in load_roster(KIT_ROOT, load_assignment(KIT_ROOT / "assignments" / f"{A}.py"))}
# honest students: ada's vectorized answers and bob's, in turn (both deserve marks that no timing moves)
HONEST_PERSONAS = {f"{('ada', 'bob')[i % 2]}{i // 2 or ''}": ROSTER[("ada", "bob")[i % 2]] for i in range(HONEST)}

# a student id as a hostile client writes it: any Unicode but "/" and NUL, newlines, "+", or 255 bytes in all
names = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=40),
    st.sampled_from(["ada\nstudent=victim assignment=broadcasting outcome=graded 16\u221516", "ada+bob", "zoë-müller",
                     "学生", "\u202eevil", "\x1b[2Kx", ".."]),
    st.just("LONG"),
)


def _entry_name(student: str) -> str:
    """``<student>+<assignment>+<timestamp>+<random>`` within the file system's 255 bytes (a "LONG" one: exactly)."""
    tail = f"+{A}+{TS}+{secrets.token_hex(4)}"
    room = 255 - len(tail.encode())
    if student == "LONG":
        student = "é" * (room // 2) + "x" * (room % 2)
    while len(student.encode()) > room or student in (".", ".."):
        student = student[:-1] or "x"
    return student + tail


@pytest.fixture(scope="module")
def world(tmp_path_factory, broadcasting):
    """A course whose exchange every user reaches, the honest students, and the running service."""
    with world_exchange() as exchange, students(list(HONEST_PERSONAS), exchange, "vecgrade") as people:
        config = (f"c.Exchange.root = {str(exchange)!r}\nc.Serve.check_owner = False\nc.Serve.min_interval = 0\n"
                  f"c.Intake.max_bytes = {MAX_BYTES}\nc.Intake.max_cells = {MAX_CELLS}\n")
        course = generated_course(tmp_path_factory.mktemp("soak") / "course", broadcasting, extra_config=config)
        release_and_fetch(course, people, A)
        for name, student in people.items():
            student.answer(broadcasting, HONEST_PERSONAS[name])
        with running(course, "--jobs", "1") as service:
            yield course, people, service, exchange


class Staging:
    """The service's staging folder, sampled every 0.1 s: its peak bytes on disk against the entries open then."""

    def __init__(self, pid: int, course):
        self.folder = Path(tempfile.gettempdir()) / f"vecgrade-serve-{owner.tag(pid)}"
        self.course, self.peak = course, 0
        self.over: list[tuple[int, int]] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self.stopped.wait(0.1):
            folders = list(self.folder.parent.glob(self.folder.name + "-*"))
            used = sum(_disk(f) for f in folders)
            # one copy per open entry, and the one being staged before it is recorded; 1 MiB for the folders
            bound = (len([e for e in entries(self.course) if e.state in OPEN]) + 1) * MAX_BYTES + 1024 ** 2
            self.peak = max(self.peak, used)
            if used > bound:
                self.over.append((used, bound))

    def __enter__(self) -> Staging:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join()


def _disk(folder: Path) -> int:
    """Bytes ``folder`` takes on disk (allocated blocks, so a sparse file counts as what it really uses)."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        for n in dirnames + filenames:
            try:
                total += os.lstat(os.path.join(dirpath, n)).st_blocks * 512
            except OSError:
                pass
    return total


def _plant(exchange: Path, kind: str, student: str, release: str, cut: float, stop: threading.Event) -> str:
    """One hostile entry, complete as ``nbgrader submit`` leaves one (secret written, folder 0777 last)."""
    name = _entry_name(student)
    folder = exchange / "vecgrade" / "inbound" / name
    if kind == "fifo_entry":
        os.mkfifo(folder)
        return name
    folder.mkdir()
    notebook = folder / f"{A}.ipynb"
    if kind == "deep":
        deep = folder.joinpath(*["d"] * 12)
        deep.mkdir(parents=True)
        (deep / "x.txt").write_text("x")
        notebook.write_text(release)
    elif kind == "fifo":
        os.mkfifo(folder / "pipe")
        notebook.write_text(release)
    elif kind == "symlink":
        notebook.symlink_to("/etc/passwd")
    elif kind == "hardlink":
        outside = exchange / f"outside-{secrets.token_hex(4)}"
        outside.write_text("the teacher's file")
        os.link(outside, notebook)
    elif kind == "sparse":
        with open(notebook, "wb") as f:
            f.truncate(10 * 1024 ** 3)
    elif kind == "growing":
        notebook.write_text(release)
        threading.Thread(target=_grow, args=(folder / "data.bin", stop), daemon=True).start()
    elif kind == "cells":
        cells: list[dict[str, object]] = [{"cell_type": "code", "metadata": {}, "source": "", "outputs": [], "execution_count": None}]
        notebook.write_text(json.dumps({**json.loads(release), "cells": cells * (MAX_CELLS + 1)}))
    elif kind == "truncated":
        notebook.write_text(release[:max(1, int(len(release) * cut))])
    (folder / "submission_secret.txt").write_text(secrets.token_hex(16))
    os.chmod(folder, 0o777)
    return name


def _grow(path: Path, stop: threading.Event) -> None:
    """A file that keeps growing (4 KiB every 20 ms, at most 8 MiB) until the round ends."""
    with open(path, "ab") as f:
        while not stop.wait(0.02) and f.tell() < 8 * 1024 ** 2:
            f.write(b"x" * 4096)
            f.flush()


def _marks(course, student):
    with Gradebook(course.db_url) as gb:
        sub = gb.find_submission(A, student)
        return {g.name: g.score for nb in sub.notebooks for g in nb.grades}


@settings(max_examples=ROUNDS, deadline=None, database=None, derandomize=False,
          suppress_health_check=list(HealthCheck))
@given(drawn=st.lists(names, min_size=len(KINDS), max_size=len(KINDS)), cut=st.floats(0.01, 0.99))
def test_a_hostile_exchange_never_stops_the_service_nor_an_honest_grade(world, broadcasting, drawn, cut):
    course, people, service, exchange = world
    release = (course.root / "release" / A / f"{A}.ipynb").read_text()
    before_disk = _disk(course.root)
    started = time.time()
    stop = threading.Event()
    with Staging(service.proc.pid, course) as staging, ThreadPoolExecutor(len(people) + 1) as pool:
        honest = [pool.submit(s.nbgrader, "submit", A) for s in people.values()]
        planted = [_plant(exchange, kind, student, release, cut, stop) for kind, student in zip(KINDS, drawn,
                                                                                                strict=True)]
        for f in honest:
            f.result()
        try:
            wait_for(lambda: all(e.state not in OPEN for e in entries(course)) and
                     {e.entry for e in entries(course)} >= set(planted) | _honest_entries(exchange, people, started),
                     240, "every entry to end")
        finally:
            stop.set()
    assert service.proc.poll() is None, "the service exited:\n" + "\n".join(service.lines()[-30:])
    for name, student in people.items():
        latest = max((e for e in entries(course, student.name)), key=lambda e: e.seen_at)
        assert latest.state == GRADED, latest
        marks = _marks(course, student.name)
        for ex in broadcasting.exercises:
            assert exercise_marks(ex, marks) == deserved_marks(ex, HONEST_PERSONAS[name]), (name, ex.name)
    ended = {e.entry: e for e in entries(course)}
    for kind, name in zip(KINDS, planted, strict=True):  # refused (a growing file may be copied whole, and graded)
        assert ended[name].state in ((REFUSED, GRADED) if kind == "growing" else (REFUSED,)), (kind, ended[name])
        print(f"soak: {kind}: {ended[name].state}: {inert(ended[name].reason)[:100]}")
    assert not staging.over, f"staging past its bound (bytes, bound): {staging.over[:3]}"
    left = [p for f in staging.folder.parent.glob(staging.folder.name + "-*") for p in f.rglob("*") if p.is_file()]
    assert left == [], left  # every entry ended: no staged copy is left
    grown = _disk(course.root) - before_disk
    assert grown < 20 * 1024 ** 2, grown  # honest submissions and their feedback only: no hostile byte stays
    print(f"soak round: {len(planted)} hostile entries beside {len(people)} honest submissions in "
          f"{time.time() - started:.0f} s; staging peak {staging.peak / 1024 ** 2:.1f} MiB (bound: "
          f"{MAX_BYTES // 1024 ** 2} MiB per open entry); course folder grew {grown / 1024 ** 2:.1f} MiB; "
          f"load average {os.getloadavg()[0]:.1f}")


def _honest_entries(exchange: Path, people, since: float) -> set[str]:
    inbound = exchange / "vecgrade" / "inbound"
    return {p.name for s in people.values() for p in inbound.glob(f"{s.name}+{A}+*") if p.stat().st_mtime >= since - 1}
