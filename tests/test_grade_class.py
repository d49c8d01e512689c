"""`vecgrade grade` on the demo class, as the README runs it, and the same marks serially, on two
processes, on a Dask cluster and into PostgreSQL (all started by the fixtures)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graders import KIT_ROOT
from graders.course.demo import deserved_table
from graders.course.personas import load_roster

from tests.testkit import make_demo_class

pytestmark = pytest.mark.e2e
SEED = "c.TrustedVerdicts.seed = 7  # the same hidden cases in every course of this test"
SOME = ["ada", "bob", "dee", "fay"]  # all marks, loops, partly right, a cheat


def vecgrade(course, *args):
    """The command as a teacher types it: `vecgrade` from PATH, in the course folder."""
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
               COLUMNS="200")
    return subprocess.run(["vecgrade", *args], cwd=course.root, env=env, capture_output=True, text=True,
                          timeout=1200)


def marks(course, students):
    scores = course.part_scores(course.assignments["broadcasting"])
    return {s: scores[s] for s in students}


@pytest.fixture(scope="module")
def readme_course(tmp_path_factory):
    course, students = make_demo_class(tmp_path_factory.mktemp("readme") / "course", extra_config=SEED)
    return course, students, vecgrade(course, "grade", "broadcasting")


def test_the_readme_command_grades_the_whole_class_as_deserved(readme_course):
    course, students, proc = readme_course
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"graded {len(students)} of {len(students)} submissions" in proc.stdout
    people = load_roster(KIT_ROOT, course.assignments["broadcasting"])
    table, wrong = deserved_table(course, "broadcasting", people)
    assert set(course.part_scores(course.assignments["broadcasting"])) == set(students)
    assert wrong == 0


def test_serial_and_two_jobs_give_the_same_marks_and_report_what_failed(readme_course, tmp_path):
    reference = marks(readme_course[0], SOME)
    course, _ = make_demo_class(tmp_path / "course", extra_config=SEED)
    bad = course.root / "submitted" / "zed" / "broadcasting"
    bad.mkdir(parents=True)
    shutil.copy(course.root / "release" / "broadcasting" / "broadcasting.ipynb", bad / "broadcasting (1).ipynb")
    serial = vecgrade(course, "grade", "broadcasting", "--jobs", "1", *[a for s in SOME for a in ("-s", s)])
    assert serial.returncode == 0, serial.stdout + serial.stderr
    assert marks(course, SOME) == reference
    # regraded, two at once: the same marks, no duplicated or lost rows, the bad one named
    parallel = vecgrade(course, "grade", "broadcasting", "--jobs", "2")
    assert parallel.returncode == 1, parallel.stdout + parallel.stderr
    assert "could not grade zed" in parallel.stdout
    assert ("remove or rename broadcasting (1).ipynb in submitted/zed/broadcasting/" in parallel.stdout
            and "then vecgrade grade broadcasting -s zed" in parallel.stdout), parallel.stdout
    assert not (course.root / "autograded" / "zed").exists()  # a refused submission leaves nothing behind
    assert "Traceback" not in parallel.stdout + parallel.stderr
    assert marks(course, SOME) == reference
    assert "zed" not in course.part_scores(course.assignments["broadcasting"])


def test_dask_into_postgresql_gives_the_same_marks(readme_course, tmp_path, dask_scheduler, postgres_url):
    reference = marks(readme_course[0], SOME)
    course, _ = make_demo_class(tmp_path / "course",
                                extra_config=f"{SEED}\nc.CourseDirectory.db_url = {postgres_url!r}")
    assert course.db_url == postgres_url
    proc = vecgrade(course, "grade", "broadcasting", "--scheduler", dask_scheduler,
                    *[a for s in SOME for a in ("-s", s)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marks(course, SOME) == reference
    assert not (course.root / "gradebook.db").exists()


def test_a_pool_measures_each_reference_once_and_every_job_carries_it(readme_course):
    from graders.checks.submission import MACHINE
    from graders.engine.coordinator import Engine
    course = readme_course[0]
    names = [ex.name for ex in course.assignments["broadcasting"].exercises]
    with Engine(course, "broadcasting", jobs=2) as grader:
        definitions = grader.definitions()
        grader.measured = grader.measure_references(definitions)
        request = grader.request_for("ada")
    assert list(grader.measured) == [MACHINE]
    here = grader.measured[MACHINE]
    assert len(here["calibrations"]) == len(names) == len(here["reference_times"])
    assert request.measured == grader.measured
    with Engine(course, "broadcasting", jobs=1) as grader:  # one process measures as it grades
        assert grader.measure_references(grader.definitions()) == {}


def test_a_dask_cluster_measures_each_reference_once_by_machine(readme_course, dask_scheduler):
    from graders.checks.submission import MACHINE
    from graders.engine.coordinator import Engine
    course = readme_course[0]
    with Engine(course, "broadcasting", scheduler=dask_scheduler) as grader:
        measured = grader.measure_references(grader.definitions())
    assert list(measured) == [MACHINE]  # the fixture's workers run on this machine
    assert len(measured[MACHINE]["calibrations"]) == len(course.assignments["broadcasting"].exercises)


def test_unknown_names_exit_2_and_leave_no_trace(tmp_path):
    course, students = make_demo_class(tmp_path / "course")
    before = set(course.part_scores(course.assignments["broadcasting"]))
    proc = vecgrade(course, "grade", "broadcasting", "-s", "nobody")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and "nobody" in line and "ada" in line, line
    assert set(course.part_scores(course.assignments["broadcasting"])) == before
    from nbgrader.api import Gradebook
    with Gradebook(course.db_url) as gb:
        assert "nobody" not in {s.id for s in gb.students}
    proc = vecgrade(course, "grade", "nosuch")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("error: no assignment 'nosuch'") and "broadcasting" in line, line
    assert vecgrade(course, "grade", "broadcasting", "-s", "ada", "--jobs", "1").returncode == 0


class DieOnce:
    """A grading step whose process dies the first time (a marker file, named by the notebook's first cell,
    remembers), then succeeds."""

    def __init__(self, config=None):
        pass

    def __call__(self, nb, resources):
        marker = Path(nb.cells[0].source)
        if not marker.exists() or marker.read_text() == "always":
            marker.write_text(marker.read_text() if marker.exists() else "once")
            os._exit(1)
        nb.cells[0].source = "survived"
        return nb, resources


def _request(tmp_path, step, source: str):
    """A request whose pipeline is ``step`` alone, on a one-cell notebook holding ``source``."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook
    from traitlets.config import Config

    from graders.engine.request import GradingRequest, settings_of
    folder = tmp_path / "submission"
    folder.mkdir(exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(source)]), folder / "broadcasting.ipynb")
    config = Config()
    config.Autograde.sanitize_preprocessors = []
    config.Autograde.autograde_preprocessors = [step]
    empty: dict[str, list] = {"source": [], "grade": [], "solution": [], "task": []}
    return GradingRequest("ada", "broadcasting", {}, settings_of(config), 0, {"broadcasting": empty}, str(folder))


