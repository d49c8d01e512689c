"""MkDocs hooks: the configuration reference generated from the traits, the names outside the checked subset
generated from the checker's tables, the exit codes and the verdicts' reason codes from their enums,
CONTRIBUTING.md as a page, and the drawing of the package's imports (``graders.docs_imports``) as
``design/imports.svg``.

All are filled in while the site is built, so each fact keeps one source: the traits' own
``help=`` and defaults plus ``nbgrader_config.py`` (``graders.docs_reference``), the checker's tables
(``graders.checks.outside_list``), ``graders.model.exits.ExitCode``, ``graders.model.verdict.Reason`` (each
code's group and meaning), and the guide at the repository's root that contributors open first.
"""
from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File

from graders.checks.outside_list import markdown as outside_subset
from graders.docs_imports import drawing, edges
from graders.docs_reference import reference
from graders.model.exits import table as exit_codes
from graders.model.verdict import table as reason_codes

ROOT = Path(__file__).resolve().parent.parent
GENERATED = "<!-- generated: configuration reference -->"
INCLUDE = "<!-- include: CONTRIBUTING.md -->"
OUTSIDE = "<!-- generated: names outside the subset -->"
EXIT_CODES = "<!-- generated: exit codes -->"
REASON_CODES = "<!-- generated: reason codes -->"


IMPORTS_SVG = "design/imports.svg"  # the drawing of the package's imports, made from the source on every build


def on_files(files, config, **kwargs):
    files.append(File.generated(config, IMPORTS_SVG, content=drawing(edges())))
    return files


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    if GENERATED in markdown:
        markdown = markdown.replace(GENERATED, reference(ROOT / "nbgrader_config.py"))
    if OUTSIDE in markdown:
        markdown = markdown.replace(OUTSIDE, outside_subset())
    if EXIT_CODES in markdown:
        markdown = markdown.replace(EXIT_CODES, exit_codes())
    if REASON_CODES in markdown:
        markdown = markdown.replace(REASON_CODES, reason_codes())
    if INCLUDE in markdown:
        markdown = markdown.replace(INCLUDE, (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    return markdown
