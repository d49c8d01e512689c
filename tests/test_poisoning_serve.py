"""Issue 27 through ``vecgrade serve``: a verdict is a property of the program, or it is no verdict.

What this guards: a poisoner's first exercise starts a process (``os.posix_spawn``) that SIGKILLs every process
started after it; its other answers are the class's popular correct programs. The service used to grade it,
store crash verdicts under those programs' keys, keep them in its ledger, and hand them to every honest
student who submitted the same programs, even after a restart (the kept verdicts outlive the process). Here an
honest victim submits after the poisoner, and again after a restart of the service: with the old behaviour the
victim lost the marks of the shared programs both times and the ledger held "killed" verdicts under their keys.
"""
from __future__ import annotations

import json

import nbformat
import pytest
from nbgrader.api import Gradebook
from serve_kit import ServiceProcess, entries, students, wait_for, world_exchange
from sqlalchemy import select
from test_poisoning import POISON

from graders.course.personas import FULL, Persona
from graders.model.exercise import PARTS
from graders.model.notebook import submission_cells
from graders.model.verdict import Status, Verdict
from graders.serve.ledger import GRADED, Ledger, kept_verdicts, ledger_url
from graders.serve.sharing import kept_key

from tests.testkit import generated_course

pytestmark = [pytest.mark.e2e, pytest.mark.root]  # students are Unix users (useradd)
A = "broadcasting"


def popular(ex):
    """A correct vectorized program the class wrote, not the course's reference verbatim: the service's warm-up
    grades the reference, so only a program first seen in the poisoner's submission is graded (and kept) there."""
    return ex.reference_source().replace("):\n", "):\n    popular = True\n", 1)


HONEST = Persona("victim", "the reference for batch_outer, the popular programs elsewhere",
                 lambda ex: ex.reference_source() if ex.name == "batch_outer" else popular(ex), lambda name: FULL)
POISONER = Persona("poisoner", "a killer in batch_outer, the popular programs elsewhere",
                   lambda ex: POISON if ex.name == "batch_outer" else popular(ex), lambda name: FULL)


def _graded(course, student, n):
    """The student's ``n`` finished submissions, once there are ``n``; each must be graded."""
    done = wait_for(lambda: (lambda es: es if len(es) >= n else None)(
        [e for e in entries(course, student) if e.state not in ("queued", "grading")]), 300,
        f"{n} finished submission(s) of {student}")
    assert all(e.state == GRADED for e in done), done
    with Gradebook(course.db_url) as gb:
        sub = gb.find_submission(A, student)
        marks = {g.name: g.score for nb in sub.notebooks for g in nb.grades}
        return marks, sub.score, gb.find_assignment(A).max_score


def _full(ex, marks):
    return all(marks.get(ex.grade_id(p)) == ex.points.of(p) for p in PARTS)


def test_a_poisoner_served_first_takes_no_mark_from_a_classmate_even_after_a_restart(tmp_path_factory, broadcasting):
    with world_exchange() as exchange, students(["poisoner", "victim"], exchange, "vecgrade") as people:
        config = f"c.Exchange.root = {str(exchange)!r}\nc.Serve.min_interval = 0\n"
        course = generated_course(tmp_path_factory.mktemp("poison-serve") / "course", broadcasting,
                                  extra_config=config)
        with course.api() as api:
            assert api.release_assignment(A)["success"]
        poisoner, victim = people["poisoner"], people["victim"]
        for s, persona in ((poisoner, POISONER), (victim, HONEST)):
            s.nbgrader("fetch_assignment", A)
            s.answer(broadcasting, persona)
        service = ServiceProcess(course, "--jobs", "1")
        service.start()
        try:
            poisoner.nbgrader("submit", A)
            marks, _, _ = _graded(course, poisoner.name, 1)
            # its disruption costs only its own exercise: the same programs elsewhere keep every mark
            assert all(_full(ex, marks) for ex in broadcasting.exercises[1:]), marks
            victim.nbgrader("submit", A)
            marks, score, max_score = _graded(course, victim.name, 1)
            assert score == max_score and all(_full(ex, marks) for ex in broadcasting.exercises), marks
        finally:
            service.stop()
        # a new service on the same course: what the first one kept in the ledger is all it knows
        service = ServiceProcess(course, "--jobs", "1")
        service.start()
        try:
            victim.nbgrader("submit", A)
            marks, score, max_score = _graded(course, victim.name, 2)
            assert score == max_score and all(_full(ex, marks) for ex in broadcasting.exercises), marks
        finally:
            service.stop()
        ledger = Ledger(ledger_url(course))
        try:
            kept = ledger.verdicts(A)
            with ledger.engine.connect() as conn:  # every row, not only those verdicts() can read as settled
                rows = {r.program_key: r for r in conn.execute(select(kept_verdicts)
                                                               .where(kept_verdicts.c.assignment == A))}
            seed = ledger.seed(A)
        finally:
            ledger.close()
        assert rows and set(rows) == set(kept), rows
        assert all(v.graded for parts in kept.values() for v in parts.values()), kept
        raw = [Verdict.from_json(v) for r in rows.values() for v in json.loads(r.verdicts).values()]
        assert all(v is not None and v.status in (Status.PASSED, Status.FAILED) for v in raw), raw
        # the popular programs were graded from the poisoner's submission (the victim's are the same programs,
        # under the same keys) and kept as passed in every part: no crash verdict under a classmate's key
        release = nbformat.read(course.root / "release" / A / f"{A}.ipynb", as_version=4)
        cells = submission_cells(HONEST.notebook(release, broadcasting), broadcasting)
        poisoned = submission_cells(POISONER.notebook(release, broadcasting), broadcasting)
        for ex in broadcasting.exercises[1:]:
            key = kept_key(course, A, seed, cells, ex.name)
            assert key == kept_key(course, A, seed, poisoned, ex.name), ex.name
            assert key in rows and rows[key].student == poisoner.name, (ex.name, rows.get(key))
            assert all(v.passed for v in kept[key].values()), (ex.name, kept[key])
