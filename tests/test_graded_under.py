"""The definitions' fingerprint decides "did the definitions change since grading?" in the teacher's views: each
graded notebook records the fingerprint its verdicts were computed under (``write_verdicts``), and
``version_changes`` names the marks computed under other definitions; both ways, with the legacy notebook that
records none."""
import dataclasses
from types import SimpleNamespace

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from graders.course.results import graded_under, max_points, version_changes, version_fix
from graders.coursedir.paths import CoursePaths, Step
from graders.model.fingerprint import stamp, stamped
from graders.model.verdict import Reason, failed
from graders.pipeline.verdicts import write_verdicts

from tests.testkit import graded_gradebook as _gradebook


def _graded(course, assignment, student: str, under: str | None) -> None:
    """An autograded notebook of ``student``, graded under the fingerprint ``under`` (None: records none)."""
    path = course.paths.notebook(Step.AUTOGRADED, assignment.name, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = new_notebook(cells=[new_code_cell("x = 1")])
    if under is not None:
        stamp(nb.metadata, under)
    nbformat.write(nb, path)


def test_a_graded_notebook_records_the_fingerprint_it_was_graded_under(broadcasting):
    nb = new_notebook(cells=[new_code_cell("x = 1")], metadata={"vecgrade": {"definitions": "forged"}})
    write_verdicts(nb, broadcasting, {})
    assert broadcasting.fingerprint and stamped(nb.metadata) == broadcasting.fingerprint  # the student's replaced
    in_code = dataclasses.replace(broadcasting, fingerprint="")
    write_verdicts(nb, in_code, {"batch_outer": {"correct": failed("correct", Reason.RAISED, "x")}})
    assert stamped(nb.metadata) == ""  # built in code: no folder's fingerprint, and the old one is not kept
    assert stamped({"vecgrade": {"definitions": 3}}) == stamped(None) == stamped({"vecgrade": "x"}) == ""


def test_marks_computed_under_other_definitions_are_named(broadcasting, tmp_path):
    course = SimpleNamespace(paths=CoursePaths(tmp_path))
    gb = _gradebook(max_points(broadcasting), ["ada", "bo", "cy"])  # the same grade cells and points as defined
    for student in ("ada", "bo", "cy"):
        _graded(course, broadcasting, student, broadcasting.fingerprint)
    assert version_changes(gb, course, broadcasting) == [] and version_fix(gb, course, broadcasting) == ""  # control
    _graded(course, broadcasting, "bo", "0" * 32)  # a hidden case changed since bo was graded: same cells
    assert graded_under(gb, course, broadcasting)["bo"] == "0" * 32
    changes = version_changes(gb, course, broadcasting)
    assert len(changes) == 1 and "changed after 1 of 3 graded submissions were graded" in changes[0]
    assert version_fix(gb, course, broadcasting) == "to grade on the current definitions: `vecgrade grade broadcasting`"
    in_code = dataclasses.replace(broadcasting, fingerprint="")  # nothing to compare with: the cells alone decide
    assert version_changes(gb, course, in_code) == []


def test_a_notebook_that_records_no_fingerprint_is_not_counted(broadcasting, tmp_path):
    course = SimpleNamespace(paths=CoursePaths(tmp_path))
    gb = _gradebook(max_points(broadcasting), ["ada", "bo", "cy"])
    _graded(course, broadcasting, "ada", None)
    (course.paths.notebook(Step.AUTOGRADED, broadcasting.name, "ada")).write_text("{ not json")  # unreadable
    _graded(course, broadcasting, "bo", None)  # graded before notebooks recorded it
    assert graded_under(gb, course, broadcasting) == {"ada": "", "bo": "", "cy": ""}  # cy: no notebook at all
    assert version_changes(gb, course, broadcasting) == []
    older = dict(max_points(broadcasting), batch_outer_correct=3.0)  # the cells still say what changed
    _graded(course, broadcasting, "bo", "0" * 32)
    changes = version_changes(_gradebook(older, ["ada", "bo", "cy"]), course, broadcasting)
    assert changes[0] == "batch_outer_correct: 3 points when graded, 2 now" and "1 of 3" in changes[1]
    assert "generate_assignment broadcasting --force" in version_fix(_gradebook(older, ["ada", "bo"]), course,
                                                                     broadcasting)


def test_a_notebook_graded_before_per_assignment_fingerprints_is_compared_with_the_folders(broadcasting, tmp_path):
    """Older notebooks record the whole folder's fingerprint ({"definitions": ...}): unchanged folder, not counted;
    any change of the folder since, counted (it cannot tell whose), with a word on why."""
    course = SimpleNamespace(paths=CoursePaths(tmp_path))
    gb = _gradebook(max_points(broadcasting), ["ada", "bo"])
    _graded(course, broadcasting, "ada", broadcasting.fingerprint)
    path = course.paths.notebook(Step.AUTOGRADED, broadcasting.name, "bo")
    path.parent.mkdir(parents=True)
    nbformat.write(new_notebook(metadata={"vecgrade": {"definitions": broadcasting.folder_print}}), path)
    assert graded_under(gb, course, broadcasting) == {"ada": broadcasting.fingerprint, "bo": ""}
    assert version_changes(gb, course, broadcasting) == []  # the folder is as bo was graded under
    nbformat.write(new_notebook(metadata={"vecgrade": {"definitions": "1" * 32}}), path)
    changes = version_changes(gb, course, broadcasting)
    assert len(changes) == 1 and "changed after 1 of 2 graded submissions" in changes[0]
    assert "1 graded before vecgrade recorded each assignment's own fingerprint" in changes[0]
