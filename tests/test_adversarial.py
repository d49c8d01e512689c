"""The adversarial suite: every case of tests/adversarial.py through the real `nbgrader autograde`.

Each case scores exactly what it deserves on `batch_outer` (zero on the
parts it cheats, full marks on the parts it earned), the stubs it left score
zero, its escape attempts are seen failing inside the kernel, and the
gradebook ends up holding only scores that grading gave.
"""
import csv

import nbformat
import pytest
from nbgrader.api import Gradebook

from graders.course.grade import UNGRADED, grade_class
from graders.model.exercise import PARTS

from adversarial import CASES
from adversarial_resources import JAIL_CONFIG
from tests.testkit import generated_course


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("adversarial") / "course", broadcasting, extra_config=JAIL_CONFIG)
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    for case in CASES:
        dest = course.root / "submitted" / case.name / "broadcasting" / "broadcasting.ipynb"
        dest.parent.mkdir(parents=True)
        case.write(release, dest)
    results = grade_class(course, "broadcasting", [c.name for c in CASES])
    return course, {r.student: r for r in results}


def test_the_suite_is_large_enough():
    assert len(CASES) >= 25 and len({c.name for c in CASES}) == len(CASES)


def _only_fast_lost(got: tuple, deserves: tuple) -> bool:
    return got[:2] == deserves[:2] and deserves[2] > 0 and got[2] == 0


@pytest.mark.e2e
@pytest.mark.parametrize("case", [c for c in CASES if c.deserves is not None], ids=lambda c: c.name)
def test_case_scores_what_it_deserves(graded, broadcasting, case):
    course, results = graded
    assert results[case.name].success, results[case.name].reason
    scores = course.part_scores(broadcasting)[case.name]
    got = tuple(scores[f"batch_outer_{p}"] for p in PARTS)
    if got != case.deserves and _only_fast_lost(got, case.deserves):
        # an earned "fast" lost to load (the suite's other worker runs e2e tests beside this one): one regrade,
        # which must then give every mark; a cheat never gets a second try (it deserves no "fast" to lose)
        assert grade_class(course, "broadcasting", [case.name])[0].success
        scores = course.part_scores(broadcasting)[case.name]
        got = tuple(scores[f"batch_outer_{p}"] for p in PARTS)
    assert got == case.deserves, f"{case.name} ({case.about}): got {got}, deserves {case.deserves}"
    others = {k: v for k, v in scores.items() if not k.startswith("batch_outer_")}
    assert set(others.values()) == {0.0}, others


@pytest.mark.e2e
@pytest.mark.parametrize("case", [c for c in CASES if c.shows], ids=lambda c: c.name)
def test_escape_attempts_fail_inside_the_kernel(graded, case):
    course, _ = graded
    nb = nbformat.read(course.root / "autograded" / case.name / "broadcasting" / "broadcasting.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert case.shows in printed, printed[:2000]


@pytest.mark.e2e
@pytest.mark.parametrize("case", [c for c in CASES if c.deserves is None], ids=lambda c: c.name)
def test_ungradable_submissions_get_a_could_not_grade_record(graded, case):
    course, results = graded
    assert not results[case.name].success
    with open(course.root / UNGRADED, newline="") as f:
        record = {r["student"]: r["reason"] for r in csv.DictReader(f)}
    assert case.name in record and record[case.name]
    assert "NbGraderException" not in record[case.name]  # the real cause, not nbgrader's wrapper


@pytest.mark.e2e
def test_the_gradebook_holds_only_scores_that_grading_gave(graded):
    course, results = graded
    with Gradebook(course.db_url) as gb:
        for notebook in gb.find_assignment("broadcasting").notebooks:
            for cell in notebook.grade_cells:
                assert cell.max_score in (1.0, 2.0)  # the source's points, whatever a student wrote
        for student in gb.students:
            try:
                sub = gb.find_submission("broadcasting", student.id)
            except Exception:  # noqa: BLE001 - the case nbgrader could not read has no submission
                continue
            assert sub.max_score == 16.0
            graded_ok = results[student.id].success
            for nb in sub.notebooks:
                for grade in nb.grades:
                    allowed = (0.0, grade.max_score) if graded_ok else (None,)  # ungraded: no score at all
                    assert grade.auto_score in allowed, (student.id, grade.name, grade.auto_score)
