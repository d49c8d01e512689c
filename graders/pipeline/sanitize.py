"""Student markdown made safe for the HTML the instructor and the student open (feedback, formgrader).

``HTMLExporter.sanitize_html`` cleans outputs, but nbgrader 0.9.6's own
``feedback`` and ``formgrade`` templates render markdown cells without the
``clean_html`` filter, so a ``<script>`` or ``<img onerror>`` written in a
student's markdown reached the feedback page verbatim. This preprocessor,
set as ``HTMLExporter.preprocessors`` in ``nbgrader_config.py`` (so it runs in
every HTML export nbgrader makes), renders each markdown cell and keeps only
what nbconvert's sanitizer allows.
"""
from __future__ import annotations

import bleach
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from nbconvert.preprocessors import Preprocessor

# what rendered markdown needs, and nothing that runs: no script/style/iframe, no on* attributes, no javascript: URLs
TAGS = {*bleach.ALLOWED_TAGS, "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code", "div", "span",
        "table", "thead", "tbody", "tr", "th", "td", "img", "del", "sup", "sub"}
ATTRIBUTES = {**bleach.ALLOWED_ATTRIBUTES, "img": ["src", "alt", "title"], "*": ["class", "id"]}


def clean_markdown(source: str) -> str:
    """The markdown rendered to HTML, with every tag and attribute outside the allowlist escaped or dropped."""
    return bleach.clean(markdown2html_mistune(source), tags=TAGS, attributes=ATTRIBUTES,
                        protocols=["http", "https", "mailto", "data"])


class SanitizeMarkdown(Preprocessor):
    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type in ("markdown", "raw"):
            cell.source = clean_markdown(cell.source) if cell.cell_type == "markdown" else bleach.clean(cell.source)
            cell.attachments = {}
        return cell, resources
