"""A grading job as data (graders.engine.request), the one job function (graders.engine.job.grade), the executors'
registry (graders.engine.executors) and the coordinator's reading of outcomes (graders.engine.coordinator)."""
import json
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from traitlets.config import Config

from graders.checks.timing import Calibration
from graders.engine import executors
from graders.engine.coordinator import Engine
from graders.engine.executors import UnknownExecutor, executor_for, register, scheme_of
from graders.engine.job import grade
from graders.engine.record import SubmissionResult
from graders.engine.request import (
    GradingOutcome,
    GradingRequest,
    SubmissionStatus,
    config_of,
    round_trip,
    settings_of,
)
from graders.model.store import VerdictStore
from graders.model.verdict import Reason, failed, passed
from graders.pipeline.restore import RestoreGradeCells

EMPTY: dict[str, list] = {"source": [], "grade": [], "solution": [], "task": []}


def _settings(*steps) -> dict:
    config = Config()
    config.Autograde.sanitize_preprocessors = []
    config.Autograde.autograde_preprocessors = list(steps)
    return settings_of(config)


def _request(folder, *steps, student: str = "ada", **fields) -> GradingRequest:
    return GradingRequest(student, "broadcasting", {}, _settings(*steps), 7, {"broadcasting": EMPTY},
                          None if folder is None else str(folder), **fields)


def _verdicts(ok: bool):
    return {"correct": passed("correct", "ok"), "vectorized": passed("vectorized", "ok"),
            "fast": passed("fast", "ok") if ok else failed("fast", Reason.TOO_SLOW, "slow", {"ratio": 9.0})}


# -- the request and the outcome are data ----------------------------------------------------------------------------
def test_a_request_and_an_outcome_come_back_equal_through_json_text():
    config = Config()
    config.Autograde.autograde_preprocessors = [RestoreGradeCells]
    config.Sandbox.memory_mb = 512
    request = GradingRequest(
        "ada", "broadcasting", {"broadcasting.py": "x = 1\n"}, settings_of(config), 7, {"broadcasting": EMPTY},
        files={"broadcasting.ipynb": b"\x00\xffbytes", "helpers.py": b"def f(): pass\n"},
        known={"key1": _verdicts(True)},
        measured={"machine": {"calibrations": {("batch_outer", 64): Calibration(0.1, 8, 0.001)},
                              "reference_times": {("batch_outer", "first", 8): (0.002, 123.0)}}},
        shown="submitted/ada/broadcasting/")
    assert round_trip(request) == request
    assert request.config().Autograde.autograde_preprocessors == [RestoreGradeCells]  # a class, by its import path
    outcome = GradingOutcome("ada", "broadcasting", SubmissionStatus.GRADED, None, "", "",
                             {"broadcasting": "{}"}, {"batch_outer": _verdicts(False)}, {"batch_outer": "key1"},
                             ["batch_outer"], {"total": 1.5})
    assert round_trip(outcome) == outcome
    refused = GradingOutcome("ada", "broadcasting", SubmissionStatus.REFUSED, Reason.REFUSED, "why", "your why")
    assert round_trip(refused) == refused and round_trip(refused) != outcome


def test_a_setting_that_is_not_data_stays_behind_and_the_rest_travels():
    config = Config()
    config.HTMLExporter.filters = {"f": lambda text: text}  # the feedback pages' own: not a job's
    config.TrustedVerdicts.call_timeout = 5.0
    settings = settings_of(config)
    json.dumps(settings)  # data
    assert "filters" not in settings.get("HTMLExporter", {})
    assert config_of(settings).TrustedVerdicts.call_timeout == 5.0


# -- the registry ---------------------------------------------------------------------------------------------------
def test_an_address_picks_its_executor_by_scheme_and_an_unknown_scheme_is_one_error():
    assert scheme_of(None) == "local" and scheme_of("tcp://h:8786") == "tcp" and scheme_of("h:8786") == "tcp"
    with pytest.raises(UnknownExecutor, match="no executor for addresses ray://"):
        executor_for("ray://head:10001")


def test_a_new_kind_of_executor_is_one_module_and_one_registry_line(monkeypatch, tmp_path):
    monkeypatch.setitem(executors.EXECUTORS, "thread", executors.EXECUTORS.get("thread"))  # restored after
    register("thread", "tests.testkit.thread_executor:Threads")
    executor = executor_for("thread://", 2)
    try:
        assert isinstance(executor, executors.Executor) and type(executor).__name__ == "Threads"
        nb = new_notebook(cells=[new_code_cell("x = 1")])
        nbformat.write(nb, tmp_path / "broadcasting.ipynb")
        executor.submit(_request(tmp_path))
        [(request, outcome)] = executor.wait()
        assert request.student == "ada" and outcome.graded and "broadcasting" in outcome.notebooks
    finally:
        executor.close()


# -- the job never raises for what a submission holds ----------------------------------------------------------------
class Explodes:
    """A grading step that fails as code nested too deeply for a recursive walk fails."""

    def __init__(self, config=None):
        pass

    def __call__(self, nb, resources):
        raise RecursionError("maximum recursion depth exceeded")


