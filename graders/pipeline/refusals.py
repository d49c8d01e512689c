"""Submissions refused before any grading, each with the fix: no notebook at all, a notebook nbgrader does not
know, a file that is not a notebook, an empty notebook.

nbgrader 0.9.6 grades the notebooks of a submission it knows and only logs
"Skipping unknown notebook" for the others (``broadcasting (1).ipynb``, a
browser's copy of a download), so a student who submitted the wrong one of two
files would get a 0. A notebook with no cells would get a 0 for every answer,
as if each were wrong. An empty folder or a file that is not JSON (a 0-byte
upload) only got nbgrader's own words ("No notebooks were matched by ...",
``NotJSONError: Notebook does not appear to be JSON: ''``), which name no fix.
All are the teacher's to sort out, so all refuse the submission as a whole
(nothing of it reaches the gradebook), with one line that says what to do;
``SafeAutograde`` raises it before nbgrader copies anything. Each refusal also
carries the same reason worded for the student (``for_student``: what to change
in their own folder, and to submit again; no teacher's command, no course path),
which ``vecgrade serve`` puts on the student's page; its admission uses the same
wording (``*_for_student``).
"""
from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.converters.base import NbGraderException

from graders.model.errors import VecgradeError
from graders.model.inert import inert


def student_words(exc: NbGraderException, for_student: str) -> NbGraderException:
    """``exc`` (worded for the teacher) carrying ``for_student``: the same reason as the student's page says it."""
    exc.for_student = for_student  # type: ignore[attr-defined]
    return exc


def _quoted(names: list[str]) -> str:
    return ", ".join(f"`{inert(n)}`" for n in names)


def unknown_for_student(unknown: list[str], known: list[str], present: list[str]) -> str:
    """What the student reads about notebooks (file names) the assignment does not have (``known``: its notebook
    ids; ``present``: the submission's notebook ids): remove them, or rename the one copy when it is alone."""
    shown, expected = _quoted(unknown), _quoted([f"{k}.ipynb" for k in sorted(known)])
    missing = [k for k in sorted(known) if k not in present]
    if len(unknown) == 1 and len(missing) == 1:
        return (f"{shown} is not a notebook of this assignment ({expected}): rename {shown} to "
                f"`{inert(missing[0])}.ipynb`, and submit again")
    return (f"{shown} {'is' if len(unknown) == 1 else 'are'} not a notebook of this assignment ({expected}): "
            f"remove {shown} and submit again")


def not_a_notebook_for_student(name: str, why: str) -> str:
    return f"`{inert(name)}` is not a notebook ({why}): open the notebook you worked in, save it, and submit again"


def empty_for_student(names: list[str]) -> str:
    return (f"{_quoted(names)} {'is an empty notebook' if len(names) == 1 else 'are empty notebooks'} (no cells): "
            "open the notebook you worked in, save it, and submit again")


def no_notebook_for_student(known: list[str]) -> str:
    return (f"the submission holds no notebook (.ipynb): put {_quoted([f'{k}.ipynb' for k in sorted(known)])} in "
            "the assignment's folder, and submit again")


class UnknownNotebookError(VecgradeError, NbGraderException):
    """A notebook in the submission is not one of the assignment's."""


class EmptyNotebookError(VecgradeError, NbGraderException):
    """A notebook in the submission has no cells at all."""


class NotANotebookError(VecgradeError, NbGraderException):
    """A ``.ipynb`` file in the submission is empty or not JSON."""


class NoNotebookError(VecgradeError, NbGraderException):
    """The submission folder holds no notebook at all."""


def _read(path: Path) -> bytes | None:
    """The file's bytes (None when it cannot be read: left to nbgrader's own reason)."""
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as f:
            return f.read()
    except OSError:
        return None


@dataclass
class Read:
    """One notebook file, read and parsed once: its bytes (None: unreadable), its JSON (None: not JSON), and why it
    is not a notebook at all ("an empty file", "not JSON"; "" when it is JSON)."""
    data: bytes | None
    json: Any = None
    not_json: str = ""


