"""MkDocs hooks: the configuration reference generated from the traits, and CONTRIBUTING.md as a page.

Both are filled in while the site is built, so each fact keeps one source: the traits' own
``help=`` and defaults plus ``nbgrader_config.py`` (``graders.docs_reference``), and the guide
at the repository's root that contributors open first.
"""
from __future__ import annotations

from pathlib import Path

from graders.docs_reference import reference

ROOT = Path(__file__).resolve().parent.parent
GENERATED = "<!-- generated: configuration reference -->"
INCLUDE = "<!-- include: CONTRIBUTING.md -->"


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    if GENERATED in markdown:
        markdown = markdown.replace(GENERATED, reference(ROOT / "nbgrader_config.py"))
    if INCLUDE in markdown:
        markdown = markdown.replace(INCLUDE, (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    return markdown
