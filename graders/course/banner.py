"""One line at the top of a feedback page, and times as a student reads them: shared by the pages a teacher's
``vecgrade feedback`` writes (``course.feedback``) and those ``vecgrade serve`` publishes (``serve.pages``)."""
from __future__ import annotations

import html
from datetime import datetime, timezone
from pathlib import Path

from dateutil.tz import gettz

from graders.model.inert import inert

PAGE_STYLE = ("font-family: sans-serif; margin: 1em 0; padding: .6em 1em; border-left: 4px solid #2a6;"
              " background: #f4faf6")


def when(epoch: float, tz_name: str = "UTC") -> str:
    """A time as a student reads it, in the exchange's timezone (nbgrader's ``Exchange.timezone``)."""
    tz = gettz(tz_name) or timezone.utc
    return datetime.fromtimestamp(epoch, tz).strftime("%Y-%m-%d %H:%M:%S %Z")


def text(line: str) -> str:
    """Text for a page: control characters made visible (``inert``: ``html.escape`` leaves them), then HTML-escaped."""
    return html.escape(inert(line))


def banner(line: str) -> str:
    return f'<div class="vecgrade-serve" style="{PAGE_STYLE}">{text(line)}</div>'


def add_banner(feedback_html: Path, line: str) -> None:
    """Put ``line`` at the top of nbgrader's feedback page (after ``<body ...>``)."""
    text = feedback_html.read_text()
    start = text.find("<body")
    end = text.find(">", start) + 1 if start >= 0 else 0
    feedback_html.write_text(text[:end] + banner(line) + text[end:])
