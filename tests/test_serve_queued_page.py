"""The queued page, both ways: a submission the service queues gets a page at once, where ``nbgrader
fetch_feedback`` looks for its feedback, with its place in the queue and an estimate made from the gradings observed
(or the words that there is none yet); a refused one gets its refusal instead; a later page replaces it."""
from __future__ import annotations

import time

import pytest
from nbgrader.utils import notebook_hash

from graders.course.demo import make_course
from graders.pipeline.safecopy import Caps
from graders.serve.admission import Admission
from graders.serve.estimate import RECENT, duration, estimate
from graders.serve.ledger import GRADED, QUEUED, REFUSED, Ledger, ledger_url

A = "broadcasting"
TS = "2025-01-01 10:00:00.000000 UTC"


def test_the_estimate_is_the_median_grading_times_the_rounds_before_its_turn():
    found = estimate(3, 2, [10.0, 30.0, 11.0, 9.0, 12.0])
    assert (found.typical, found.rounds, found.seconds, found.observed) == (11.0, 2, 22.0, 5)
    words = found.words()
    assert "number 3 in the queue (2 submissions ahead of yours)" in words and "about 22 seconds" in words
    assert "the middle one took 11 seconds" in words and "2 submissions are graded at a time" in words
    assert estimate(1, 1, [5.0] * (RECENT + 10)).observed == RECENT  # only the recent ones


def test_without_an_observed_grading_the_page_says_there_is_no_estimate():
    found = estimate(1, 1, [])
    assert found.seconds is None and "next in the queue" in found.words()
    assert "no estimate" in found.words() and "about" not in found.words()


@pytest.mark.parametrize("seconds, said", [(0.2, "1 second"), (40, "40 seconds"), (600, "10 minutes"),
                                           (5400, "1.5 hours")])
def test_a_duration_reads_as_a_student_says_it(seconds, said):
    assert duration(seconds) == said


@pytest.fixture
def served(tmp_path):
    course = make_course(tmp_path / "course")
    exchange = course.root / "exchange" / "vecgrade"
    (exchange / "inbound").mkdir(parents=True)
    ledger = Ledger(ledger_url(course))
    admission = Admission(course, ledger, exchange, tmp_path / "staging", [A], False, False, Caps(10**6), "UTC",
                          workers=1)
    yield admission, exchange, ledger
    ledger.close()


def _inbound(exchange, student: str) -> tuple[str, str]:
    name = f"{student}+{A}+{TS}+x"
    folder = exchange / "inbound" / name
    folder.mkdir()
    (folder / f"{A}.ipynb").write_text("{}")
    (folder / "submission_secret.txt").write_text(f"secret-{student}")
    return name, str(exchange / "feedback" / f"{notebook_hash(secret=f'secret-{student}', notebook_id=A)}.html")


def test_a_queued_submission_gets_its_place_and_estimate_at_once_and_a_later_page_replaces_it(served):
    admission, exchange, ledger = served
    now = time.time()
    for k, took in enumerate([20.0, 40.0, 30.0]):  # observed gradings: the middle one took 30 s
        ledger.add(f"old{k}", f"o{k}", A, TS, "", seen_at=now - 100)
        ledger.set(f"old{k}", state=GRADED, started_at=now - 90, finished_at=now - 90 + took)
    ledger.add("ahead", "bo", A, TS, "bo", seen_at=now - 5)  # one submission waits before ada's
    name, page = _inbound(exchange, "ada")
    admission._record(name, "ada", A, TS, QUEUED, "", "ada")
    assert ledger.get(name).state == QUEUED
    with open(page) as f:
        text = f.read()
    assert "Queued" in text and "number 2 in the queue (1 submission ahead of yours)" in text
    assert "about 1 minutes" not in text and "about 60 seconds" in text and "the middle one took 30 seconds" in text
    admission.page_for(ledger.get(name), "Graded", "your verdicts")  # as the release's page does: same file
    with open(page) as f:
        assert "your verdicts" in f.read()


def test_a_refused_submission_gets_its_refusal_not_a_queued_page(served):
    admission, exchange, ledger = served
    name, page = _inbound(exchange, "cy")
    admission._record(name, "cy", A, TS, REFUSED, "the folder holds a symlink", "cy")
    with open(page) as f:
        text = f.read()
    assert "not graded: the folder holds a symlink" in text and "Queued" not in text and "in the queue" not in text
