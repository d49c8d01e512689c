"""One student's grading (``vecgrade grade -s``) in the command's own process: the reference is measured only for
the exercises whose "fast" part the notebook reaches, when it reaches them, however many ``--jobs`` were asked for
(graders.course.grade.grade_class never starts more local processes than submissions)."""
from pathlib import Path

import nbformat
import pytest

from graders.checks import reference as reference_module
from graders.course.grade import grade_class
from graders.course.personas import Persona

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e  # grade_class runs nbgrader


@pytest.fixture(scope="module")
def course(tmp_path_factory, broadcasting):
    """broadcasting released, with one notebook of reference answers (ada) and the release untouched (gus)."""
    course = generated_course(tmp_path_factory.mktemp("one") / "course", broadcasting)
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    ada = Persona("ada", "reference answers", lambda ex: ex.reference_source(), lambda n: (1.0, 1.0, 1.0))
    for student, nb in (("ada", ada.notebook(release, broadcasting)), ("gus", release)):
        folder = course.root / "submitted" / student / "broadcasting"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "broadcasting.ipynb")
    return course


@pytest.fixture
def calibrated(monkeypatch, tmp_path) -> Path:
    """A file with one line per reference calibrated, in this process or in any process forked from it."""
    log = tmp_path / "calibrated"
    log.touch()
    measure = reference_module.calibrate

    def calibrate(ex, *args):
        with open(log, "a") as f:
            f.write(ex.name + "\n")
        return measure(ex, *args)

    monkeypatch.setattr(reference_module, "calibrate", calibrate)
    return log


def test_a_notebook_of_stubs_has_no_reference_measured(course, calibrated):
    [result] = grade_class(course, "broadcasting", ["gus"], confined=False, jobs=2, seed=5)
    assert result.success, result.reason  # control: it was graded (every part failed), not refused
    assert calibrated.read_text() == ""


def test_a_correct_notebook_has_its_references_measured_and_fast_decided(course, calibrated, broadcasting):
    [result] = grade_class(course, "broadcasting", ["ada"], confined=False, jobs=2, seed=5)
    assert result.success, result.reason
    assert sorted(calibrated.read_text().split()) == sorted(ex.name for ex in broadcasting.exercises)
    scores = course.part_scores(broadcasting)["ada"]
    fast = {key: value for key, value in scores.items() if "fast" in str(key)}
    assert fast and all(value > 0 for value in fast.values()), scores


def test_the_command_imports_the_definitions_once_and_the_engine_only_its_assignment(tmp_path, monkeypatch):
    """``Course.assignments`` imports all six assignments (0.8 s) on each use: ``find_assignment`` used it twice,
    and the engine, which needs one assignment's exercises, imported all six again."""
    from graders.cli.base import find_assignment
    from graders.course.demo import make_course
    from graders.engine.coordinator import Engine
    from graders.model import exercise

    course = make_course(tmp_path / "course")
    imported = []
    load_course = exercise.load_course
    monkeypatch.setattr(exercise, "load_course", lambda folder: imported.append(folder) or load_course(folder))
    assert find_assignment(course, "broadcasting").name == "broadcasting"
    assert len(imported) == 1
    with Engine(course, "broadcasting", confined=False) as engine:
        assert [ex.name for ex in engine.assignment().exercises] == \
            [ex.name for ex in load_course(course.root / "assignments")["broadcasting"].exercises]
    assert len(imported) == 1
