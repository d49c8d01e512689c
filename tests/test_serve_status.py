"""The service's queue under ``vecgrade status``, both ways: a submission collected for the teacher after the due date
is "collected late", never "refused"; a refusal stays a refusal; a student with several submissions waiting is named
once; admission records a late submission as ``late`` only when it was collected."""
from __future__ import annotations

import datetime
import time

import pytest
from typer.testing import CliRunner

from graders.cli import app
from graders.course.demo import make_course
from graders.pipeline.safecopy import Caps
from graders.serve import admission as admission_module
from graders.serve.admission import Admission
from graders.serve.ledger import GRADED, LATE, QUEUED, REFUSED, Ledger, ledger_url
from graders.serve.queue import queue_status, queue_table
from graders.serve.steps import StepFailed
from graders.serve.watcher import parse_name

A = "broadcasting"


@pytest.fixture
def course(tmp_path):
    course = make_course(tmp_path / "course")
    (course.root / "exchange" / "vecgrade" / "inbound").mkdir(parents=True)
    return course


def _fill(course):
    ledger = Ledger(ledger_url(course))
    try:
        for k in range(2):
            ledger.add(f"ada+{A}+q{k}", "ada", A, f"2025-01-01 10:0{k}:00 UTC", "ada")
        ledger.add(f"bob+{A}+late", "bob", A, "2025-02-01 10:00:00 UTC", "bob", LATE,
                   "submitted after the due date (2025-01-31 00:00:00 UTC): collected for your teacher's grading")
        ledger.add(f"cy+{A}+bad", "cy", A, "2025-01-01 10:00:00 UTC", "mallory", REFUSED, "the folder belongs to mallory")
        ledger.add(f"dee+{A}+g", "dee", A, "2025-01-01 10:00:00 UTC", "dee")
        ledger.start(f"dee+{A}+g")
        ledger.finish(f"dee+{A}+g", GRADED)
    finally:
        ledger.close()


def test_after_due_is_collected_late_and_a_refusal_stays_refused(course):
    _fill(course)
    [s] = queue_status(course, [A])
    assert [e.student for e in s.late] == ["bob"]
    assert [e.student for e in s.refused] == ["cy"]
    assert [e.student for e in s.waiting] == ["ada", "ada"] and [e.student for e in s.graded_last_hour] == ["dee"]
    assert queue_status(course, [A], now=time.time() + 7200)[0].late == s.late  # late and refused never age out


def test_status_names_a_waiting_student_once_and_says_late_apart_from_refused(course):
    _fill(course)
    table, lines = queue_table(course, [A])
    cells = {c.header: next(iter(c.cells)) for c in table.columns}
    assert cells["waiting"] == "ada (2)" and cells["collected late"] == "1" and cells["refused"] == "1"
    assert [line for line in lines if "waiting" in line] == [
        f"{A}: waiting ada (submitted 2025-01-01 10:00:00 UTC, 2025-01-01 10:01:00 UTC)"]
    out = CliRunner().invoke(app, ["status", A, "-c", str(course.root)], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    assert f"collected late bob+{A}+late (bob)" in out.output
    assert f"refused cy+{A}+bad (folder of mallory): the folder belongs to mallory" in out.output
    assert f"refused bob+{A}+late" not in out.output and out.output.count("waiting ada") == 1


@pytest.mark.parametrize("collected, state", [(True, LATE), (False, REFUSED)])
def test_admission_records_late_only_what_it_collected(course, tmp_path, monkeypatch, collected, state):
    def collect(*args):
        if not collected:
            raise StepFailed("nbgrader collect failed: disk full")

    monkeypatch.setattr(admission_module, "collect", collect)
    ledger = Ledger(ledger_url(course))
    try:
        adm = Admission(course, ledger, course.root / "exchange" / "vecgrade", tmp_path / "staging", [A], False,
                        False, Caps(10**6), "UTC")
        parsed = parse_name(f"ada+{A}+2025-02-01 10:00:00.000000 UTC+x")
        adm._collect_late(parsed, tmp_path / "staging", tmp_path / "staged", datetime.datetime(2025, 1, 31), "ada")
        e = ledger.get(parsed.name)
        assert e.state == state and e.state != QUEUED and "after the due date" in e.reason
        assert ("disk full" in e.reason) is (not collected)
    finally:
        ledger.close()
