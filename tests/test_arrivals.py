"""The time of record of a submission (graders.pipeline.arrivals), without nbgrader's apps: what is observed,
what is kept, what a timestamp.txt may and may not change. End to end through nbgrader's exchange:
tests/test_arrivals_e2e.py."""
import datetime
import os
import time

import pytest
from nbgrader.coursedir import CourseDirectory

from graders.pipeline import arrivals
from graders.pipeline.arrivals import ARRIVALS, Arrival, claimed_time, latest_change, read_claim, time_of_record

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0)


@pytest.fixture
def course(tmp_path):
    """A course root with one submission folder put there by hand."""
    folder = tmp_path / "submitted" / "ada" / "broadcasting"
    folder.mkdir(parents=True)
    (folder / "broadcasting.ipynb").write_text("{}")
    return tmp_path, folder


def test_latest_change_follows_every_change_and_no_link(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("a")
    first = latest_change(tmp_path)
    time.sleep(0.05)
    os.utime(tmp_path / "sub" / "a.txt", (0, 0))  # setting mtime back is a change: ctime moves on
    assert latest_change(tmp_path) > first
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.write_text("x")
    (tmp_path / "link").symlink_to(outside)
    before = latest_change(tmp_path)
    time.sleep(0.05)
    outside.write_text("changed")  # the link's target is not the submission
    assert latest_change(tmp_path) == before


def test_a_forged_claim_changes_nothing_and_is_named():
    arrival = Arrival("bob", "broadcasting", NOW, "collected", "2020-01-01 00:00:00.000000 UTC")
    note = arrival.note()
    assert note.startswith("bob/broadcasting: timestamp.txt says 2020-01-01 00:00:00 UTC") and "before" in note
    assert arrival.arrived == NOW


@pytest.mark.parametrize("garbage", ["garbage!", "2026-13-45 99:99", "=1+1", "\x00\x01", "9" * 80])
def test_a_garbled_claim_is_one_line(garbage):
    assert claimed_time(garbage) is None
    note = Arrival("zed", "broadcasting", NOW, "collected", garbage).note()
    assert "timestamp.txt is not a time" in note and len(note.splitlines()) == 1


def test_an_honest_claim_says_nothing():
    for claim in ("2026-03-01 11:59:30.000000 UTC", "2026-03-01 13:01:00.000000 Europe/Paris", None):
        assert Arrival("ada", "broadcasting", NOW, "collected", claim).note() == ""


def test_a_submission_by_hand_is_timed_once_and_kept(course):
    root, folder = course
    (folder / "timestamp.txt").write_text("2020-01-01 00:00:00 UTC")
    first = time_of_record(root, "ada", "broadcasting", folder)
    assert first.how == "found in submitted/" and first.claimed == "2020-01-01 00:00:00 UTC"
    assert abs(first.arrived - datetime.datetime.utcnow()) < datetime.timedelta(minutes=1)
    time.sleep(0.05)
    (folder / "broadcasting.ipynb").write_text("{ }")  # the teacher fixes something later: the time stays
    again = time_of_record(root, "ada", "broadcasting", folder)
    assert again.arrived == first.arrived
    assert (root / ARRIVALS).exists()


def test_the_record_survives_a_student_name_that_looks_like_a_formula(course):
    root, folder = course
    name = '=HYPERLINK("evil.example","x")'
    arrivals.save(root, Arrival(name, "broadcasting", NOW, "collected", "=cmd|' /C calc'!A0"))
    assert arrivals.arrivals(root)[name, "broadcasting"].claimed == "=cmd|' /C calc'!A0"
    assert "'=HYPERLINK" in (root / ARRIVALS).read_text()  # marked as text in the file


def test_nbgrader_reads_the_time_of_record_not_timestamp_txt(course):
    root, folder = course
    (folder / "timestamp.txt").write_text("garbage!")  # nbgrader 0.9.6: AttributeError 'fail'
    coursedir = CourseDirectory(root=str(root))
    arrivals.save(root, Arrival("ada", "broadcasting", NOW, "collected", "garbage!"))
    assert arrivals.recorded_timestamp(coursedir, str(folder)) == NOW
    other = root / "autograded" / "ada" / "broadcasting"  # the instructor's copy: its own timestamp.txt
    other.mkdir(parents=True)
    arrivals.write_stamp(other, NOW)
    assert arrivals.recorded_timestamp(coursedir, str(other)) == NOW
    (other / "timestamp.txt").write_text("garbage!")
    assert arrivals.recorded_timestamp(coursedir, str(other)) is None  # not a time: ignored, never a crash


def test_read_claim_never_follows_a_link(course, tmp_path_factory):
    _, folder = course
    secret = tmp_path_factory.mktemp("secret") / "gradebook.db"
    secret.write_text("2026-01-01 00:00:00 UTC")
    (folder / "timestamp.txt").symlink_to(secret)
    assert read_claim(folder).startswith("(not a regular file")
