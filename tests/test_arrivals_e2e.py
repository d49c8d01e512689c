"""Lateness through nbgrader's own exchange (issue 18 E.1), end to end: students fetch and submit with nbgrader,
some then rewrite the ``timestamp.txt`` of their submission, the teacher collects and grades with the commands
of the README. Lateness must come from when the submission arrived, never from ``timestamp.txt``; a garbled one
is named in one line; the formgrader's API lists every collected submission as autograded and dates it the same.
"""
import datetime
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from graders.course.export import MAX_ROW
from graders.model.csvsafe import read_rows

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent
HONEST, EARLY, LATER, GARBLED, BY_HAND = "honest", "claims_early", "claims_later", "garbled", "by_hand"


def run(cwd: Path, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    proc = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode in ok, f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def inbound(course, student: str) -> Path:
    [folder] = (course.root / "exchange" / "vecgrade" / "inbound").glob(f"{student}+broadcasting+*")
    return folder


def status_of(course, tmp_path: Path) -> dict[str, str]:
    dest = tmp_path / "grades.csv"
    run(course.root, "vecgrade", "export", "broadcasting", "--to", str(dest))
    return {r["student_id"]: r["broadcasting status"] for r in read_rows(dest) if r["student_id"] != MAX_ROW}


def set_due(course, due: datetime.datetime) -> None:
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment("broadcasting", duedate=due)


def hours_late(status: str) -> float:
    assert status.startswith("graded, late ") and status.endswith(" h"), status
    return float(status.removeprefix("graded, late ").removesuffix(" h"))


@pytest.fixture(scope="module")
def collected(tmp_path_factory, broadcasting):
    """Due 60 hours ago; five students submit now, three of them then forge or garble their timestamp.txt."""
    tmp = tmp_path_factory.mktemp("arrivals")
    course = generated_course(tmp / "course", broadcasting)
    due = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - datetime.timedelta(hours=60)
    set_due(course, due)
    run(course.root, "nbgrader", "release_assignment", "broadcasting")
    exchange = [f"--Exchange.root={course.root / 'exchange'}", "--course=vecgrade"]
    for student in (HONEST, EARLY, LATER, GARBLED):
        home = tmp / student
        home.mkdir()
        run(home, "nbgrader", "fetch_assignment", "broadcasting", *exchange)
        run(home, "nbgrader", "submit", "broadcasting", *exchange, f"--student={student}")
    fmt = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's own
    (inbound(course, EARLY) / "timestamp.txt").write_text((due - datetime.timedelta(hours=1)).strftime(fmt))
    (inbound(course, LATER) / "timestamp.txt").write_text((due + datetime.timedelta(hours=200)).strftime(fmt))
    (inbound(course, GARBLED) / "timestamp.txt").write_text("the day before the deadline, I promise")
    run(course.root, "nbgrader", "collect", "broadcasting")
    run(course.root, "nbgrader", "collect", "--update", "broadcasting")  # reads the submitted timestamp.txt files
    hand = course.root / "submitted" / BY_HAND / "broadcasting"  # a notebook the teacher put there by hand
    hand.mkdir(parents=True)
    shutil.copy(course.root / "release" / "broadcasting" / "broadcasting.ipynb", hand)
    (hand / "timestamp.txt").write_text((due - datetime.timedelta(hours=2)).strftime(fmt))
    graded = run(course.root, "vecgrade", "grade", "broadcasting", "--jobs", "1")
    return course, due, graded


def test_every_submission_is_graded_and_late_by_its_arrival(collected, tmp_path):
    course, due, graded = collected
    assert "graded 5 of 5 submissions" in graded.stdout, graded.stdout + graded.stderr
    status = status_of(course, tmp_path)
    assert set(status) == {HONEST, EARLY, LATER, GARBLED, BY_HAND}
    for student, text in status.items():  # all arrived now, 60 hours after the due date, whatever they claim
        assert 60 <= hours_late(text) < 61, (student, text)


def test_a_timestamp_that_disagrees_or_is_garbled_gets_one_line(collected):
    _, _, graded = collected
    lines = (graded.stdout + graded.stderr).splitlines()
    for student in (EARLY, LATER, GARBLED, BY_HAND):
        about = [line for line in lines if student in line and "timestamp.txt" in line]
        assert len(about) == 1, (student, lines)
    assert not [line for line in lines if HONEST in line and "timestamp.txt" in line], lines
    assert "Traceback" not in graded.stdout + graded.stderr
    garbled = next(line for line in lines if GARBLED in line and "timestamp.txt" in line)
    assert "not a time" in garbled, garbled


def test_on_time_when_the_due_date_is_after_the_arrival(collected, tmp_path):
    course, due, _ = collected
    set_due(course, datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) + datetime.timedelta(hours=1))
    try:
        # LATER claims 200 hours after the old due date, which is long after this one: still on time
        assert set(status_of(course, tmp_path).values()) == {"graded"}
    finally:
        set_due(course, due)


def test_the_formgrader_lists_every_collected_submission_as_autograded(collected):
    course, _, _ = collected
    with course.api() as api:
        listed = {s["student"]: s for s in api.get_submissions("broadcasting")}
        assert set(listed) == {HONEST, EARLY, LATER, GARBLED, BY_HAND}
        assert all(s["autograded"] for s in listed.values()), {k: s["autograded"] for k, s in listed.items()}
        with Gradebook(course.db_url) as gb:
            for student in listed:
                recorded = gb.find_submission("broadcasting", student).timestamp
                assert api.get_submitted_timestamp("broadcasting", student) == recorded, student
