"""Admission cannot crash, stall or fill anything; student-controlled text is inert everywhere; pages are worded
for the student. Each both ways: the hostile entry refused or neutralised, an honest one admitted unchanged."""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from graders.course.demo import make_course
from graders.course.grade import record_ungraded, ungraded
from graders.course.status import status_table
from graders.engine.record import SubmissionResult
from graders.model.csvsafe import read_rows
from graders.model.inert import inert, is_inert
from graders.model.verdict import Reason
from graders.pipeline import refusals
from graders.pipeline.intake import Intake
from graders.pipeline.safecopy import Caps, Refused
from graders.sandbox import owner
from graders.serve import admission as admission_module
from graders.serve import pages
from graders.serve.admission import Admission
from graders.serve.ledger import QUEUED, REFUSED, SUPERSEDED, Ledger, ledger_url
from graders.serve.logline import outcome_line
from graders.serve.queue import queue_table
from graders.serve.service import Service
from graders.serve.settings import Serve
from graders.serve.watcher import check_notebooks

from tests.testkit.exchange import HOSTILE, ME, SOURCE, TS, make_entry, make_nest, no_control, printed_lines

# --- admission: one entry never stops the others or the service ----------------------------------------

@pytest.fixture
def admission(tmp_path, monkeypatch):
    course = make_course(tmp_path / "course")
    exchange = tmp_path / "exchange" / "vecgrade"
    (exchange / "inbound").mkdir(parents=True)
    ledger = Ledger(ledger_url(course))
    monkeypatch.setattr(admission_module, "known_notebooks", lambda db_url, a: {"broadcasting"})
    monkeypatch.setattr(admission_module, "due_date", lambda course, a, s: None)
    now = [time.time()]
    a = Admission(course, ledger, exchange, tmp_path / "staging", ["broadcasting"], True, False,
                  Caps(10**8, max_cells=Intake().max_cells), "UTC", lambda: now[0], max_pending=3)
    a.now = now  # type: ignore[attr-defined]
    yield a
    ledger.close()


def test_a_folder_that_would_crash_staging_is_refused_and_the_next_entry_admitted(admission, caplog):
    bad = make_entry(admission.inbound, tail="a")
    make_nest(bad, 20, 250)
    good = make_entry(admission.inbound, tail="b")
    with caplog.at_level(logging.INFO, "vecgrade.serve"):
        admission.admit_new()
    refused, queued = admission.ledger.get(bad.name), admission.ledger.get(good.name)
    assert refused.state == REFUSED and "too long" in refused.reason and "\n" not in refused.reason
    assert queued.state == QUEUED and queued.reason == ""
    assert not (admission.staging / bad.name).exists()  # a refusal leaves no copy
    staged = admission.staging / good.name / "vecgrade" / "inbound" / good.name / "broadcasting.ipynb"
    assert staged.read_text() == SOURCE.read_text()


def test_any_error_while_admitting_one_entry_is_its_refusal_in_one_line(admission, monkeypatch):
    bad, good = make_entry(admission.inbound, tail="a"), make_entry(admission.inbound, tail="b")
    real = admission_module.stage

    def broken(source, *args):
        if source.name == bad.name:
            raise OSError(36, "File name too long\nstudent=victim outcome=graded 16/16")
        return real(source, *args)

    monkeypatch.setattr(admission_module, "stage", broken)
    admission.admit_new()  # never raises
    e = admission.ledger.get(bad.name)
    assert e.state == REFUSED and e.reason.startswith("the service could not admit this submission (OSError")
    assert "\n" not in e.reason and admission.ledger.get(good.name).state == QUEUED
    assert not (admission.staging / bad.name).exists()


def test_a_refusal_that_cannot_even_be_recorded_is_tried_again_later(admission, monkeypatch):
    bad = make_entry(admission.inbound, tail="a")
    monkeypatch.setattr(admission_module, "stage", lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
    add = admission.ledger.add
    monkeypatch.setattr(admission.ledger, "add", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("db down")))
    admission.admit_new()  # neither raises nor records
    assert bad.name not in admission.ledger.known()
    monkeypatch.setattr(admission.ledger, "add", add)
    admission.admit_new()
    assert bad.name not in admission.ledger.known()  # not before its retry time
    admission.now[0] += 61
    admission.admit_new()
    assert admission.ledger.get(bad.name).state == REFUSED


