"""Verdicts on submit, end to end: real Unix students, nbgrader's own exchange and clients, ``vecgrade serve``.

Each student is a fresh Unix user whose environment holds only nbgrader; they fetch, answer and submit
as themselves, and fetch their feedback with ``nbgrader fetch_feedback``. One service serves the whole
module; one test kills it with SIGKILL and starts it again, the last stops it with SIGTERM.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from nbgrader.api import Gradebook
from serve_kit import VECGRADE, entries, release_and_fetch, running, students, wait_for, world_exchange

from graders import KIT_ROOT
from graders.course.demo import deserved_marks
from graders.course.lock import gradebook_lock
from graders.course.marks import exercise_marks
from graders.course.personas import FULL, Persona, load_roster, loop_answer
from graders.model.exercise import PARTS, load_assignment
from graders.model.notebook import submission_cells
from graders.model.verdict import Reason, failed, passed
from graders.serve.ledger import GRADED, LATE, REFUSED, SUPERSEDED, Ledger, ledger_url
from graders.serve.sharing import kept_key
from graders.serve.watcher import read_secret

from tests.testkit import generated_course

pytestmark = [pytest.mark.e2e, pytest.mark.root]  # students are Unix users (useradd)
A = "broadcasting"
WINDOW = 600  # Serve.min_interval: the default
ROSTER = {p.student: p for p in load_roster(KIT_ROOT, load_assignment(KIT_ROOT / "assignments" / f"{A}.py"))}
KILLS_ITS_KERNEL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
FLOODS = "print('x' * 10_000_000)\n"
# vectorized answers, with a scratch cell that floods the output and one that kills the kernel
ROUGH = Persona("rough", "answers right, floods its output and kills its kernel",
                ROSTER["ada"].answers, lambda name: FULL, extra_cells=[FLOODS, KILLS_ITS_KERNEL])
PLANTED = "planted: the verdict of an earlier grading of this very program"


def _own(source: str) -> str:
    """A program of cy's own (kept verdicts are per program, for every student who writes it): the same code with a
    first line that computes nothing."""
    return source.replace("):\n", "):\n    planted = True\n", 1)


# cy: the vectorized answers, the first exercise's a program no other student writes
CY = Persona("cy", "vectorized answers, the first his own program", lambda ex: _own(ex.reference_source())
             if ex.name == load_assignment(KIT_ROOT / "assignments" / f"{A}.py").exercises[0].name
             else ex.reference_source(), lambda name: FULL)


@pytest.fixture(scope="module")
def world(tmp_path_factory, broadcasting):
    """A course whose exchange every user reaches, eight students, and the running service."""
    with world_exchange() as exchange, students(["ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"], exchange,
                                                 "vecgrade") as people:
        config = f"c.Exchange.root = {str(exchange)!r}\n"
        course = generated_course(tmp_path_factory.mktemp("serve") / "course", broadcasting, extra_config=config)
        release_and_fetch(course, people, A)
        _plant_verdicts(course, broadcasting, people["cy"].name)
        with running(course, "--jobs", "1") as service:
            yield course, people, service, exchange


def _release_nb(course):
    return nbformat.read(course.root / "release" / A / f"{A}.ipynb", as_version=4)


def _plant_verdicts(course, assignment, student):
    """Before the service starts: kept verdicts for cy's program of the first exercise (which he will
    submit unchanged) and for a loop version of the second (which he will not)."""
    ledger = Ledger(ledger_url(course))
    seed = ledger.seed(A)
    first, second = assignment.exercises[:2]
    cells = submission_cells(CY.notebook(_release_nb(course), assignment), assignment)
    looped = Persona("x", "", lambda ex: _own(loop_answer(ex)), lambda name: FULL).notebook(_release_nb(course),
                                                                                          assignment)
    planted = {"correct": passed("correct", PLANTED), "vectorized": passed("vectorized", PLANTED),
               "fast": failed("fast", Reason.TOO_SLOW, PLANTED)}
    failing = {p: failed(p, Reason.WRONG_VALUE, PLANTED) for p in PARTS}
    ledger.keep_verdicts(A, "planted", student, [
        (kept_key(course, A, seed, cells, first.name), planted),
        (kept_key(course, A, seed, submission_cells(looped, assignment), second.name), failing)])
    ledger.close()


def _marks(course, student):
    with Gradebook(course.db_url) as gb:
        sub = gb.find_submission(A, student)
        return {g.name: g.score for nb in sub.notebooks for g in nb.grades}


def _final(course, student, n=1):
    """Wait until ``n`` of the student's submissions are finished; return them."""
    return wait_for(lambda: (lambda es: es if len(es) >= n else None)(
        [e for e in entries(course, student) if e.state not in ("queued", "grading")]), 240,
        f"{n} finished submission(s) of {student}")


def _submit(student, *args):
    student.nbgrader("submit", A, *args)
    return time.time()


