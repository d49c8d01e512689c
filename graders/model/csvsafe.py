"""CSV files that a spreadsheet opens as data: no cell vecgrade writes is ever run as a formula.

Text a student controls reaches vecgrade's CSV files: a folder name becomes a student id
(``=HYPERLINK(...)``), nbgrader's reasons quote file names, ``timestamp.txt`` is copied as
written. A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and some strip a
leading tab or carriage return first) as a formula. Every writer (the export, ``parts.csv``,
``ungraded.csv``, ``arrivals.csv``) goes through ``write_rows``, which puts a ``'`` (the
spreadsheet's own "this is text" mark) before such a cell; a number (``-1.5``) is left a number.
A cell that starts with ``'`` gets one more, so ``read_rows`` gives back exactly what was written.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Iterable, Mapping

from graders.model.atomic import write_atomically

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
MARK = "'"
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value: object) -> str:
    """``value`` as a CSV cell no spreadsheet runs: text that could start a formula gets a leading ``'``."""
    text = "" if value is None else str(value)
    if NUMBER.fullmatch(text):
        return text
    return MARK + text if text.startswith((*FORMULA_START, MARK)) else text


def unmark(cell: str) -> str:
    """The text ``safe_cell`` was given (its mark removed)."""
    return cell[1:] if cell.startswith(MARK) else cell


def write_rows(dest: Path, fieldnames: list[str], rows: Iterable[Mapping[str, object]]) -> None:
    """A CSV of ``rows`` (dicts; missing keys are empty cells), header first, every cell through
    ``safe_cell``; in UTF-8, replaced whole (``write_atomically``: the old file's mode, else ``open()``'s), so a
    reader never sees half a file."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow([safe_cell(name) for name in fieldnames])
    for row in rows:
        writer.writerow([safe_cell(row.get(name, "")) for name in fieldnames])
    write_atomically(dest, out.getvalue())


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV written by ``write_rows``, as it was given them (``[]`` when there is no file)."""
    if not Path(path).exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = [unmark(name) for name in next(reader, [])]
        return [dict(zip(header, (unmark(c) for c in row), strict=False)) for row in reader]
