"""A course directory and nbgrader's own API on it, configured by its ``nbgrader_config.py``.

Imports neither torch nor nbgrader's gradebook and apps at the top: ``vecgrade status`` and ``vecgrade export`` read
the definitions' ``catalogue`` (names and points, no torch); ``assignments`` imports the definitions themselves.
"""
from __future__ import annotations

import copy
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from traitlets.config.loader import PyFileConfigLoader

from graders.coursedir.paths import CoursePaths, Step
from graders.model.catalogue import (
    CATALOGUE,
    AssignmentEntry,
    GradedAssignment,
    entry_of,
    read_catalogue,
    write_catalogue,
)
from graders.model.fingerprint import folder_fingerprint
from graders.model.verdict import PARTS

if TYPE_CHECKING:
    from nbgrader.api import Gradebook

    from graders.model.exercise import Assignment


def _put_scripts_on_path() -> None:
    """nbgrader runs `alembic` from PATH; from an unactivated venv it is only beside our interpreter."""
    scripts = os.path.dirname(sys.executable)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


class Course:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        if not (self.root / "nbgrader_config.py").exists():
            raise FileNotFoundError(f"{self.root} has no nbgrader_config.py: not a course directory")

    @property
    def assignments(self) -> dict[str, Assignment]:
        """The definitions, imported (torch and all), by name in course order."""
        from graders.model.exercise import load_course
        return load_course(self.root / "assignments")

    @property
    def catalogue(self) -> dict[str, AssignmentEntry]:
        """The definitions' names and points, by name in course order, without importing them while the catalogue
        file was written for the definitions as they are now (``graders.model.catalogue``); else they are imported
        and the catalogue is written again."""
        fingerprint = folder_fingerprint(self.root / "assignments")
        found = read_catalogue(self.root / CATALOGUE, fingerprint)
        if found is not None:
            return found
        loaded = self.assignments
        entries = [entry_of(a) for a in loaded.values()]
        fingerprint = next(iter(loaded.values())).folder_print if loaded else fingerprint  # of what was imported
        write_catalogue(self.root / CATALOGUE, fingerprint, entries)
        return {e.name: e for e in entries}

    @property
    def db_url(self) -> str:
        """The gradebook nbgrader uses: ``CourseDirectory.db_url`` from the course's config, else SQLite."""
        url = self.config().CourseDirectory.get("db_url")
        return url if isinstance(url, str) and url else "sqlite:///" + str(self.root / "gradebook.db")

    def config(self, plain: bool = False, confined: bool = True):
        """The course's nbgrader config (a copy of its own: the caller may change it); for benchmarks, ``plain``
        drops vecgrade's steps and ``confined=False`` turns the sandbox off."""
        config = copy.deepcopy(self._loaded_config())
        if plain:
            for key in ("autograde_preprocessors", "sanitize_preprocessors"):
                config.Autograde.pop(key, None)
        if not confined:
            config.Sandbox.enabled = False
        return config

    def _loaded_config(self):
        """``nbgrader_config.py`` as nbgrader loads it (running it: it imports nbgrader's preprocessors and
        vecgrade's pipeline), once per version of the file (its time and size) for this ``Course``: ``vecgrade
        status`` reads the config for the gradebook's URL, the paths and the exchange, five times in one run."""
        path = self.root / "nbgrader_config.py"
        try:
            info = path.stat()
            version: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
        except OSError:
            version = None  # loading says what is wrong, as without this
        cached = self.__dict__.get("_config_cache")
        if version is None or cached is None or cached[0] != version:
            cached = (version, PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config())
            self.__dict__["_config_cache"] = cached
        return cached[1]

    @contextmanager
    def inside(self):
        """The course root as working directory, as nbgrader's apps expect it."""
        _put_scripts_on_path()
        old = os.getcwd()
        os.chdir(self.root)
        try:
            yield self
        finally:
            os.chdir(old)

    @contextmanager
    def api(self, plain: bool = False, confined: bool = True, config=None):
        """nbgrader's API, run with the course root as working directory (on ``config`` if given)."""
        _put_scripts_on_path()
        old = os.getcwd()
        os.chdir(self.root)
        try:
            from nbgrader.apps import NbGraderAPI
            yield NbGraderAPI(config=config if config is not None else self.config(plain, confined))
        finally:
            os.chdir(old)

    @cached_property
    def paths(self) -> CoursePaths:
        """Where nbgrader keeps each step's files in this course, under its config."""
        return CoursePaths(self.root, self.config())

    def submitted_students(self, assignment: str) -> list[str]:
        """Every student with a folder ``submitted/<student>/<assignment>/``."""
        return self.paths.students(Step.SUBMITTED, assignment)

    def part_scores(self, assignment: GradedAssignment) -> dict[str, dict[str, float | None]]:
        """{student: {grade_id: score}} for every student with a submission in the gradebook."""
        from nbgrader.api import Gradebook
        with Gradebook(self.db_url) as gb:
            return {student: marks.parts for student, marks in gradebook_marks(gb, assignment).items()}