def test_an_entry_name_that_is_not_utf8_is_skipped_and_the_next_admitted(admission):
    os.mkdir(os.fsencode(admission.inbound) + b"/ada\xff+broadcasting+" + TS.encode() + b"+x")
    good = make_entry(admission.inbound, tail="b")
    admission.admit_new()
    admission.admit_new()
    assert admission.ledger.known() == {good.name} and admission.ledger.get(good.name).state == QUEUED


def test_a_refusals_page_is_bounded_whatever_the_entry_holds(admission):
    folder = make_entry(admission.inbound, tail="many")
    for i in range(300):
        (folder / f"n{i:03}.ipynb").write_text("{}")
    admission.admit_new()
    assert admission.ledger.get(folder.name).state == REFUSED  # more than 100 files
    assert len(list((admission.exchange / "feedback").iterdir())) == admission_module.PAGES_MAX
    honest = make_entry(admission.inbound, tail="one")
    (honest / "broadcasting (1).ipynb").write_text(SOURCE.read_text())
    admission.admit_new()
    assert len(list((admission.exchange / "feedback").iterdir())) == admission_module.PAGES_MAX + 2


def test_at_most_max_pending_submissions_of_a_student_wait(admission):
    names = [make_entry(admission.inbound, stamp=f"2025-01-01 10:0{i}:00 UTC", tail=f"t{i}").name for i in range(5)]
    admission.admit_new()
    states = [admission.ledger.get(n).state for n in names]
    assert states == [QUEUED] * 3 + [REFUSED] * 2
    reason = admission.ledger.get(names[3]).reason
    assert reason.startswith("you already have 3 submissions waiting to be graded") and "submit again once" in reason
    assert not (admission.staging / names[3]).exists() and (admission.staging / names[0]).is_dir()
    admission.ledger.finish(names[0], SUPERSEDED)  # one left the queue: the student may submit again
    later = make_entry(admission.inbound, stamp="2025-01-01 11:00:00 UTC", tail="later")
    admission.admit_new()
    assert admission.ledger.get(later.name).state == QUEUED


def test_max_pending_is_a_documented_setting():
    assert Serve().max_pending == 3 and Serve.class_traits()["max_pending"].help


def test_queued_time_counts_from_the_first_scan_that_listed_the_entry(admission):
    folder = make_entry(admission.inbound)
    os.chmod(folder, 0o755)  # nbgrader submit still writing: not judged yet
    admission.now[0] = first = time.time() - 30
    admission.admit_new()
    assert folder.name not in admission.ledger.known()
    admission.now[0] = time.time()
    os.chmod(folder, 0o777)
    admission.admit_new()
    e = admission.ledger.get(folder.name)
    assert e.seen_at == first
    admission.ledger.start(e.entry)
    assert float(outcome_line(admission.ledger.get(e.entry)).split("queued=")[1].split("s ")[0]) >= 29


# --- staged copies end with their entry; a crashed service's leftovers go at the next start ------------------

def test_a_staged_copy_is_removed_when_its_entry_ends(tmp_path, monkeypatch):
    course = make_course(tmp_path / "course")
    inbound = course.root / "exchange" / "vecgrade" / "inbound"
    inbound.mkdir(parents=True)
    service = Service(course, ["broadcasting"])
    monkeypatch.setattr(admission_module, "known_notebooks", lambda db_url, a: {"broadcasting"})
    monkeypatch.setattr(admission_module, "due_date", lambda course, a, s: None)
    try:
        kept, ended = make_entry(inbound, tail="kept"), make_entry(inbound, tail="ended")
        service.admission.admit_new()
        assert (service.staging / kept.name).is_dir() and (service.staging / ended.name).is_dir()
        service._finish_ungraded(service.ledger.get(ended.name), SUPERSEDED, "a later one was graded")
        assert not (service.staging / ended.name).exists() and (service.staging / kept.name).is_dir()
    finally:
        service.close()
    assert not service.staging.exists()


def test_a_killed_services_staged_copies_are_removed_at_the_next_start_and_nothing_else(tmp_path, monkeypatch):
    proc = subprocess.Popen(["sleep", "30"])
    dead = owner.tag(proc.pid)
    proc.kill()
    proc.wait()
    tmp = Path(tempfile.gettempdir())
    crashed = tmp / f"vecgrade-serve-{dead}-0badc0de"  # what a SIGKILLed service left: its staged copies
    (crashed / "ada+broadcasting+x" / "vecgrade").mkdir(parents=True)
    course = make_course(tmp_path / "course")
    (course.root / "exchange" / "vecgrade" / "inbound").mkdir(parents=True)
    service = Service(course, ["broadcasting"])
    other = Service(course, ["broadcasting"])  # a live one's staging stays
    monkeypatch.setattr(service, "grader", lambda a: SimpleNamespace(preflight=lambda: None, warm=lambda: False))
    try:
        assert service.staging.name.startswith(f"vecgrade-serve-{owner.tag()}-")
        service.start()
        assert not crashed.exists() and service.staging.is_dir() and other.staging.is_dir()
    finally:
        shutil.rmtree(crashed, ignore_errors=True)
        service.close()
        other.close()
    assert not service.staging.exists()