def test_a_step_that_fails_on_a_submission_is_that_submissions_outcome(tmp_path):
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), tmp_path / "broadcasting.ipynb")
    outcome = grade(_request(tmp_path, Explodes))
    assert outcome.status is SubmissionStatus.NOT_GRADED and outcome.reason is Reason.INTERNAL
    assert "RecursionError" in outcome.message and not outcome.notebooks
    # control: the same submission without the failing step is graded
    assert grade(_request(tmp_path)).graded


@pytest.mark.parametrize("make, words", [
    (lambda folder: (folder / "broadcasting.ipynb").write_text("{ not json"), "NotANotebookError"),
    (lambda folder: nbformat.write(new_notebook(cells=[new_code_cell("1")]), folder / "other.ipynb"),
     "UnknownNotebookError"),
    (lambda folder: os.symlink("/etc/passwd", folder / "broadcasting.ipynb"), "UnsafeSubmissionError"),
    (lambda folder: None, "NoNotebookError"),
])
def test_a_submission_the_job_cannot_take_is_refused_with_its_reason(tmp_path, make, words):
    make(tmp_path)
    outcome = grade(_request(tmp_path))
    assert outcome.status is SubmissionStatus.REFUSED and outcome.reason is Reason.REFUSED
    assert words in outcome.message and not outcome.notebooks


def test_files_shipped_inline_are_graded_as_the_folder_would_be_and_cannot_leave_it(tmp_path):
    text = nbformat.writes(new_notebook(cells=[new_code_cell("x = 1")]))
    assert grade(_request(None, files={"broadcasting.ipynb": text.encode()})).graded
    escaping = grade(_request(None, files={"../../escape.ipynb": text.encode()}))
    assert not escaping.graded and not (tmp_path / "escape.ipynb").exists()


# -- the coordinator reads outcomes ---------------------------------------------------------------------------------
class _Recorder:
    """An executor that keeps what it was given (the coordinator may hand a request back)."""

    def __init__(self):
        self.submitted: list[GradingRequest] = []

    def submit(self, request):
        self.submitted.append(request)


def _engine() -> Engine:
    engine = Engine.__new__(Engine)  # only what reading an outcome needs: no course, no processes
    engine.assignment_name, engine.verdicts = "broadcasting", VerdictStore()
    engine.executor = _Recorder()  # type: ignore[assignment]  # submit is all reading an outcome uses
    from collections import Counter
    engine.gradings = Counter()
    return engine


def _outcome(student: str, verdicts) -> GradingOutcome:
    return GradingOutcome(student, "broadcasting", SubmissionStatus.NOT_GRADED, Reason.KILLED, "not graded: x",
                          verdicts={"batch_outer": verdicts}, keys={"batch_outer": "K"}, computed=["batch_outer"])


def test_a_program_settled_differently_meanwhile_is_graded_again_with_the_settled_verdict(tmp_path):
    engine = _engine()
    first = _request(tmp_path)
    assert isinstance(engine._settle(first, _outcome("ada", _verdicts(True)), None, str(tmp_path), set()),
                      SubmissionResult)
    assert engine.verdicts.get("K") is not None and engine.gradings["K"] == 1
    again: set[str] = set()
    second = _request(tmp_path, student="bob")
    # bob's job, graded at the same time, found the same program too slow: graded again, with ada's verdict known
    assert engine._settle(second, _outcome("bob", _verdicts(False)), None, str(tmp_path), again) is None
    [resubmitted] = engine.executor.submitted
    assert resubmitted.student == "bob" and resubmitted.known["K"] == engine.verdicts.get("K")
    # once only: a second difference is reported as it is
    assert isinstance(engine._settle(second, _outcome("bob", _verdicts(False)), None, str(tmp_path), again),
                      SubmissionResult)
    # the same decision with other figures is graded again too (the same program shows the same figures) ...
    same = _verdicts(True)
    same["fast"] = passed("fast", "ok", {"ratio": 1.1})
    assert engine._settle(_request(tmp_path, student="cy"), _outcome("cy", same), None, str(tmp_path), set()) is None
    # ... and the very same verdicts (a stub's: nothing measured) are not
    assert isinstance(engine._settle(_request(tmp_path, student="dee"), _outcome("dee", _verdicts(True)), None,
                                     str(tmp_path), set()), SubmissionResult)
    assert [r.student for r in engine.executor.submitted] == ["bob", "cy"]
    assert engine.gradings["K"] == 5  # every computation is counted, the ones that were not kept too


def test_a_processs_own_verdict_of_a_program_gives_way_to_the_one_the_request_carries():
    """A grading process keeps the verdicts it computed; the coordinator may have kept another job's verdict of the
    same program (computed at the same time): the request's is the one this process uses from then on."""
    own, coordinators = _verdicts(True), _verdicts(True)
    own["fast"] = passed("fast", "ok", {"ratio": 1.4})
    coordinators["fast"] = passed("fast", "ok", {"ratio": 1.1})
    store = VerdictStore()
    assert store.put("K", own) and not store.put("K", coordinators)  # a store never replaces what it holds ...
    store.follow({"K": coordinators})  # ... but for the coordinator's, carried by a request
    assert store.get("K")["fast"].figures == {"ratio": 1.1}
    store.follow({"T": {**coordinators, "fast": failed("fast", Reason.OUT_OF_TIME, "spent")}})
    assert "T" not in store  # only settled verdicts, as everywhere