def _one(executor, request):
    """``request``'s outcome through ``executor``, which is closed after."""
    try:
        executor.submit(request)
        done = []
        while not done:
            done = executor.wait()
        [(_, outcome)] = done
        return outcome
    finally:
        executor.close()


@pytest.mark.parametrize("dies", ["once", "always"])
def test_a_grading_process_that_dies_costs_a_retry_then_a_reported_submission(tmp_path, dies, monkeypatch):
    # under pytest-xdist, __main__ is execnet's and has no __spec__, which a spawned process needs
    monkeypatch.setattr(sys.modules["__main__"], "__spec__", None, raising=False)
    import nbformat

    from graders.engine.executors.local import Pool
    if dies == "always":
        (tmp_path / "died").write_text("always")
    outcome = _one(Pool(1), _request(tmp_path, DieOnce, str(tmp_path / "died")))
    if dies == "once":
        assert outcome.graded, outcome.message
        assert nbformat.reads(outcome.notebooks["broadcasting"], as_version=4).cells[0].source == "survived"
    else:
        assert not outcome.graded and "died" in outcome.message and not outcome.notebooks


@pytest.mark.e2e
@pytest.mark.parametrize("dies", ["once", "always"])
def test_a_dask_worker_that_dies_costs_a_rerun_then_a_reported_submission(tmp_path, dask_scheduler, dies):
    """A worker killed mid-task: Dask reruns the task on a live worker; a task that kills every worker
    it meets is reported ungraded (KilledWorker), never half-written."""
    import nbformat
    from distributed import Client

    from graders.engine.executors.dask import Dask
    if dies == "always":
        (tmp_path / "died").write_text("always")
    try:
        outcome = _one(Dask(dask_scheduler), _request(tmp_path, DieOnce, str(tmp_path / "died")))
    finally:
        with Client(dask_scheduler, timeout="60s") as client:  # the nannies restart the killed workers
            client.wait_for_workers(2, timeout=120)
    if dies == "once":
        assert outcome.graded, outcome.message
        assert nbformat.reads(outcome.notebooks["broadcasting"], as_version=4).cells[0].source == "survived"
    else:
        assert not outcome.graded and "KilledWorker" in outcome.message, outcome.message