# --- student-controlled text is inert everywhere -------------------------------------------------------------

@pytest.mark.parametrize("text", HOSTILE)
def test_inert_leaves_one_visible_line(text):
    shown = inert(text)
    no_control(shown)
    assert is_inert(shown) and "\n" not in shown


@pytest.mark.parametrize("text", ["ada", "zoë-müller", "+1", "a b\\c", "学生", "e" * 255])
def test_inert_leaves_honest_text_unchanged(text):
    assert inert(text) == text


def test_every_output_with_a_hostile_name_holds_no_control_character(tmp_path, caplog):
    course = make_course(tmp_path / "course")
    ledger = Ledger(ledger_url(course))
    for i, name in enumerate(HOSTILE):
        entry = f"{name}+broadcasting+{TS}+{i}"
        ledger.add(entry, name, "broadcasting", TS, name, REFUSED, f"`{name}.ipynb` is not a notebook")
        no_control(outcome_line(ledger.get(entry)))
        ledger.add(f"w{i}", name, "broadcasting", TS, name)
    ledger.close()
    printed = printed_lines(*queue_table(course, ["broadcasting"]))
    assert any("refused ada\\nstudent=victim" in line for line in printed)
    assert not any(line.startswith("student=victim") for line in printed)
    # ungraded.csv and vecgrade status
    for name in HOSTILE:
        (course.root / "submitted" / name / "broadcasting").mkdir(parents=True)
    record_ungraded(course, "broadcasting", [SubmissionResult(n, False, 0.0, f"no notebook in submitted/{n}/",
                                                              Reason.REFUSED) for n in HOSTILE])
    with open(course.root / "ungraded.csv", newline="") as f:
        written = f.read()
    for row in written.split("\r\n"):
        no_control(row)
    assert set(ungraded(course, "broadcasting")) == set(HOSTILE)  # each row still finds its student
    assert {r["student"] for r in read_rows(course.root / "ungraded.csv")} == {inert(n) for n in HOSTILE}
    record_ungraded(course, "broadcasting", [SubmissionResult(n, True, 0.0) for n in HOSTILE])
    assert ungraded(course, "broadcasting") == {}  # graded later: the rows go
    record_ungraded(course, "broadcasting", [SubmissionResult(HOSTILE[0], False, 0.0, "why\x1b[2K", Reason.REFUSED)])
    printed = printed_lines(*status_table(course, ["broadcasting"]))
    assert any("could not grade ada\\nstudent=victim" in line and "why\\x1b[2K" in line for line in printed)
    # a page (HTML) and its banner
    page = pages.page(f"{HOSTILE[2]}: Not graded", f"Submission of {TS}: not graded: {HOSTILE[0]} <b>")
    no_control(page.replace("<!DOCTYPE html>\n", "").rstrip("\n"))
    assert "&lt;b&gt;" in page and "\\x1b]0;pwned\\x07" in page
    honest = pages.page("broadcasting: Not graded", "Submission of zoë: +1 <b>")
    assert "Submission of zoë: +1 &lt;b&gt;" in honest


def test_admissions_log_and_page_of_a_hostile_entry_hold_no_control_character(admission, caplog):
    for i, name in enumerate(HOSTILE):
        folder = admission.inbound / f"{name}+broadcasting+{TS}+{i}"
        assert len(os.fsencode(folder.name)) <= 255
        folder.mkdir()
        (folder / "broadcasting.ipynb").write_text(SOURCE.read_text())
        (folder / "submission_secret.txt").write_text(f"secret{i}")
        os.chmod(folder, 0o777)
    os.mkfifo(make_entry(admission.inbound, tail="fifo") / "p\x1b[2K\nstudent=victim")  # file names, the owner's own
    (make_entry(admission.inbound, tail="copy") / "b\x1b]0;pwned\x07 (1).ipynb").write_text(SOURCE.read_text())
    with caplog.at_level(logging.INFO, "vecgrade.serve"):
        admission.admit_new()
    messages = [r.getMessage() for r in caplog.records]
    refused = [m for m in messages if "outcome=refused" in m]
    assert len(refused) == len(HOSTILE) + 2
    assert any("`p\\x1b[2K\\nstudent=victim`, which is not a regular file" in m for m in refused)
    assert any("remove `b\\x1b]0;pwned\\x07 (1).ipynb` and submit again" in m for m in refused)
    for m in messages:
        no_control(m)
    pages_written = list((admission.exchange / "feedback").glob("*.html"))
    assert len(pages_written) >= len(HOSTILE) + 2
    for p in pages_written:
        no_control(p.read_text().replace("<!DOCTYPE html>\n", "").rstrip("\n"))


