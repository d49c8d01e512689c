"""Whether a submission is the one that was graded: by content, never by file times.

Autograde copies ``submitted/<student>/<a>/`` into ``autograded/<student>/<a>/`` and, in each notebook, overwrites
only the locked cells (nbgrader's ``is_locked``: grade cells and locked cells) and the outputs; the student's own
cells (answers, scratch, markdown) and their other files stay as they were, but for the files of ``source/<a>/``
it copies over theirs. ``answer_digest`` digests exactly what autograde keeps, so the graded copy and the
submission it came from have the same digest, and a resubmission collected since (``nbgrader collect --update``)
another one, whatever the files' times.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from graders.coursedir.course import Course
from graders.coursedir.paths import Step

NOT_ANSWERS = {"timestamp.txt", "submission_secret.txt"}  # written by nbgrader and vecgrade, not the student


def locked(cell: dict) -> bool:
    """nbgrader's ``is_locked``: a cell autograde overwrites with the teacher's version."""
    meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
    if not isinstance(meta, dict):
        return False
    if meta.get("solution"):
        return False
    return bool(meta.get("grade") or meta.get("locked"))


def text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def notebook_cells(path: Path) -> list[dict] | None:
    """A notebook's cells (None when it is not one)."""
    try:
        cells = json.loads(path.read_bytes()).get("cells")
    except (OSError, ValueError, AttributeError):
        return None
    return [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else None


def answer_digest(folder: Path, skip: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """A digest of what the student wrote in ``folder`` (a submission, or its graded copy): each notebook's cells
    that autograde keeps as they are (not the locked ones it overwrites; outputs and metadata not counted), and
    every other file's bytes, but for nbgrader's and vecgrade's own (``NOT_ANSWERS``) and ``skip`` (the files
    autograde copies from ``source/`` over the student's)."""
    digest = hashlib.sha256()
    if not folder.is_dir():
        return ""
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in (".ipynb_checkpoints", "__pycache__"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = str(path.relative_to(folder))
            if rel in NOT_ANSWERS or rel in skip or name.endswith(".pyc"):
                continue
            digest.update(rel.encode() + b"\0")
            if name.endswith(".ipynb"):
                cells = notebook_cells(path)
                if cells is None:
                    digest.update(path.read_bytes())
                    continue
                for cell in cells:
                    if not locked(cell):
                        digest.update(f"{cell.get('cell_type')}\0{text(cell.get('source', ''))}\0".encode())
            else:
                digest.update(path.read_bytes())
            digest.update(b"\1")
    return digest.hexdigest()


def source_files(course: Course, assignment: str) -> set[str]:
    """The non-notebook files of ``source/<assignment>/``: autograde copies them over the student's."""
    folder = course.paths.folder(Step.SOURCE, assignment)
    out = set()
    for dirpath, _, filenames in os.walk(folder):
        out |= {str((Path(dirpath) / n).relative_to(folder)) for n in filenames if not n.endswith(".ipynb")}
    return out


def resubmitted(course: Course, assignment: str, student: str, skip: set[str]) -> bool:
    """Whether ``submitted/`` now holds another submission than the one graded into ``autograded/``."""
    graded = course.paths.folder(Step.AUTOGRADED, assignment, student)
    if not graded.is_dir():
        return False  # graded elsewhere (on submit, then cleaned): nothing to compare with
    return answer_digest(course.paths.folder(Step.SUBMITTED, assignment, student), skip) != \
        answer_digest(graded, skip)
