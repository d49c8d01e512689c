"""A pool's processes measure the reference once between them: what one measured, another adopts instead of
measuring it again, on this machine only (graders.checks.submission.GradingRun.adopt)."""
import pytest
from traitlets.config import Config

from graders import KIT_ROOT
from graders.checks import reference as reference_module
from graders.checks.fast import FIRST, warm_up_requests
from graders.checks.submission import GradingRun, combine
from graders.engine.job import reference_measurements
from graders.engine.request import GradingRequest, settings_of
from graders.model.exercise import load_assignment
from graders.model.fingerprint import definitions_files

SEED = 11


def _measured_elsewhere(*args, **kwargs):
    raise AssertionError("measured again")


@pytest.fixture(scope="module")
def measured():
    """batch_outer's reference measured as a pool process measures it for the others."""
    config = Config()
    config.Sandbox.enabled = False
    request = GradingRequest("(reference)", "broadcasting", definitions_files(KIT_ROOT / "assignments"),
                             settings_of(config), SEED)
    return reference_measurements(request, "batch_outer")  # what one process measured, with its machine


def test_a_run_adopts_what_another_process_measured_and_does_not_measure_it_again(measured, monkeypatch):
    assignment = load_assignment(KIT_ROOT / "assignments" / "broadcasting.py")
    ex = assignment.exercise("batch_outer")
    assert len(measured["calibrations"]) == 1 and len(measured["reference_times"]) == 1
    monkeypatch.setattr(reference_module, "calibrate", _measured_elsewhere)
    monkeypatch.setattr(reference_module.Reference, "warmed", _measured_elsewhere)
    with GradingRun(seed=SEED) as run:
        run.adopt({measured["machine"]: measured})
        reference = run.reference(assignment)
        calibration = reference.calibration(ex)
        assert calibration == next(iter(measured["calibrations"].values()))
        staged = run.bench_inputs(ex, FIRST, calibration.k)
        shared = reference.shared_time(ex, FIRST, staged, warm_up_requests(run, ex, calibration.k))
        assert shared == next(iter(measured["reference_times"].values()))[0]
    # control: what another machine measured does not hold here, so this run measures for itself
    with GradingRun(seed=SEED) as run:
        run.adopt({"another machine": measured})
        with pytest.raises(AssertionError, match="measured again"):
            run.reference(assignment).calibration(ex)


def test_combining_keeps_one_calibration_and_the_fastest_reference_time():
    into = {"calibrations": {"a": "first"}, "reference_times": {"t": (2.0, 100.0), "u": (1.0, 100.0)}}
    combine(into, {"calibrations": {"a": "second", "b": "new"},
                   "reference_times": {"t": (1.5, 200.0), "u": (3.0, 200.0), "v": (4.0, 200.0)}})
    assert into["calibrations"] == {"a": "first", "b": "new"}
    # a slower measurement never replaces a faster one: a busy moment only raises the bar
    assert into["reference_times"] == {"t": (1.5, 200.0), "u": (1.0, 100.0), "v": (4.0, 200.0)}
