"""What the student reads through ``nbgrader fetch_feedback``: nbgrader's feedback, or one line saying why not.

A graded submission gets nbgrader's own feedback page (``generate_feedback``,
released with ``release_feedback``) with one line added at the top: when the
next grading can happen. A submission that is not graded (refused, waiting for
its window, superseded, past the due date) gets a page of its own, published
where nbgrader's release would put feedback: ``<exchange>/<course>/feedback/
<notebook_hash(secret, notebook_id)>.html``, the name ``fetch_feedback`` looks
for. A later page for the same submission replaces it (``fetch_feedback``
overwrites), so "waiting" turns into the verdicts.
"""
from __future__ import annotations

import os
from pathlib import Path

from nbgrader.utils import notebook_hash

# the pages' vocabulary; add_banner and when are also used as pages.add_banner, pages.when
from graders.course.banner import add_banner, banner, text, when  # noqa: F401
from graders.coursedir.paths import exchange_feedback
from graders.model.atomic import write_atomically

FEEDBACK_MODE = 0o711  # as nbgrader's release_feedback makes the exchange's feedback folder


def every(seconds: float) -> str:
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g} minutes"
    return f"{seconds:g} seconds"


def page(title: str, line: str) -> str:
    """A whole feedback page holding one line."""
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{text(title)}</title></head>"
            f"<body><h2>{text(title)}</h2>{banner(line)}</body></html>\n")


def publish(exchange_course: Path, secret: str, notebook_ids: list[str], text: str) -> list[Path]:
    """Write ``text`` as the feedback of each notebook of one submission, atomically, readable by its student."""
    folder = exchange_feedback(exchange_course)
    if not folder.is_dir():
        folder.mkdir(parents=True)
        os.chmod(folder, FEEDBACK_MODE)
    written = []
    for notebook_id in notebook_ids:
        dest = folder / f"{notebook_hash(secret=secret, notebook_id=notebook_id)}.html"
        write_atomically(dest, text, mode=0o644)  # a temporary of its own: two publishers of one page never mix
        written.append(dest)
    return written
