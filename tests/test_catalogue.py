"""The definitions' catalogue (names, order and points without torch) is derived from the definitions and answers only
for the definitions it was derived from: a changed file makes ``Course.catalogue`` import them again."""
import json

import pytest

from graders.course.demo import make_course
from graders.course.results import max_points
from graders.model.catalogue import (
    CATALOGUE,
    AssignmentEntry,
    ExerciseEntry,
    Points,
    entry_of,
    read_catalogue,
    write_catalogue,
)
from graders.model.fingerprint import folder_fingerprint


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("catalogue") / "course")


@pytest.fixture(scope="module")
def definitions(course):
    return course.assignments


def test_each_entry_has_the_names_order_and_points_of_its_definitions(definitions):
    assert definitions
    for a in definitions.values():
        entry = entry_of(a)
        assert (entry.name, entry.title, entry.order) == (a.name, a.title, a.order)
        assert [e.name for e in entry.exercises] == [ex.name for ex in a.exercises]
        assert max_points(entry) == max_points(a)  # grade ids and points, in the same order


def test_the_course_catalogue_is_the_definitions_in_course_order_and_written_once(course, definitions):
    (course.root / CATALOGUE).unlink(missing_ok=True)
    assert course.catalogue == {name: entry_of(a) for name, a in definitions.items()}
    assert list(course.catalogue) == list(definitions)
    written = json.loads((course.root / CATALOGUE).read_text())
    assert written["fingerprint"] == folder_fingerprint(course.root / "assignments")


def test_a_current_catalogue_is_read_without_loading_the_definitions(course):
    course.catalogue  # noqa: B018 - written if missing
    path = course.root / CATALOGUE
    data = json.loads(path.read_text())
    data["assignments"][0]["title"] = "read from the file"
    path.write_text(json.dumps(data))
    assert next(iter(course.catalogue.values())).title == "read from the file"


def test_a_changed_definition_is_never_answered_from_the_older_catalogue(tmp_path):
    course = make_course(tmp_path / "course")
    before = course.catalogue
    definition = course.root / "assignments" / "broadcasting.py"
    text = definition.read_text()
    assert '    title="Broadcasting",' in text
    definition.write_text(text.replace('    title="Broadcasting",', '    title="a new title",', 1))
    assert before["broadcasting"].title != "a new title"
    assert course.catalogue["broadcasting"].title == "a new title"
    assert read_catalogue(course.root / CATALOGUE, folder_fingerprint(course.root / "assignments")) is not None


ENTRY = AssignmentEntry("a", "A", 1, (ExerciseEntry("f", Points(correct=3.0)),))


def test_read_returns_what_was_written_for_the_same_fingerprint(tmp_path):
    write_catalogue(tmp_path / CATALOGUE, "abc", [ENTRY])
    assert read_catalogue(tmp_path / CATALOGUE, "abc") == {"a": ENTRY}
    assert max_points(ENTRY) == {"f_correct": 3.0, "f_vectorized": 1.0, "f_fast": 1.0}


@pytest.mark.parametrize("text", [None, "not json", "[]", '{"fingerprint": "abc"}'])
def test_a_missing_or_broken_catalogue_is_none(tmp_path, text):
    path = tmp_path / CATALOGUE
    if text is not None:
        path.write_text(text)
    assert read_catalogue(path, "abc") is None


def test_a_catalogue_written_by_another_version_of_its_module_is_none(tmp_path):
    path = tmp_path / CATALOGUE
    write_catalogue(path, "abc", [ENTRY])
    assert read_catalogue(path, "abc") is not None
    data = json.loads(path.read_text())
    data["code"] = "another version"
    path.write_text(json.dumps(data))
    assert read_catalogue(path, "abc") is None


def test_a_catalogue_of_other_definitions_is_none(tmp_path):
    write_catalogue(tmp_path / CATALOGUE, "abc", [ENTRY])
    assert read_catalogue(tmp_path / CATALOGUE, "def") is None


def test_a_folder_that_cannot_be_written_is_left_alone(tmp_path):
    write_catalogue(tmp_path / "missing" / CATALOGUE, "abc", [ENTRY])  # no error, nothing written
    assert not (tmp_path / "missing").exists()
    assert [p.name for p in tmp_path.iterdir()] == []
