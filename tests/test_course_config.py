"""``Course.config``: the course's ``nbgrader_config.py`` runs once per version of the file (``vecgrade status`` asks
for it several times in one run), each caller gets its own copy, and an edited file is read again."""
from __future__ import annotations

from traitlets.config.loader import PyFileConfigLoader

from graders.coursedir.course import Course


def test_the_config_runs_once_per_version_and_each_caller_gets_a_copy(tmp_path, monkeypatch):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nc.CourseDirectory.db_url = 'sqlite:///one.db'\n")
    runs = []
    load = PyFileConfigLoader.load_config
    monkeypatch.setattr(PyFileConfigLoader, "load_config", lambda self: runs.append(1) or load(self))
    course = Course(tmp_path)
    assert course.db_url == "sqlite:///one.db" and course.db_url == "sqlite:///one.db"
    mine = course.config(confined=False)
    assert mine.Sandbox.enabled is False and "enabled" not in course.config().Sandbox  # a copy, not the course's
    assert len(runs) == 1
    config.write_text("c = get_config()\nc.CourseDirectory.db_url = 'sqlite:///the-other.db'\n")  # edited
    assert course.db_url == "sqlite:///the-other.db" and len(runs) == 2
    assert Course(tmp_path).db_url == "sqlite:///the-other.db" and len(runs) == 3  # per Course: a new one reads it
