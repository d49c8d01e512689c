"""One submission's trouble stays its own, through the whole engine: a notebook hostile to the grader itself beside
honest classmates (``vecgrade grade --jobs 2``, a Dask cluster, a new kind of executor), hostile notebooks drawn by
Hypothesis through the one job function, and plain ``nbgrader autograde`` grading as ``vecgrade grade`` does."""
import csv
import os
import subprocess
import sys

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell

from graders.course.demo import deserved_marks, submit_class
from graders.course.personas import FULL, Persona, loop_answer
from graders.coursedir.paths import Step
from graders.engine import executors
from graders.engine.coordinator import Engine
from graders.engine.job import grade
from graders.engine.request import SubmissionStatus
from graders.pipeline.master import release_cells

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e
SEED = "c.TrustedVerdicts.seed = 7"
DEEP = "junk = " + " + ".join(["0"] * 600) + "\n"  # a scratch cell no answer reaches
NESTED = "junk = " + "(" * 1000 + "0" + ")" * 1000 + "\n"  # too many parentheses for Python: a syntax error


def _people(broadcasting):
    honest = [Persona(f"honest{i}", "vectorized answers", lambda ex: ex.reference_source(), lambda name: FULL)
              for i in range(3)]
    loops = Persona("looper", "kept the loops", loop_answer, lambda name: (1.0, 0.0, 0.0))
    # a scratch cell that Python itself refuses costs nothing where no answer reaches it
    nested = Persona("nested", "a scratch cell with a syntax error", lambda ex: ex.reference_source(),
                     lambda name: FULL, extra_cells=[NESTED])
    hostile = [Persona("deep", "a deep scratch cell", lambda ex: ex.reference_source(), lambda name: FULL,
                       extra_cells=[DEEP])]
    return honest + [loops, nested], hostile


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("hostile") / "course", broadcasting, extra_config=SEED)
    honest, hostile = _people(broadcasting)
    submit_class(course, "broadcasting", honest + hostile)
    return course, honest, hostile


def _marks(course, broadcasting, students):
    scores = course.part_scores(broadcasting)
    return {s: scores.get(s) for s in students}


def _deserved(broadcasting, persona):
    return {f"{ex.name}_{p}": m for ex in broadcasting.exercises
            for p, m in zip(("correct", "vectorized", "fast"), deserved_marks(ex, persona), strict=True)}


def test_a_notebook_hostile_to_the_grader_costs_no_classmate_anything(hostile_class, broadcasting):
    course, honest, hostile = hostile_class
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
               COLUMNS="200")
    proc = subprocess.run(["vecgrade", "grade", "broadcasting", "--jobs", "2"], cwd=course.root, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    marks = _marks(course, broadcasting, [p.student for p in honest + hostile])
    for persona in honest:
        assert marks[persona.student] == _deserved(broadcasting, persona), persona.student
    for persona in hostile:  # not graded, with its reason, and never a 0
        assert marks[persona.student] is None
        assert persona.student in proc.stdout + proc.stderr
    with open(course.root / "ungraded.csv") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert set(rows) == {p.student for p in hostile}
    assert all("nests expressions" in rows[p.student]["reason"] for p in hostile)  # the student-worded reason


def test_on_a_dask_cluster_and_a_new_executor_too(hostile_class, broadcasting, dask_scheduler, monkeypatch):
    course, honest, hostile = hostile_class
    monkeypatch.setitem(executors.EXECUTORS, "thread", "tests.testkit.thread_executor:Threads")
    students = [p.student for p in honest + hostile]
    for address in (dask_scheduler, "thread://"):
        with Engine(course, "broadcasting", scheduler=address) as engine:
            results = {r.student: r for r in engine.grade(students)}
        assert {s for s, r in results.items() if r.success} == {p.student for p in honest}, address
        assert all("nests expressions" in results[p.student].reason and not results[p.student].recorded
                   for p in hostile), address
        marks = _marks(course, broadcasting, [p.student for p in honest])
        assert all(marks[p.student] == _deserved(broadcasting, p) for p in honest), address


def test_plain_nbgrader_autograde_grades_as_vecgrade_grade_does(hostile_class, broadcasting):
    course, honest, _ = hostile_class
    students = [honest[0].student, honest[-1].student]  # reference answers and loops
    with Engine(course, "broadcasting") as engine:
        assert all(r.success for r in engine.grade(students))
    by_vecgrade = _marks(course, broadcasting, students)
    with course.api() as api:
        for student in students:
            assert api.autograde("broadcasting", student, force=True, create=True)["success"]
    assert _marks(course, broadcasting, students) == by_vecgrade


# -- hostile notebooks through the one job function ----------------------------------------------------------------
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=4), max_leaves=20)
HOSTILE_CELLS = st.one_of(
    st.integers(50, 3000).map(lambda n: "junk = " + " + ".join(["0"] * n)),
    st.integers(50, 2500).map(lambda n: "junk = " + "[" * n + "]" * n),
    st.integers(1, 400).map(lambda n: "if True:\n" + "".join(" " * i + "if True:\n" for i in range(1, n)) +
                            " " * n + "pass\n"),
    st.integers(10_000, 400_000).map(lambda n: "# " + "x" * n),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12).map(
        lambda name: f"%%{name}\nfor i in range(3):\n    pass\n"),
    st.text(max_size=200),
)


