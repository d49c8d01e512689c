"""Every course path comes from nbgrader's ``CourseDirectory.format_path`` (graders.coursedir.paths), none by hand."""
from __future__ import annotations

import re
from pathlib import Path

from traitlets.config import Config

from graders import KIT_ROOT
from graders.coursedir.paths import CoursePaths, Step, exchange_feedback

STEPS = "|".join(step.value for step in Step)
# a step's folder joined by hand: `root / "submitted"`, `"autograded" / x`, os.path.join(.., "feedback"), f"{r}/release/"
HAND_JOINED = re.compile(rf"""/\s*["']({STEPS})["']|["']({STEPS})["']\s*/|join\([^)]*["']({STEPS})["']"""
                         rf"""|\}}/({STEPS})/""")


def hand_joined(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if HAND_JOINED.search(line)]


def test_the_pattern_finds_a_hand_joined_folder_and_not_prose():
    assert hand_joined('folder = course.root / "submitted" / student')
    assert hand_joined("base = os.path.join(root, 'autograded', student)")
    assert hand_joined('path = f"{root}/feedback/{student}"')
    assert not hand_joined('"""Every student with a folder ``submitted/<student>/<assignment>/``."""')
    assert not hand_joined('COLUMNS = ("assignment", "released", "submitted", "graded")')


def test_no_module_joins_a_course_folder_by_hand():
    found = {}
    for path in sorted((KIT_ROOT / "graders").rglob("*.py")):
        name = str(path.relative_to(KIT_ROOT))
        if name == "graders/engine/paths.py":
            continue
        lines = hand_joined(path.read_text())
        if lines:
            found[name] = lines
    assert found == {}, f"use graders.coursedir.paths.CoursePaths: {found}"


def test_course_paths_are_nbgraders_default_layout(tmp_path):
    paths = CoursePaths(tmp_path)
    assert paths.folder(Step.SUBMITTED, "a", "bob") == tmp_path / "submitted" / "bob" / "a"
    assert paths.notebook(Step.SOURCE, "a") == tmp_path / "source" / "a" / "a.ipynb"
    assert paths.notebook(Step.AUTOGRADED, "a", "bob", "b") == tmp_path / "autograded" / "bob" / "a" / "b.ipynb"
    assert paths.feedback_page("a", "bob") == tmp_path / "feedback" / "bob" / "a" / "a.html"
    assert paths.step_root(Step.RELEASE) == tmp_path / "release"
    assert exchange_feedback(tmp_path / "course1") == tmp_path / "course1" / "feedback"


def test_course_paths_follow_the_courses_config(tmp_path):
    config = Config()
    config.CourseDirectory.submitted_directory = "handed_in"
    config.CourseDirectory.directory_structure = "{nbgrader_step}/{student_id}/{assignment_id}"
    paths = CoursePaths(tmp_path, config)
    assert paths.folder(Step.SUBMITTED, "a", "bob") == tmp_path / "handed_in" / "bob" / "a"
    assert CoursePaths(tmp_path).folder(Step.SUBMITTED, "a", "bob") != paths.folder(Step.SUBMITTED, "a", "bob")


def test_students_are_the_folders_of_that_step(tmp_path):
    paths = CoursePaths(tmp_path)
    for student in ("ada", "bob"):
        paths.folder(Step.SUBMITTED, "a", student).mkdir(parents=True)
    paths.folder(Step.SUBMITTED, "other", "cy").mkdir(parents=True)
    (tmp_path / "submitted" / "dee").mkdir()
    (tmp_path / "submitted" / "dee" / "a").write_text("a file, not a submission")
    assert paths.students(Step.SUBMITTED, "a") == ["ada", "bob"]
    assert paths.students(Step.AUTOGRADED, "a") == []  # no autograded/ at all
    assert Path(paths.step_root(Step.SUBMITTED)).is_dir()