@dataclass(frozen=True)
class SubmissionMarks:
    """One student's submission of one assignment, as nbgrader's gradebook holds it: the one reader of marks.

    ``parts``: {grade_id: ``Grade.score``} for the definitions' grade cells (nbgrader's score: the manual score
    where a person set one, else the autograder's, plus any extra credit; None: no grade row). ``manual``: the grade
    ids a person graded (a ``manual_score`` or extra credit through the formgrader). ``score``, ``max_score`` and
    ``penalty`` are ``SubmittedAssignment.score``, ``.max_score`` and ``.late_submission_penalty`` (what nbgrader's
    late-submission plugin assigned, 0 without one); ``total`` is what ``nbgrader export`` writes as the score.
    ``duedate`` is the student's (the assignment's, plus ``extension``), None when the assignment has none."""

    student: str
    parts: dict[str, float | None]
    manual: tuple[str, ...]
    score: float
    max_score: float
    penalty: float
    seconds_late: float
    duedate: datetime | None = None
    extension: timedelta | None = None

    @property
    def total(self) -> float:
        """The score after the late penalty, exactly as ``nbgrader export`` computes it: ``max(0, score - penalty)``."""
        return max(0.0, self.score - self.penalty)


def gradebook_marks(gb: Gradebook, assignment: GradedAssignment) -> dict[str, SubmissionMarks]:
    """{student: their ``SubmissionMarks``} for every submission of ``assignment`` in ``gb``.

    nbgrader's objects, as its own ``find_submission`` gives them, read in a few queries: each submission's
    notebooks, grades and their cells loaded with it, its score, max score and penalty computed in the same query
    (one query per grade otherwise, a second for a class of 100)."""
    from nbgrader.api import Grade, MissingEntry, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy.orm import selectinload, undefer
    ids = [ex.grade_id(p) for ex in assignment.exercises for p in PARTS]
    try:
        recorded = gb.find_assignment(assignment.name)
    except MissingEntry:
        return {}
    submissions = gb.db.query(SubmittedAssignment).filter(SubmittedAssignment.assignment_id == recorded.id).options(
        undefer(SubmittedAssignment.score), undefer(SubmittedAssignment.max_score),
        undefer(SubmittedAssignment.late_submission_penalty),
        selectinload(SubmittedAssignment.notebooks).selectinload(SubmittedNotebook.grades).joinedload(Grade.cell))
    out: dict[str, SubmissionMarks] = {}
    for sub in submissions:
        parts: dict[str, float | None] = {i: None for i in ids}
        manual = set()
        for nb in sub.notebooks:
            for grade in nb.grades:
                if grade.name in parts:
                    parts[grade.name] = grade.score
                    if grade.manual_score is not None or grade.extra_credit:
                        manual.add(grade.name)
        duedate = sub.duedate
        out[sub.student_id] = SubmissionMarks(
            sub.student_id, parts, tuple(i for i in ids if i in manual), float(sub.score or 0.0),
            float(sub.max_score or 0.0), float(sub.late_submission_penalty or 0.0), float(sub.total_seconds_late or 0),
            duedate, sub.extension)
    return out