# --- pages worded for the student ------------------------------------------------------------------------------

def test_two_copies_of_a_notebook_ask_the_student_to_remove_the_copy(tmp_path):
    (tmp_path / "broadcasting.ipynb").write_text(SOURCE.read_text())
    (tmp_path / "broadcasting (1).ipynb").write_text(SOURCE.read_text())
    with pytest.raises(Refused) as found:
        check_notebooks(tmp_path, ["broadcasting"])
    assert str(found.value).endswith("remove `broadcasting (1).ipynb` and submit again")
    (tmp_path / "broadcasting (1).ipynb").unlink()
    assert check_notebooks(tmp_path, ["broadcasting"]) == ["broadcasting"]


@pytest.mark.parametrize("plant, teacher", [
    (lambda f: (f / "broadcasting.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook())), "EmptyNotebookError"),
    (lambda f: (f / "broadcasting.ipynb").write_bytes(b'{"cells": [\xff]}'), "NotANotebookError"),
    (lambda f: (f / "broadcasting (1).ipynb").write_text(SOURCE.read_text()), "UnknownNotebookError"),
    (lambda f: (f / "broadcasting.ipynb").unlink(), "NoNotebookError"),
])
def test_a_refusal_keeps_the_teachers_words_and_carries_the_students(tmp_path, plant, teacher):
    folder = tmp_path / "submitted" / "ada" / "broadcasting"
    folder.mkdir(parents=True)
    (folder / "broadcasting.ipynb").write_text(SOURCE.read_text())
    assert refusals.submission_refusal(str(tmp_path), str(folder), {"broadcasting"}, "broadcasting", "ada") is None
    plant(folder)
    found = refusals.submission_refusal(str(tmp_path), str(folder), {"broadcasting"}, "broadcasting", "ada")
    assert str(found).startswith(teacher) and "vecgrade grade broadcasting -s ada" in str(found)
    student = found.for_student
    assert student.endswith("submit again") and "vecgrade" not in student and "submitted/" not in student
    assert "real notebook" not in student and "ada" not in student


def test_the_service_puts_the_students_words_on_the_page_and_keeps_the_teachers_in_the_ledger(tmp_path):
    course = make_course(tmp_path / "course")
    inbound = course.root / "exchange" / "vecgrade" / "inbound"
    inbound.mkdir(parents=True)
    service = Service(course, ["broadcasting"])
    try:
        folder = make_entry(inbound)
        service.ledger.add(folder.name, ME, "broadcasting", TS, ME)
        service._refuse(service.ledger.get(folder.name), "EmptyNotebookError: ... then vecgrade grade broadcasting",
                        "`broadcasting.ipynb` is an empty notebook (no cells): open the notebook you worked in, "
                        "save it, and submit again")
        [page] = (course.root / "exchange" / "vecgrade" / "feedback").glob("*.html")
        assert "open the notebook you worked in" in page.read_text() and "vecgrade grade" not in page.read_text()
        assert "then vecgrade grade" in service.ledger.get(folder.name).reason
    finally:
        service.close()


def test_a_pass_that_fails_does_not_stop_the_service(tmp_path, monkeypatch):
    course = make_course(tmp_path / "course")
    (course.root / "exchange" / "vecgrade" / "inbound").mkdir(parents=True)
    service = Service(course, ["broadcasting"])
    passes = []

    def step():
        passes.append(time.time())
        if len(passes) == 1:
            raise OSError(36, "File name too long")
        service.stopping = True
        return False

    monkeypatch.setattr(service, "start", lambda: None)
    monkeypatch.setattr(service, "step", step)
    monkeypatch.setattr(service.settings, "poll_interval", 0.0)
    service.run()  # returns after the second pass, instead of exiting with the first one's error
    assert len(passes) == 2
