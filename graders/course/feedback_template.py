"""The feedback page's template: nbgrader's, with a summary that names each exercise and part, and says when the
submission was late.

nbgrader's feedback summary lists every grade cell as "Test cell (Score: 2.0 / 2.0)", twelve times for a
four-exercise assignment, and never says which exercise or part a line is. ``templates/feedback`` is nbgrader
0.9.6's template with that line changed to ``part_label``, registered as the ``vecgrade_part`` filter;
``nbgrader_config.py`` puts the folder before nbgrader's own (``HTMLExporter.extra_template_basedirs``), so
``vecgrade feedback``, ``nbgrader generate_feedback`` and the formgrader's button all use it. nbgrader names
the template ``feedback`` itself when it generates feedback, so the copy has that name: a template cannot extend
one of its own name, hence a copy, not an extension (tests/test_feedback_template.py keeps it to those lines).

nbgrader's page says nothing of a late submission unless a late penalty was taken; ``NoteLateness`` reads the
submission's lateness from the gradebook (its time of record, ``graders.pipeline.arrivals``) into the page's
resources, and the template puts it under the title: "Submitted after the due date: late 1.5 h".
"""
from __future__ import annotations

import os

import nbgrader
from nbconvert.preprocessors import Preprocessor
from nbgrader.api import Gradebook, MissingEntry

from graders.course.results import late
from graders.model.verdict import PARTS

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")
FILTER = "vecgrade_part"


def part_label(grade_id: str) -> str:
    """``batch_outer_fast`` -> "batch_outer: fast"; a grade cell that is no vecgrade part keeps nbgrader's
    "Test cell"."""
    exercise, _, part = str(grade_id).rpartition("_")
    return f"{exercise}: {part}" if exercise and part in PARTS else "Test cell"


def lateness(seconds: float | None) -> str:
    """The feedback page's line on lateness: "" for a submission on time."""
    return f"Submitted after the due date: {late(seconds)}" if seconds and seconds > 0 else ""


class NoteLateness(Preprocessor):
    """Puts the submission's lateness in words (``lateness``) in ``resources["nbgrader"]["late"]``, for the feedback
    template; a page that is no student's feedback (the formgrader's, which has no student) is left as it is."""

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader")
        if not isinstance(info, dict) or not all(info.get(k) for k in ("db_url", "assignment", "student")):
            return nb, resources
        try:
            with Gradebook(info["db_url"]) as gb:
                seconds = gb.find_submission(info["assignment"], info["student"]).total_seconds_late
        except MissingEntry:
            seconds = None
        info["late"] = lateness(seconds)
        return nb, resources


def configure(c) -> None:
    """The feedback template, its filter and its lateness, in an nbgrader config ``c`` (after its other
    ``HTMLExporter.preprocessors``)."""
    c.HTMLExporter.extra_template_basedirs = [TEMPLATES, NBGRADER_TEMPLATES]
    c.HTMLExporter.filters = {FILTER: f"{__name__}.part_label"}
    c.HTMLExporter.preprocessors = [*c.HTMLExporter.get("preprocessors", []), NoteLateness]