def notebook_of(read: Read):
    """The notebook ``read`` holds, as ``nbformat.reads(data, as_version=4)`` makes it, from the JSON already parsed
    (its version's reader: lines joined, then converted to version 4; invalid metadata is logged, as nbformat does)."""
    from nbformat import convert, validate, versions
    from nbformat.reader import get_version
    from nbformat.validator import ValidationError
    major, minor = get_version(read.json)
    nb = convert(versions[major].to_notebook_json(read.json, minor=minor), 4)
    try:
        validate(nb)
    except ValidationError:
        pass  # nbformat.reads only logs it; nbgrader's CheckCellMetadata refuses what matters
    return nb


class NotebookReads:
    """Each notebook file of a submission read and parsed once, however many checks ask (the intake's cell count,
    the refusals, the job's own reading): ``get(path)``."""

    def __init__(self):
        self._found: dict[Path, Read] = {}

    def get(self, path: Path) -> Read:
        path = Path(path)
        if path not in self._found:
            data = _read(path)
            if data is None:
                self._found[path] = Read(None)
            elif not data.strip():
                self._found[path] = Read(data, None, "an empty file")
            else:
                try:
                    self._found[path] = Read(data, json.loads(data))
                except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError; nested past the parser
                    self._found[path] = Read(data, None, "not JSON")
        return self._found[path]


def _not_json(path: Path, reads: NotebookReads) -> str:
    """Why ``path`` is not a notebook at all ("an empty file", "not JSON"), or "" when it is JSON."""
    return reads.get(path).not_json


def _has_no_cells(path: Path, reads: NotebookReads) -> bool:
    """True for a well-formed notebook without cells (a file that is not JSON is ``_not_json``'s)."""
    nb = reads.get(path).json
    return isinstance(nb, dict) and isinstance(nb.get("cells"), list) and not nb["cells"]


def refusal(folder: Path, known: set[str], shown: str, assignment: str, student: str,
            reads: NotebookReads | None = None) -> NbGraderException | None:
    """Why the submission in ``folder`` cannot be graded (``known``: the assignment's notebook names; ``shown``:
    the folder as the teacher should read it; ``reads``: the notebooks as already read), or None; the message ends
    with the command to run after the fix."""
    reads = reads if reads is not None else NotebookReads()
    regrade = f"then vecgrade grade {shlex.quote(assignment)} -s {shlex.quote(student)}"
    notebooks = sorted(p for p in Path(folder).glob("*.ipynb") if p.is_file() and not p.is_symlink())
    expected = ", ".join(f"{n}.ipynb" for n in sorted(known))
    if not notebooks:
        return student_words(NoNotebookError(f"NoNotebookError: no notebook in {shown}: put {expected} there, "
                                             f"{regrade}"), no_notebook_for_student(sorted(known)))
    unknown = [p.name for p in notebooks if p.stem not in known]
    if unknown:
        return student_words(UnknownNotebookError(f"UnknownNotebookError: remove or rename {', '.join(unknown)} in "
                                                  f"{shown} (the assignment's notebook: {expected}), {regrade}"),
                             unknown_for_student(unknown, sorted(known), [p.stem for p in notebooks]))
    broken = [(p.name, why) for p in notebooks if (why := _not_json(p, reads))]
    if broken:
        name, why = broken[0]
        return student_words(NotANotebookError(f"NotANotebookError: {name} in {shown} is not a notebook ({why}): not "
                                               f"graded; put the student's real notebook there, {regrade}"),
                             not_a_notebook_for_student(name, why))
    empty = [p.name for p in notebooks if _has_no_cells(p, reads)]
    if empty:
        return student_words(EmptyNotebookError(f"EmptyNotebookError: {', '.join(empty)} in {shown} is an empty "
                                                f"notebook (no cells): not graded; put the student's real notebook "
                                                f"there, {regrade}"), empty_for_student(empty))
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
