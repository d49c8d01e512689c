"""Submissions refused before any grading, each with the fix: a notebook nbgrader does not know, an empty notebook.

nbgrader 0.9.6 grades the notebooks of a submission it knows and only logs
"Skipping unknown notebook" for the others (``broadcasting (1).ipynb``, a
browser's copy of a download), so a student who submitted the wrong one of two
files would get a 0. A notebook with no cells would get a 0 for every answer,
as if each were wrong. Both are the teacher's to sort out, so both refuse the
submission as a whole (nothing of it reaches the gradebook), with one line that
says what to do; ``SafeAutograde`` raises it before nbgrader copies anything.
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters.base import NbGraderException


class UnknownNotebookError(NbGraderException):
    """A notebook in the submission is not one of the assignment's."""


class EmptyNotebookError(NbGraderException):
    """A notebook in the submission has no cells at all."""


def _has_no_cells(path: Path) -> bool:
    """True for a well-formed notebook without cells (a file that is not JSON is left to nbgrader's own reason)."""
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as f:
            nb = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(nb, dict) and isinstance(nb.get("cells"), list) and not nb["cells"]


def refusal(folder: Path, known: set[str], shown: str, assignment: str, student: str) -> NbGraderException | None:
    """Why the submission in ``folder`` cannot be graded (``known``: the assignment's notebook names; ``shown``:
    the folder as the teacher should read it), or None; the message ends with the command to run after the fix."""
    regrade = f"then vecgrade grade {shlex.quote(assignment)} -s {shlex.quote(student)}"
    notebooks = sorted(p for p in Path(folder).glob("*.ipynb") if p.is_file() and not p.is_symlink())
    unknown = [p.name for p in notebooks if p.stem not in known]
    if unknown:
        expected = ", ".join(f"{n}.ipynb" for n in sorted(known))
        return UnknownNotebookError(f"UnknownNotebookError: remove or rename {', '.join(unknown)} in {shown} "
                                    f"(the assignment's notebook: {expected}), {regrade}")
    empty = [p.name for p in notebooks if _has_no_cells(p)]
    if empty:
        return EmptyNotebookError(f"EmptyNotebookError: {', '.join(empty)} in {shown} is an empty notebook (no cells): "
                                  f"not graded; put the student's real notebook there, {regrade}")
    return None


def known_notebooks(db_url: str, assignment: str) -> set[str] | None:
    """The assignment's notebook names in the gradebook (None when it has no such assignment: nbgrader says so)."""
    with Gradebook(db_url) as gb:
        try:
            return {nb.name for nb in gb.find_assignment(assignment).notebooks}
        except MissingEntry:
            return None


def submission_refusal(root: str, folder: str, known: set[str] | None, assignment: str,
                       student: str) -> NbGraderException | None:
    """``refusal`` for the submission in ``folder`` of the course at ``root``; ``known``: the assignment's notebooks
    in the gradebook (``known_notebooks``)."""
    if not known or not os.path.isdir(folder):
        return None
    shown = os.path.relpath(folder, root) + os.sep
    return refusal(Path(folder), known, shown, assignment, student)
