"""Where nbgrader keeps each step's files in a course folder: ``CourseDirectory.format_path``, typed.

nbgrader lays a course out as ``<root>/<step>/<student>/<assignment>/`` by its
``CourseDirectory.directory_structure``, with each step's folder name a setting
(``submitted_directory`` ...); ``source`` and ``release`` have no student
(nbgrader passes ``.``). ``CoursePaths`` asks nbgrader for every such path, so a
course configured differently is read where nbgrader writes it, and no module
joins a step's folder by hand (tests/test_course_paths.py greps for that).
"""
from __future__ import annotations

import glob
from enum import StrEnum
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

NO_STUDENT = "."  # nbgrader's student id in the paths of source/ and release/


class Step(StrEnum):
    """An nbgrader step with a folder of its own in the course (its ``<step>_directory`` setting)."""
    SOURCE = "source"
    RELEASE = "release"
    SUBMITTED = "submitted"
    AUTOGRADED = "autograded"
    FEEDBACK = "feedback"


class CoursePaths:
    """The course folder at ``root`` as nbgrader lays it out under ``config`` (nbgrader's defaults when None)."""

    def __init__(self, root: Path | str, config: Config | None = None):
        self._dir = CourseDirectory(config=config or Config(), root=str(Path(root).resolve()))

    @property
    def root(self) -> Path:
        return Path(self._dir.root)

    def folder(self, step: Step, assignment: str, student: str = NO_STUDENT) -> Path:
        """``<root>/<step>/<student>/<assignment>/`` (for source and release, no student)."""
        name = getattr(self._dir, f"{step.value}_directory")
        return Path(self._dir.format_path(name, student, assignment))

    def notebook(self, step: Step, assignment: str, student: str = NO_STUDENT, notebook: str | None = None) -> Path:
        """The notebook ``<notebook>.ipynb`` (by default the assignment's own name) of that folder."""
        return self.folder(step, assignment, student) / f"{notebook or assignment}.ipynb"

    def feedback_page(self, assignment: str, student: str, notebook: str | None = None) -> Path:
        """The HTML page ``generate_feedback`` writes for that notebook."""
        return self.folder(Step.FEEDBACK, assignment, student) / f"{notebook or assignment}.html"

    def step_root(self, step: Step) -> Path:
        """``<root>/<step>/``: where every student's folder of that step lies (the course's own, for source)."""
        return self.folder(step, "", "")

    def students(self, step: Step, assignment: str) -> list[str]:
        """Every student with a folder of ``step`` for ``assignment``, found as nbgrader finds them (a glob)."""
        pattern = str(self.folder(step, glob.escape(assignment), "*"))
        return sorted(Path(p).parent.name for p in glob.glob(pattern) if Path(p).is_dir())


def exchange_feedback(exchange_course: Path) -> Path:
    """``<exchange>/<course_id>/feedback``: where ``release_feedback`` puts pages (nbgrader's exchange hard-codes
    the name, ``ExchangeReleaseFeedback.init_dest``)."""
    return exchange_course / Step.FEEDBACK.value