class RecordPid:
    """A grading step that notes which process ran it (a line per run in the file its notebook's cell names)."""

    def __init__(self, config=None):
        pass

    def __call__(self, nb, resources):
        with open(nb.cells[0].source, "a") as f:
            f.write(f"{os.getpid()}\n")
        return nb, resources


def _pid_request(tmp_path):
    return _request(tmp_path, RecordPid, str(tmp_path / "pids"))


def _pids(tmp_path) -> list[str]:
    return (tmp_path / "pids").read_text().split()


def test_warming_the_services_processes_warms_each_one_and_keeps_them(tmp_path, monkeypatch):
    """`vecgrade serve` warms its grading processes before the first student: each one, and for good (a warm-up
    that closed the pool left the first submission to a fresh, cold process: 17 s instead of 2)."""
    monkeypatch.setattr(sys.modules["__main__"], "__spec__", None, raising=False)
    from graders.engine.executors import executor_for
    executor = executor_for(None, jobs=2)  # what the service keeps
    try:
        executor.warm(_pid_request(tmp_path))
        warm = set(_pids(tmp_path))
        assert len(warm) == 2  # both processes, not one of them twice
        executor.submit(_pid_request(tmp_path))
        [(_, outcome)] = executor.wait()
        assert outcome.graded, outcome.message
        assert _pids(tmp_path)[-1] in warm  # the submission after the warm-up ran in a warm process
    finally:
        executor.close()


@pytest.mark.e2e
def test_warming_a_dask_cluster_runs_the_job_on_every_worker_and_keeps_the_client(tmp_path, dask_scheduler):
    from graders.engine.executors.dask import Dask
    cluster = Dask(dask_scheduler)
    try:
        cluster.warm(_pid_request(tmp_path))
        assert len(set(_pids(tmp_path))) == 2  # each of the two workers
        cluster.submit(_pid_request(tmp_path))
        [(_, outcome)] = cluster.wait()  # the client is still open after the warm-up
        assert outcome.graded, outcome.message
    finally:
        cluster.close()


def _worker_state():
    import sys

    from graders.sandbox.session import ForkServer
    shared = ForkServer._shared
    return {"graders": "graders.engine.job" in sys.modules,
            "server": shared is not None and shared[1].control is not None}


@pytest.mark.e2e
def test_a_preloaded_dask_worker_is_ready_before_its_first_task(dask_scheduler):
    """`--preload graders.engine.dask_worker`: the grading machinery imported and the fork server started when the
    worker starts, not on its first task (about 4 s of the cluster's first results)."""
    from distributed import Client
    with Client(dask_scheduler, timeout="60s") as client:
        states = client.run(_worker_state)
    assert len(states) == 2 and all(s == {"graders": True, "server": True} for s in states.values()), states


def test_the_dask_preload_starts_the_fork_server_it_did_not_have():
    code = ("from graders.sandbox.session import ForkServer\n"
            "before = ForkServer._shared is not None\n"
            "from graders.engine import dask_worker\n"
            "dask_worker.dask_setup(None)\n"
            "print(before, ForkServer._shared[1].control is not None)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr[-2000:]