@pytest.fixture(scope="module")
def job_request(hostile_class):
    course = hostile_class[0]
    with Engine(course, "broadcasting", confined=False) as engine:
        engine._master = release_cells(course.db_url, "broadcasting")
        request = engine.request_for("honest0")
    release = nbformat.read(course.paths.notebook(Step.RELEASE, "broadcasting"), as_version=4)
    return request, release


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cell=HOSTILE_CELLS, metadata=JSON, markdown=st.booleans())
def test_the_job_never_raises_for_a_hostile_notebook(job_request, tmp_path_factory, cell, metadata, markdown):
    request, release = job_request
    folder = tmp_path_factory.mktemp("job")
    nb = nbformat.from_dict(release)
    made = new_markdown_cell(cell) if markdown else new_code_cell(cell)
    made.metadata["odd"] = metadata
    nb.cells.insert(len(nb.cells) // 2, made)
    nbformat.write(nb, folder / "broadcasting.ipynb")
    request.folder = str(folder)
    outcome = grade(request)
    assert outcome.status in SubmissionStatus and len(outcome.message) <= 300
    if outcome.graded:
        assert outcome.notebooks and all(v.graded for parts in outcome.verdicts.values() for v in parts.values())
    else:
        assert outcome.message and not outcome.notebooks


# -- no student waits on another -------------------------------------------------------------------------------------
def _sleepy(ex):
    """An answer whose own cell sleeps while its program loads, for the first two exercises; the stubs left."""
    if ex.name in ("batch_outer", "pairwise_sq_dists"):
        return "import time\ntime.sleep(2.5)\n" + ex.reference_source()
    return None


def _stubs_and_references(ex):
    return None if ex.name in ("standardize_columns", "softmax_rows") else ex.reference_source()


def test_students_who_spend_their_budget_holding_a_classmates_programs_cost_the_classmate_nothing(
        tmp_path, broadcasting):
    """Two students whose own slow code spends a short budget while their stubs are the same programs as a
    classmate's stubs: the classmate never waits for them and is recorded with every mark it earned (it was left
    "internal: its deferred verdicts never arrived", nothing recorded)."""
    course = generated_course(tmp_path / "course", broadcasting,
                              extra_config=SEED + "\nc.TrustedVerdicts.notebook_timeout = 6")
    slow = [Persona(f"slow{i}", "sleeps while loading", _sleepy, lambda name: FULL) for i in range(2)]
    classmate = Persona("classmate", "two answers, two stubs", _stubs_and_references,
                        lambda name: FULL if name in ("batch_outer", "pairwise_sq_dists") else (0.0, 0.0, 0.0))
    submit_class(course, "broadcasting", [*slow, classmate])
    with Engine(course, "broadcasting", jobs=2) as engine:
        results = {r.student: r for r in engine.grade(["slow0", "slow1", "classmate"])}
    assert results["classmate"].success, results["classmate"].reason
    assert _marks(course, broadcasting, ["classmate"])["classmate"] == _deserved(broadcasting, classmate)
    for student in ("slow0", "slow1"):  # their own slowness earns what it earns: recorded, never "not graded"
        assert results[student].success, results[student].reason