def test_each_student_fetches_only_their_own_deserved_verdicts(world, broadcasting):
    course, people, service, exchange = world
    ada, bob = people["ada"], people["bob"]
    ada.answer(broadcasting, ROSTER["ada"])
    bob.answer(broadcasting, ROSTER["bob"])
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(_submit, [ada, bob]))
    for s, persona in ((ada, ROSTER["ada"]), (bob, ROSTER["bob"])):
        [e] = _final(course, s.name)
        assert e.state == GRADED and e.owner == s.name, e
        s.nbgrader("fetch_feedback", A)
        [page] = s.feedback_pages(A).values()
        marks = _marks(course, s.name)
        for ex in broadcasting.exercises:
            assert exercise_marks(ex, marks) == deserved_marks(ex, persona), (s.name, ex.name)
        for part in PARTS:  # the page holds the deserved verdict of every part
            deserved = sum(persona.deserves(ex.name)[PARTS.index(part)] for ex in broadcasting.exercises)
            assert len(re.findall(rf"\b{part}: passed\.", page)) == deserved, (s.name, part)
        assert "Graded on submit at" in page and "can be graded from" in page
    assert "NotVectorized" in bob.feedback_pages(A).popitem()[1]
    listing = bob.run("ls", str(exchange / "vecgrade" / "feedback"), check=False)
    assert listing.returncode != 0 and "Permission denied" in listing.stderr  # no one lists others' feedback
    assert any(f"student={ada.name} assignment={A} queued=" in line and "outcome=graded 16/16" in line
               for line in service.lines())


def test_a_submission_under_another_students_name_is_refused(world, broadcasting):
    course, people, service, _ = world
    ada, bob = people["ada"], people["bob"]
    _final(course, ada.name)
    before, secret = _marks(course, ada.name), read_secret(course.root / "submitted" / ada.name / A)
    bob.answer(broadcasting, ROSTER["cy"])  # wrong answers, handed in as ada
    bob.nbgrader("submit", A, "--student", ada.name)
    [e] = wait_for(lambda: [e for e in entries(course, ada.name) if e.state == REFUSED], 120, "the refusal")
    assert e.owner == bob.name and f"belongs to the Unix user {bob.name}" in e.reason, e
    assert _marks(course, ada.name) == before
    assert read_secret(course.root / "submitted" / ada.name / A) == secret
    bob.nbgrader("fetch_feedback", A)
    refusal = [p for p in bob.feedback_pages(A).values() if "Not graded" in p]
    assert len(refusal) == 1 and f"belongs to the Unix user {bob.name}" in refusal[0]
    status = subprocess.run([VECGRADE, "status", A, "-c", str(course.root)], capture_output=True, text=True,
                            env=dict(os.environ, COLUMNS="250"))
    assert f"refused {e.entry}" in status.stdout and bob.name in status.stdout, status.stdout + status.stderr


def test_a_notebook_the_assignment_does_not_have_gets_a_one_line_page_and_costs_nothing(world, broadcasting):
    course, people, _, _ = world
    bob = people["bob"]
    [graded] = _final(course, bob.name)
    before = _marks(course, bob.name)
    bob.run("mv", f"{A}/{A}.ipynb", f"{A}/{A} (1).ipynb")
    try:
        bob.nbgrader("submit", A)
    finally:
        bob.run("mv", f"{A}/{A} (1).ipynb", f"{A}/{A}.ipynb")
    [e] = wait_for(lambda: [e for e in entries(course, bob.name) if e.state == REFUSED], 120, "the refusal")
    assert f"rename `{A} (1).ipynb` to `{A}.ipynb`, and submit again" in e.reason, e
    assert _marks(course, bob.name) == before and e.entry != graded.entry
    bob.nbgrader("fetch_feedback", A)
    assert any(f"not graded: `{A} (1).ipynb` is not a notebook of this assignment" in p
               for p in bob.feedback_pages(A).values())


def test_an_unchanged_program_keeps_its_verdicts_and_a_changed_one_does_not(world, broadcasting):
    course, people, _, _ = world
    cy = people["cy"]
    cy.answer(broadcasting, CY)  # the first exercise as planted; the second not the planted loop
    cy.nbgrader("submit", A)
    [e] = _final(course, cy.name)
    assert e.state == GRADED, e
    first, second = broadcasting.exercises[:2]
    marks = _marks(course, cy.name)
    assert exercise_marks(first, marks) == (first.points.of("correct"), first.points.of("vectorized"), 0.0)
    # changed since the planted (failed) verdicts: graded afresh (its "fast" is timed anew, so only the two
    # parts that do not depend on the machine's load are compared)
    assert exercise_marks(second, marks)[:2] == (second.points.of("correct"), second.points.of("vectorized"))
    cy.nbgrader("fetch_feedback", A)
    [page] = cy.feedback_pages(A).values()
    assert PLANTED in page


