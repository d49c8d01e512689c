"""The seams kept once: the definitions' fingerprint and the reader of nbgrader's error line."""
from __future__ import annotations

import dataclasses
import shutil

from graders import KIT_ROOT
from graders.checks.submission import definitions_digest
from graders.engine.record import nbgrader_reason
from graders.model.exercise import load_assignment
from graders.model.fingerprint import (
    assignment_files,
    assignment_fingerprint,
    definitions_files,
    fingerprint,
    folder_fingerprint,
)

WRAPPER = "nbgrader.converters.base.NbGraderException: Please see the above traceback for details"


def test_nbgrader_reason_picks_the_most_specific_line_never_the_wrapper():
    log = ("[AutogradeApp | ERROR] There was an error processing assignment: /c/submitted/s/a\n"
           "Traceback (most recent call last):\n"
           "graders.pipeline.intake.UnsafeSubmissionError: UnsafeSubmissionError: s/a holds pipe\n")
    assert nbgrader_reason({"log": log, "error": WRAPPER}) == "UnsafeSubmissionError: s/a holds pipe"
    logged = "[CollectApp | INFO] Collecting\n[CollectApp | ERROR] No submissions found for a\n"
    assert nbgrader_reason({"log": logged, "error": WRAPPER}) == "[CollectApp | ERROR] No submissions found for a"
    assert nbgrader_reason({"log": "only this\n"}) == "only this"  # no error line: the last line
    assert nbgrader_reason({"error": WRAPPER}) == "unknown error"  # the wrapper alone says nothing
    assert len(nbgrader_reason({"error": "KeyError: " + "x" * 1000})) == 300


def test_the_fingerprint_changes_with_any_file_and_only_then(tmp_path):
    files = {"a.py": "A = 1\n", "lessons/a.md": "text"}
    assert fingerprint(files) == fingerprint(dict(reversed(list(files.items()))))  # order: no change
    assert fingerprint(files) != fingerprint({**files, "lessons/a.md": "text."})
    assert fingerprint(files) != fingerprint({"b.py": "A = 1\n", "lessons/a.md": "text"})  # a renamed file
    (tmp_path / "lessons").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_text("compiled")  # not definitions
    assert definitions_files(tmp_path) == files and folder_fingerprint(tmp_path) == fingerprint(files)


def test_a_loaded_assignment_carries_its_own_fingerprint_into_the_verdict_salt(tmp_path):
    folder = tmp_path / "assignments"
    shutil.copytree(KIT_ROOT / "assignments", folder, ignore=shutil.ignore_patterns("__pycache__"))
    loaded = load_assignment(folder / "broadcasting.py")
    assert loaded.fingerprint == assignment_fingerprint(definitions_files(folder), "broadcasting") \
        == definitions_digest(loaded)
    assert loaded.folder_print == folder_fingerprint(folder) != loaded.fingerprint
    lesson = folder / "lessons" / "broadcasting.md"
    lesson.write_text(lesson.read_text() + "\nOne more line.\n")
    edited = load_assignment(folder / "broadcasting.py")
    assert definitions_digest(edited) != definitions_digest(loaded)  # its own lesson: a new fingerprint
    other = folder / "strides.py"  # another assignment's definitions: not broadcasting's change
    other.write_text(other.read_text() + "\n# a comment\n")
    again = load_assignment(folder / "broadcasting.py")
    assert again.fingerprint == edited.fingerprint and again.folder_print != edited.folder_print
    shared = folder / "variants" / "__init__.py"  # named after no assignment: every assignment's
    shared.write_text(shared.read_text() + "\n# shared\n")
    assert load_assignment(folder / "broadcasting.py").fingerprint != again.fingerprint


def test_an_assignments_files_are_its_own_and_the_shared_ones():
    files = {"a.py": "1", "b.py": "2", "_shared.py": "3", "variants/__init__.py": "4", "variants/a.py": "5",
             "variants/b.py": "6", "cases/a.py": "7", "lessons/a.md": "8", "lessons/b.md": "9"}
    assert sorted(assignment_files(files, "a")) == ["_shared.py", "a.py", "cases/a.py", "lessons/a.md",
                                                    "variants/__init__.py", "variants/a.py"]
    assert sorted(assignment_files(files, "b")) == ["_shared.py", "b.py", "lessons/b.md", "variants/__init__.py",
                                                    "variants/b.py"]
    assert assignment_fingerprint(files, "a") != assignment_fingerprint(files, "b")
    assert assignment_fingerprint({**files, "lessons/b.md": "changed"}, "a") == assignment_fingerprint(files, "a")
    assert assignment_fingerprint({**files, "cases/a.py": "changed"}, "a") != assignment_fingerprint(files, "a")
    assert assignment_fingerprint({**files, "_shared.py": "changed"}, "b") != assignment_fingerprint(files, "b")


def test_an_assignment_built_in_code_is_fingerprinted_by_what_it_says():
    loaded = load_assignment(KIT_ROOT / "assignments" / "broadcasting.py")
    in_code = dataclasses.replace(loaded, fingerprint="")
    assert len(definitions_digest(in_code)) == 32 and definitions_digest(in_code) != loaded.fingerprint
    ex = in_code.exercises[0]
    looser = dataclasses.replace(in_code, exercises=[dataclasses.replace(ex, rtol=ex.rtol * 10),
                                                     *in_code.exercises[1:]])
    assert definitions_digest(looser) != definitions_digest(in_code)  # a setting changed: a new fingerprint
    assert definitions_digest(dataclasses.replace(in_code)) == definitions_digest(in_code)  # same content, same one
