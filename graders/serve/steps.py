"""What the teacher would do by hand for one student, through nbgrader's own apps: collect, feedback, release.

``collect`` runs nbgrader's ``ExchangeCollect`` on an exchange root that holds
only the one checked copy the service staged, so it collects exactly that
submission (never a newer forged one beside it). ``feedback`` runs nbgrader's
``generate_feedback`` and ``release_feedback`` for the student, with a line on
top saying when the next grading can happen. Due dates and notebook names come
from the gradebook, where nbgrader keeps them.
"""
from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.exchange import Exchange
from nbgrader.utils import capture_log, temp_attrs

from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.engine.record import nbgrader_reason
from graders.model.errors import VecgradeError
from graders.serve.pages import add_banner
from graders.serve.watcher import SECRET, read_secret


class StepFailed(VecgradeError):
    """An nbgrader step failed; the message is nbgrader's most specific line."""


def exchange_course(config) -> Path:
    """``<Exchange.root>/<course_id>``: where nbgrader's exchange keeps this course."""
    root = config.Exchange.get("root", Exchange.root.default_value)
    return Path(root) / config.CourseDirectory.course_id


def due_date(course: Course, assignment: str, student: str) -> datetime | None:
    """nbgrader's due date for this student (UTC): the assignment's, plus the student's extension."""
    with Gradebook(course.db_url) as gb:
        try:
            return gb.find_submission(assignment, student).duedate
        except MissingEntry:
            pass
        try:
            return gb.find_assignment(assignment).duedate
        except MissingEntry:
            return None


def score(course: Course, assignment: str, student: str) -> tuple[float | None, float | None]:
    with Gradebook(course.db_url) as gb:
        try:
            sub = gb.find_submission(assignment, student)
            return sub.score, sub.max_score
        except MissingEntry:
            return None, None


def collect(api, course: Course, staged_root: Path, staged: Path, assignment: str, student: str) -> None:
    """nbgrader's collect of the one staged submission into ``submitted/<student>/<assignment>/``."""
    dest = course.paths.folder(Step.SUBMITTED, assignment, student)
    if dest.is_dir() and read_secret(dest) != read_secret(staged):
        shutil.rmtree(dest)  # another submission (older, or one a plain `nbgrader collect` took): this one counts
    with temp_attrs(api.coursedir, assignment_id=assignment, student_id=student):
        app = api.exchange.Collect(coursedir=api.coursedir, authenticator=api.authenticator, parent=api)
        app.root = str(staged_root)
        app.update = True
        app.check_owner = False  # the service checked the owner of every file it staged
        result = capture_log(app)
    if not result["success"] or read_secret(dest) != read_secret(staged):
        raise StepFailed(f"nbgrader collect failed: {nbgrader_reason(result)}")


def feedback(api, course: Course, assignment: str, student: str, line: str) -> None:
    """nbgrader's generate_feedback (forced: a regrade never leaves stale HTML) and release_feedback."""
    result = api.generate_feedback(assignment, student, force=True)
    if not result["success"]:
        raise StepFailed(f"nbgrader generate_feedback failed: {nbgrader_reason(result)}")
    folder = course.paths.folder(Step.FEEDBACK, assignment, student)
    if not (folder / SECRET).exists():
        raise StepFailed("nbgrader generate_feedback wrote no submission secret: the feedback cannot be released")
    for page in folder.glob("*.html"):
        add_banner(page, line)
    result = api.release_feedback(assignment, student)
    if not result["success"]:
        raise StepFailed(f"nbgrader release_feedback failed: {nbgrader_reason(result)}")