def test_submissions_inside_the_window_wait_and_only_the_latest_is_graded(world, broadcasting):
    """dee's last grading is planted in the ledger: it began now, so her window (the default 10 minutes)
    is closed; the test opens it by moving that grading 10 minutes back, as time would."""
    course, people, _, _ = world
    dee = people["dee"]
    ledger = Ledger(ledger_url(course))
    ledger.add("planted-grading", dee.name, A, "2000-01-01 00:00:00 UTC", dee.name, GRADED)
    ledger.set("planted-grading", started_at=time.time(), finished_at=time.time())
    dee.answer(broadcasting, ROSTER["bob"])
    dee.nbgrader("submit", A)
    dee.answer(broadcasting, ROSTER["ada"])
    dee.nbgrader("submit", A)
    waiting = wait_for(lambda: (lambda es: es if len(es) == 2 else None)(
        [e for e in entries(course, dee.name) if e.not_before]), 120, "two waiting submissions")
    assert all(e.state == "queued" for e in waiting), waiting
    dee.nbgrader("fetch_feedback", A)
    assert sum("Waiting for your grading window" in p for p in dee.feedback_pages(A).values()) == 2
    assert all(e.state == "queued" for e in entries(course, dee.name) if e.entry in {w.entry for w in waiting})
    opened = time.time()
    ledger.set("planted-grading", started_at=opened - WINDOW)  # the window opens now
    ledger.close()
    done = _final(course, dee.name, 3)
    by_state = {e.state: e for e in done if e.entry != "planted-grading"}
    assert set(by_state) == {GRADED, SUPERSEDED}, done
    assert by_state[GRADED].started_at >= opened  # not before the window opened
    marks = _marks(course, dee.name)  # the latest (vectorized) one was graded, not the loops
    assert all(exercise_marks(ex, marks)[:2] == deserved_marks(ex, ROSTER["ada"])[:2] for ex in broadcasting.exercises)
    dee.nbgrader("fetch_feedback", A)
    pages = dee.feedback_pages(A)
    assert any("Graded on submit" in p for p in pages.values())
    assert any("only the latest one in a grading window is graded" in p for p in pages.values())


def test_while_the_batch_holds_the_gradebook_the_service_waits(world, broadcasting):
    course, people, service, _ = world
    hal = people["hal"]
    hal.answer(broadcasting, ROSTER["ada"])
    with gradebook_lock(course, "vecgrade grade"):  # what `vecgrade grade` holds for its whole run
        hal.nbgrader("submit", A)
        wait_for(lambda: any("waiting for the gradebook, held by vecgrade grade" in line for line in service.lines()),
                 120, "the service to wait for the gradebook")
        time.sleep(2)
        assert [e.state for e in entries(course, hal.name)] == ["queued"]  # nothing begun, nothing written
        released = time.time()
    [e] = _final(course, hal.name)
    assert e.state == GRADED and e.started_at >= released, e


def test_sigkill_after_a_burst_loses_nothing_and_records_nothing_twice(world, broadcasting):
    course, people, service, _ = world
    burst = {"eve": ROSTER["eve"], "fay": ROSTER["fay"], "gus": ROUGH}  # a hang, a cheat, a flood + a dead kernel
    for name, persona in burst.items():
        people[name].answer(broadcasting, persona)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(_submit, [people[n] for n in burst]))
    wait_for(lambda: any(e.state == "grading" for e in entries(course)), 120, "a grading to begin")
    service.kill()
    service.start()
    for name, persona in burst.items():
        [e] = _final(course, people[name].name)
        assert e.state == GRADED, e
        marks = _marks(course, people[name].name)
        for ex in broadcasting.exercises:
            assert exercise_marks(ex, marks) == deserved_marks(ex, persona), (name, ex.name)
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda n: people[n].nbgrader("fetch_feedback", A), burst))
    assert all(len(people[n].feedback_pages(A)) == 1 for n in burst)
    assert any("taken up again after an interrupted grading" in line for line in service.lines())
    assert len({e.entry for e in entries(course)}) == len(entries(course))  # each inbound entry recorded once
    with Gradebook(course.db_url) as gb:  # one submission per student, whatever was redone
        subs = gb.find_assignment(A).submissions
        ids = [s.student.id for s in subs]
        assert len(ids) == len(set(ids)) and {people[n].name for n in burst} <= set(ids)


def test_after_the_due_date_a_submission_is_collected_for_the_batch_but_not_graded(world, broadcasting):
    course, people, service, exchange = world
    ada = people["ada"]
    before = _marks(course, ada.name)
    with Gradebook(course.db_url) as gb:  # nbgrader keeps the due date in the gradebook
        gb.update_or_create_assignment(A, duedate="2000-01-01 00:00:00 UTC")
    ada.nbgrader("submit", A)
    [e] = wait_for(lambda: [e for e in entries(course, ada.name) if "due date" in e.reason], 120, "the late one")
    assert e.state == LATE and "collected for your teacher's grading, not graded on submit" in e.reason
    assert read_secret(course.root / "submitted" / ada.name / A) == read_secret(
        exchange / "vecgrade" / "inbound" / e.entry)  # collected: the teacher's batch grades this one
    assert _marks(course, ada.name) == before
    ada.nbgrader("fetch_feedback", A)
    assert any("Collected after the due date" in p and "not graded on submit" in p
               for p in ada.feedback_pages(A).values())
    assert service.stop() == 0 and service.lines()[-1].endswith("stopped")  # SIGTERM: a clean stop

