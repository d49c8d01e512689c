"""The feedback page's template: nbgrader's, with a summary that names each exercise and part.

nbgrader's feedback summary lists every grade cell as "Test cell (Score: 2.0 / 2.0)", twelve times for a
four-exercise assignment, and never says which exercise or part a line is. ``templates/feedback`` is nbgrader
0.9.6's template with that line changed to ``part_label``, registered as the ``vecgrade_part`` filter;
``nbgrader_config.py`` puts the folder before nbgrader's own (``HTMLExporter.extra_template_basedirs``), so
``vecgrade feedback``, ``nbgrader generate_feedback`` and the formgrader's button all use it. nbgrader names
the template ``feedback`` itself when it generates feedback, so the copy has that name: a template cannot extend
one of its own name, hence a copy, not an extension (tests/test_feedback_template.py keeps it to that one line).
"""
from __future__ import annotations

import os

import nbgrader

from graders.model.exercise import PARTS

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")
NBGRADER_TEMPLATES = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")
FILTER = "vecgrade_part"


def part_label(grade_id: str) -> str:
    """``batch_outer_fast`` -> "batch_outer: fast"; a grade cell that is no vecgrade part keeps nbgrader's
    "Test cell"."""
    exercise, _, part = str(grade_id).rpartition("_")
    return f"{exercise}: {part}" if exercise and part in PARTS else "Test cell"


def configure(c) -> None:
    """The feedback template and its filter, in an nbgrader config ``c``."""
    c.HTMLExporter.extra_template_basedirs = [TEMPLATES, NBGRADER_TEMPLATES]
    c.HTMLExporter.filters = {FILTER: f"{__name__}.part_label"}
