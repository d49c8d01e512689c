"""Student markdown made safe for the HTML the instructor and the student open (feedback, formgrader).

``HTMLExporter.sanitize_html`` cleans outputs, but nbgrader 0.9.6's own
``feedback`` and ``formgrade`` templates render markdown cells without the
``clean_html`` filter, so a ``<script>`` or ``<img onerror>`` written in a
student's markdown reached the feedback page verbatim. This preprocessor,
set as ``HTMLExporter.preprocessors`` in ``nbgrader_config.py`` (so it runs in
every HTML export nbgrader makes), renders each markdown cell and keeps only
what nbconvert's sanitizer allows.

It keeps no ``class`` or ``id`` either: with the page's own classes a student's
markdown could draw a box that looks like the grader's output ("all parts
passed"). A ``data:`` URL is kept only as the source of a raster image
(``data:image/png``, ``jpeg``, ``gif``, ``webp``), never as a link or an SVG.

A pasted image is a cell *attachment* (``![image.png](attachment:image.png)``, as JupyterLab, Colab and VS Code
save it): it is rendered from the cell's own attachments, as such a data URL, and only a raster image of them
(``safe_attachments``); a reference to one the cell does not have, or one that is not such an image, shows its
alt text (nbconvert's renderer stopped the whole page with "missing attachment").
"""
from __future__ import annotations

import re

import bleach
from bleach.html5lib_shim import convert_entities
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor

# what rendered markdown needs, and nothing that runs: no script/style/iframe, no on* attributes, no javascript: URLs
TAGS = {*bleach.ALLOWED_TAGS, "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code", "div", "span",
        "table", "thead", "tbody", "tr", "th", "td", "img", "del", "sup", "sub"}
ATTRIBUTES = {**bleach.ALLOWED_ATTRIBUTES, "img": ["src", "alt", "title"]}
PROTOCOLS = ["http", "https", "mailto", "data"]  # data: only where ``_allowed`` lets it through
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]")
_URL_NOISE = re.compile(r"[`\000-\040\177-\240\s]+")  # what a browser (and bleach) ignores inside a URL
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # the attachments rendered, as ``DATA_IMAGE``
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
ATTACHMENT = "attachment:"


def _allowed(tag: str, name: str, value: str) -> bool:
    """bleach's attribute filter: the allowlist, and ``data:`` URLs only as an image's source."""
    if name not in ATTRIBUTES.get(tag, []):
        return False
    url = _URL_NOISE.sub("", convert_entities(value)).lower()  # as bleach reads it before checking protocols
    if name in ("href", "src") and url.startswith("data:"):
        return tag == "img" and name == "src" and bool(DATA_IMAGE.match(url))
    return True


def safe_attachments(attachments) -> dict[str, dict[str, str]]:
    """A cell's attachments reduced to raster images (``IMAGE_TYPES``) whose data is base64 text: by name, one
    mime type each; anything else (an SVG, HTML, a value of another shape) is left out."""
    safe: dict[str, dict[str, str]] = {}
    for name, bundle in (attachments or {}).items() if isinstance(attachments, dict) else ():
        if not isinstance(name, str) or not isinstance(bundle, dict):
            continue
        for mime in IMAGE_TYPES:
            data = bundle.get(mime)
            data = "".join(data) if isinstance(data, list) and all(isinstance(d, str) for d in data) else data
            if isinstance(data, str) and _BASE64.fullmatch(data):
                safe[name] = {mime: "".join(data.split())}
                break
    return safe


class _Renderer(IPythonRenderer):
    """nbconvert's renderer, with an ``attachment:`` the cell lacks left empty (the image shows its alt text)
    rather than stopping the whole page."""

    def _embed_image_or_attachment(self, src: str) -> str:
        if src.startswith(ATTACHMENT) and src[len(ATTACHMENT):] not in self.attachments:
            return ""
        return super()._embed_image_or_attachment(src)


def clean_markdown(source: str, attachments=None) -> str:
    """The markdown rendered to HTML, its ``attachment:`` images from ``attachments`` (``safe_attachments``), with
    every tag and attribute outside the allowlist escaped or dropped."""
    html = MarkdownWithMath(renderer=_Renderer(escape=False, attachments=safe_attachments(attachments))).render(source)
    return bleach.clean(html, tags=TAGS, attributes=_allowed, protocols=PROTOCOLS)


class SanitizeMarkdown(Preprocessor):
    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type in ("markdown", "raw"):
            cell.source = clean_markdown(cell.source, cell.get("attachments")) if cell.cell_type == "markdown" \
                else bleach.clean(cell.source)
            cell.attachments = {}
        return cell, resources
