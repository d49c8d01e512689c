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

import html
import os
from datetime import datetime, timezone
from pathlib import Path

from dateutil.tz import gettz
from nbgrader.utils import notebook_hash

from graders.engine.paths import exchange_feedback
from graders.model.inert import inert

FEEDBACK_MODE = 0o711  # as nbgrader's release_feedback makes the exchange's feedback folder
PAGE_STYLE = ("font-family: sans-serif; margin: 1em 0; padding: .6em 1em; border-left: 4px solid #2a6;"
              " background: #f4faf6")


def when(epoch: float, tz_name: str = "UTC") -> str:
    """A time as a student reads it, in the exchange's timezone (nbgrader's ``Exchange.timezone``)."""
    tz = gettz(tz_name) or timezone.utc
    return datetime.fromtimestamp(epoch, tz).strftime("%Y-%m-%d %H:%M:%S %Z")


def every(seconds: float) -> str:
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g} minutes"
    return f"{seconds:g} seconds"


def text(line: str) -> str:
    """Text for a page: control characters made visible (``inert``: ``html.escape`` leaves them), then HTML-escaped."""
    return html.escape(inert(line))


def banner(line: str) -> str:
    return f'<div class="vecgrade-serve" style="{PAGE_STYLE}">{text(line)}</div>'


def page(title: str, line: str) -> str:
    """A whole feedback page holding one line."""
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{text(title)}</title></head>"
            f"<body><h2>{text(title)}</h2>{banner(line)}</body></html>\n")


def add_banner(feedback_html: Path, line: str) -> None:
    """Put ``line`` at the top of nbgrader's feedback page (after ``<body ...>``)."""
    text = feedback_html.read_text()
    start = text.find("<body")
    end = text.find(">", start) + 1 if start >= 0 else 0
    feedback_html.write_text(text[:end] + banner(line) + text[end:])


def publish(exchange_course: Path, secret: str, notebook_ids: list[str], text: str) -> list[Path]:
    """Write ``text`` as the feedback of each notebook of one submission, atomically, readable by its student."""
    folder = exchange_feedback(exchange_course)
    if not folder.is_dir():
        folder.mkdir(parents=True)
        os.chmod(folder, FEEDBACK_MODE)
    written = []
    for notebook_id in notebook_ids:
        dest = folder / f"{notebook_hash(secret=secret, notebook_id=notebook_id)}.html"
        tmp = dest.with_name(f".{dest.name}.tmp")
        tmp.write_text(text)
        os.chmod(tmp, 0o644)
        tmp.replace(dest)
        written.append(dest)
    return written
