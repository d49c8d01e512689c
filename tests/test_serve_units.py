"""The service's parts on their own, each both ways: the rate limiter, the kept verdicts, the inbound checks,
the ledger, the gradebook lock, the feedback pages, the queue in ``vecgrade status``, the CLI's mistakes."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from nbgrader.utils import notebook_hash
from typer.testing import CliRunner

from graders.cli import app
from graders.course.demo import make_course
from graders.course.lock import gradebook_lock, lock_path
from graders.model.verdict import Reason, failed, passed
from graders.pipeline.safecopy import Refused, stage
from graders.serve import pages
from graders.serve.ledger import GRADED, GRADING, QUEUED, REFUSED, Ledger, ledger_exists, ledger_url
from graders.serve.limiter import decide
from graders.serve.logline import outcome_line
from graders.serve.queue import queue_status
from graders.serve.service import Service, serving
from graders.serve.watcher import check_notebooks, parse_name, read_secret

from tests.testkit import ROOT

SOURCE = ROOT / "source" / "broadcasting" / "broadcasting.ipynb"
NOBODY = 65534


@pytest.fixture
def ledger(tmp_path):
    ledger = Ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    yield ledger
    ledger.close()


def _queued(ledger, name, student="ada", timestamp="2025-01-01 10:00:00 UTC"):
    ledger.add(name, student, "broadcasting", timestamp, student)
    return ledger.get(name)


# --- the rate limiter -----------------------------------------------------------------------------------

def test_without_an_earlier_grading_the_latest_submission_is_graded_and_the_others_superseded(ledger):
    late = _queued(ledger, "b", timestamp="2025-01-01 10:05:00 UTC")
    early = _queued(ledger, "a", timestamp="2025-01-01 10:00:00 UTC")  # seen after, submitted before
    d = decide([early, late], None, 600, now=1000.0)
    assert d.ready == late and d.superseded == [early] and not d.waiting


def test_inside_the_window_every_submission_waits_until_it_opens(ledger):
    a, b = _queued(ledger, "a"), _queued(ledger, "b", timestamp="2025-01-01 10:01:00 UTC")
    d = decide([a, b], last_started=1000.0, interval=600, now=1599.0)
    assert d.ready is None and d.opens == 1600.0 and {e.entry for e in d.waiting} == {"a", "b"}
    opened = decide([a, b], last_started=1000.0, interval=600, now=1600.0)
    assert opened.ready == b and opened.superseded == [a]


# --- the inbound folder -----------------------------------------------------------------------------------

def test_inbound_names_are_read_as_nbgrader_collect_reads_them():
    found = parse_name("ada+broadcasting+2025-01-01 10:00:00.123456 UTC+AbC-d_e")
    assert (found.student, found.assignment, found.timestamp) == ("ada", "broadcasting",
                                                                   "2025-01-01 10:00:00.123456 UTC")
    assert parse_name("ada+broadcasting+2025-01-01 10:00:00 UTC").student == "ada"  # no random string
    assert parse_name("notes.txt") is None and parse_name("ada+broadcasting+yesterday+x") is None


def _entry(tmp_path: Path) -> Path:
    folder = tmp_path / "inbound" / "root+broadcasting+2025-01-01 10:00:00 UTC+x"
    folder.mkdir(parents=True)
    (folder / "broadcasting.ipynb").write_text(SOURCE.read_text())
    (folder / "submission_secret.txt").write_text("s3cret")
    return folder


def test_a_submission_of_regular_files_by_its_own_student_is_staged_as_it_is(tmp_path):
    folder = _entry(tmp_path)
    stage(folder, tmp_path / "staged", "root", check_owner=True, max_bytes=10**8)
    assert (tmp_path / "staged" / "broadcasting.ipynb").read_text() == SOURCE.read_text()
    assert check_notebooks(tmp_path / "staged", ["broadcasting"]) == ["broadcasting"]


@pytest.mark.parametrize("plant, why", [
    (lambda f: os.symlink("/etc/passwd", f / "notes.txt"), "not a regular file"),
    (lambda f: os.mkfifo(f / "pipe"), "not a regular file"),
    (lambda f: os.chown(f / "broadcasting.ipynb", NOBODY, NOBODY), "belongs to the Unix user nobody"),
    (lambda f: os.chown(f, NOBODY, NOBODY), "the folder belongs to the Unix user nobody"),
])
def test_a_link_a_special_file_or_a_foreign_owner_is_refused(tmp_path, plant, why):
    folder = _entry(tmp_path)
    plant(folder)
    with pytest.raises(Refused, match=why):
        stage(folder, tmp_path / "staged", "root", check_owner=True, max_bytes=10**8)


def test_without_the_owner_check_a_foreign_owner_is_accepted_but_never_a_link(tmp_path):
    folder = _entry(tmp_path)
    os.chown(folder / "broadcasting.ipynb", NOBODY, NOBODY)
    stage(folder, tmp_path / "staged", "root", check_owner=False, max_bytes=10**8)
    os.symlink(folder, tmp_path / "inbound" / "linked")
    with pytest.raises(Refused, match="not a folder"):
        stage(tmp_path / "inbound" / "linked", tmp_path / "staged2", "root", check_owner=False, max_bytes=10**8)


def test_an_oversized_submission_is_refused(tmp_path):
    with pytest.raises(Refused, match="larger than"):
        stage(_entry(tmp_path), tmp_path / "staged", "root", check_owner=True, max_bytes=1000)


@pytest.mark.parametrize("name, text, why", [
    ("broadcasting.ipynb", "{not json", "is not a notebook"),
    ("broadcasting (1).ipynb", None, r"rename `broadcasting \(1\).ipynb` to `broadcasting.ipynb`, and submit again"),
    ("notes.txt", "hello", "holds no notebook"),
])
def test_a_notebook_that_is_not_json_or_not_the_assignments_is_refused(tmp_path, name, text, why):
    (tmp_path / name).write_text(SOURCE.read_text() if text is None else text)
    with pytest.raises(Refused, match=why):
        check_notebooks(tmp_path, ["broadcasting"])


def test_the_secret_is_read_from_a_regular_file_only(tmp_path):
    (tmp_path / "submission_secret.txt").write_text("abc")
    assert read_secret(tmp_path) == "abc"
    (tmp_path / "submission_secret.txt").unlink()
    os.mkfifo(tmp_path / "submission_secret.txt")  # would block a plain read forever
    assert read_secret(tmp_path) is None


# --- the ledger -------------------------------------------------------------------------------------------

def test_each_state_is_recorded_before_its_step_and_a_start_counts_an_attempt(ledger):
    _queued(ledger, "a")
    ledger.start("a")
    ledger.start("a")
    e = ledger.get("a")
    assert e.state == GRADING and e.attempts == 2 and e.started_at is not None
    ledger.finish("a", GRADED, score=12, max_score=16)
    assert ledger.get("a").state == GRADED and ledger.last_graded("ada", "broadcasting").entry == "a"
    assert ledger.last_graded("bob", "broadcasting") is None
    assert ledger.known() == {"a"}


def test_the_seed_is_drawn_once_and_kept_across_restarts(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    first = Ledger(url)
    seed = first.seed("broadcasting")
    first.close()
    again = Ledger(url)
    assert again.seed("broadcasting") == seed and again.seed("strides") != seed
    assert again.seed("broadcasting", fixed=7) == 7  # the course's own TrustedVerdicts.seed wins
    again.close()


def test_kept_verdicts_are_never_overwritten(ledger):
    ledger.keep_verdicts("broadcasting", "e1", "ada", [("k", {"fast": passed("fast", "1.1x")})])
    ledger.keep_verdicts("broadcasting", "e2", "bob", [("k", {"fast": failed("fast", Reason.TOO_SLOW, "5x")})])
    assert ledger.verdicts("broadcasting") == {"k": {"fast": passed("fast", "1.1x")}}


def test_the_ledger_sits_beside_a_sqlite_gradebook_and_inside_any_other(tmp_path, monkeypatch):
    course = make_course(tmp_path / "course")
    assert ledger_url(course) == f"sqlite:///{course.root / 'vecgrade-serve.db'}"
    assert not ledger_exists(course) and not (course.root / "vecgrade-serve.db").exists()
    monkeypatch.setattr(type(course), "db_url", property(lambda self: "postgresql+psycopg2://u@h/db"))
    assert ledger_url(course) == "postgresql+psycopg2://u@h/db"
    assert lock_path(course) == course.root / ".vecgrade-gradebook.lock"


# --- one writer of the gradebook --------------------------------------------------------------------------

def test_the_gradebook_lock_lets_one_holder_in_and_says_who_holds_it(tmp_path):
    course = make_course(tmp_path / "course")
    held, release = threading.Event(), threading.Event()

    def batch():
        with gradebook_lock(course, "vecgrade grade"):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=batch)
    thread.start()
    held.wait(10)
    told: list[str] = []
    with pytest.raises(InterruptedError):
        with gradebook_lock(course, "vecgrade serve", waiting=told.append, stop=lambda: True):
            pass
    assert told == [f"vecgrade grade (pid {os.getpid()})"]
    release.set()
    thread.join()
    with gradebook_lock(course, "vecgrade serve", stop=lambda: True):  # free: taken at once
        assert lock_path(course).read_text().startswith("vecgrade serve")


# --- what the student reads -------------------------------------------------------------------------------

def test_a_page_is_published_where_fetch_feedback_looks_for_it(tmp_path):
    written = pages.publish(tmp_path, "s3cret", ["broadcasting"], pages.page("Not graded", "because <b>"))
    assert written == [tmp_path / "feedback" / f"{notebook_hash(secret='s3cret', notebook_id='broadcasting')}.html"]
    assert stat.S_IMODE(os.stat(tmp_path / "feedback").st_mode) == 0o711
    assert stat.S_IMODE(os.stat(written[0]).st_mode) == 0o644
    assert "because &lt;b&gt;" in written[0].read_text()


def test_the_banner_goes_to_the_top_of_nbgraders_page(tmp_path):
    page = tmp_path / "f.html"
    page.write_text('<html><body class="x"><h1>feedback</h1></body></html>')
    pages.add_banner(page, "next grading at 10:10")
    assert page.read_text().index("next grading at 10:10") < page.read_text().index("<h1>")


def test_one_log_line_says_who_what_how_long_and_how_it_ended(ledger):
    _queued(ledger, "a")
    ledger.start("a")
    ledger.finish("a", GRADED, score=12, max_score=16)
    line = outcome_line(ledger.get("a"))
    assert line.startswith("student=ada assignment=broadcasting queued=") and "grading=" in line
    assert line.endswith("outcome=graded 12/16")
    ledger.add("b", "ada", "broadcasting", "", "bob", REFUSED, "the folder belongs to bob")
    assert outcome_line(ledger.get("b")).endswith("outcome=refused: the folder belongs to bob")


# --- the queue, the restart, the CLI ----------------------------------------------------------------------

def _served_course(tmp_path):
    course = make_course(tmp_path / "course")
    (course.root / "exchange" / "vecgrade" / "inbound").mkdir(parents=True)
    return course


def test_status_shows_the_queue_only_where_a_service_ran(tmp_path):
    course = _served_course(tmp_path)
    assert queue_status(course, ["broadcasting"]) is None
    ledger = Ledger(ledger_url(course))
    _queued(ledger, "w")
    ledger.add("r", "ada", "broadcasting", "", "bob", REFUSED, "the folder belongs to bob")
    _queued(ledger, "g", student="cy")
    ledger.start("g")
    ledger.finish("g", GRADED)
    ledger.close()
    [s] = queue_status(course, ["broadcasting"])
    assert [e.entry for e in s.waiting] == ["w"] and [e.entry for e in s.refused] == ["r"]
    assert [e.entry for e in s.graded_last_hour] == ["g"]
    assert queue_status(course, ["broadcasting"], now=time.time() + 7200)[0].graded_last_hour == []
    out = CliRunner().invoke(app, ["status", "broadcasting", "-c", str(course.root)], env={"COLUMNS": "250"})
    assert out.exit_code == 0 and "refused r (folder of bob): the folder belongs to bob" in out.output


def test_a_restart_takes_up_interrupted_gradings_at_most_max_attempts_times(tmp_path):
    course = _served_course(tmp_path)
    ledger = Ledger(ledger_url(course))
    for name, attempts in (("once", 1), ("thrice", 3)):
        _queued(ledger, name, student=name)
        for _ in range(attempts):
            ledger.start(name)
    ledger.close()
    service = Service(course, ["broadcasting"])
    try:
        service.start()
        assert service.ledger.get("once").state == QUEUED
        thrice = service.ledger.get("thrice")
        assert thrice.state == REFUSED and "interrupted 3 times" in thrice.reason
    finally:
        service.close()


def test_serve_refuses_a_mistake_in_one_line(tmp_path):
    course = make_course(tmp_path / "course")
    runner = CliRunner()
    out = runner.invoke(app, ["serve", "nosuch", "-c", str(course.root)])
    assert out.exit_code == 2 and "no assignment 'nosuch'; choose one of:" in out.output
    out = runner.invoke(app, ["serve", "-c", str(course.root), "--jobs", "1"])
    assert out.exit_code == 2 and "no inbound folder at" in out.output and "Traceback" not in out.output
    (course.root / "exchange" / "vecgrade" / "inbound").mkdir(parents=True)
    with serving(course):
        out = runner.invoke(app, ["serve", "-c", str(course.root), "--jobs", "1"])
    assert out.exit_code == 2 and "vecgrade serve is already running" in out.output


def test_a_failure_of_the_service_itself_retries_the_batch_then_refuses_it(tmp_path, monkeypatch):
    course = _served_course(tmp_path)
    service = Service(course, ["broadcasting"])
    try:
        _queued(service.ledger, "e")

        def broken(assignment, batch):
            for e in batch:
                service.ledger.start(e.entry)
            raise RuntimeError("database is locked")

        monkeypatch.setattr(service, "grade", broken)
        monkeypatch.setattr(service.settings, "poll_interval", 0.0)
        for attempt in (1, 2):
            assert service.step()
            assert service.ledger.get("e").state == QUEUED and service.ledger.get("e").attempts == attempt
        assert service.step()
        e = service.ledger.get("e")
        assert e.state == REFUSED and "interrupted 3 times (RuntimeError: database is locked)" in e.reason
        assert not service.step()  # nothing left to do
    finally:
        service.close()


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (from /proc: field 5 of stat is the group)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat_line = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat_line.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(pid))
    return found


@pytest.mark.e2e  # the whole `vecgrade serve`, its jail's preflight and its worker processes (about 10 s)
def test_sigterm_to_the_service_and_its_workers_stops_it_quietly(tmp_path):
    """systemd, docker stop or a terminal signal the whole process group: the service and the worker processes it
    forked each get the SIGTERM. The workers once raised the service's KeyboardInterrupt and printed a traceback
    each; now the service stops them, says it stopped, and exits 0 with nothing on stderr."""
    course = _served_course(tmp_path)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "graders.cli", "serve", "broadcasting", "--jobs", "2"],
                                cwd=course.root, stdout=stdout, stderr=stderr, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while "serving " not in out.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None and "serving " in out.read_text(), out.read_text() + err.read_text()
        assert len(_group(proc.pid)) >= 3, _group(proc.pid)  # control: the signal reaches its workers too
        os.killpg(proc.pid, signal.SIGTERM)
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert code == 0, out.read_text() + err.read_text()
    assert out.read_text().splitlines()[-1].endswith("stopped"), out.read_text()
    assert "Traceback" not in err.read_text() and "KeyboardInterrupt" not in err.read_text(), err.read_text()
    assert _group(proc.pid) == []  # no worker left behind


def test_a_keyboard_interrupt_while_the_service_closes_is_one_line_and_exit_0(tmp_path, monkeypatch):
    """A second SIGTERM (or Ctrl-C) while the service is closing reaches the command: one line, no traceback."""
    course = _served_course(tmp_path)

    def interrupted(self):
        raise KeyboardInterrupt("signal 15")

    monkeypatch.setattr(Service, "run", interrupted)
    out = CliRunner().invoke(app, ["serve", "broadcasting", "-c", str(course.root), "--jobs", "1"])
    assert out.exit_code == 0 and out.output.strip() == "vecgrade serve: stopped", out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_a_batch_that_fails_is_graded_again_one_entry_at_a_time_so_no_classmate_is_refused_for_another(
        tmp_path, monkeypatch):
    """The service graded a batch of two, and one submission broke the batch's grading: the honest classmate was
    refused with it ("grading was interrupted 3 times ..."). Now the batch is taken apart: the classmate is
    graded, and only the one whose own grading fails is tried again, then refused."""
    course = _served_course(tmp_path)
    service = Service(course, ["broadcasting"])
    graded: list[str] = []
    try:
        _queued(service.ledger, "honest", student="ada")
        _queued(service.ledger, "breaks", student="mallory")

        def grade(assignment, batch):
            for e in batch:
                service.ledger.start(e.entry)
            if any(e.student == "mallory" for e in batch):
                raise RecursionError("maximum recursion depth exceeded")
            for e in batch:
                graded.append(e.student)
                service.ledger.finish(e.entry, GRADED, "", 1.0, 1.0)

        monkeypatch.setattr(service, "grade", grade)
        monkeypatch.setattr(service.settings, "poll_interval", 0.0)
        assert service.step()
        assert graded == ["ada"] and service.ledger.get("honest").state == GRADED
        assert service.ledger.get("breaks").state == QUEUED  # its own grading, tried again later
        while service.step():
            pass
        assert service.ledger.get("breaks").state == REFUSED and graded == ["ada"]
    finally:
        service.close()
