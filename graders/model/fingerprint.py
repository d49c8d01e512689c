"""The definitions' fingerprints: the one answer to "did the definitions change?".

A course's definitions are the files of its definitions folder (the assignment
modules, their variants, cases and lessons): ``definitions_files`` reads them,
``fingerprint`` digests them. The folder's fingerprint is what a process must
notice: the coordinator forgets what it knew (``Engine.definitions``), a process keeps one
folder and one import per version (``graders.engine.job``,
``graders.model.exercise.load_assignment_once``). An **assignment's** fingerprint
(``assignment_fingerprint``) digests only the files it is defined by (``assignment_files``: those named after it,
and the shared ones named after no assignment), so editing one assignment changes no other's: a verdict's salt
holds it (``graders.checks.submission.verdict_salt``), so a verdict kept under older definitions of its own
assignment is never reused. The salt also holds ``grader_fingerprint``, the same digest of the grader's own
deciding code, so neither is a verdict kept by an older grader. A graded notebook records its assignment's
fingerprint (``stamp``, read back with ``stamped``), so the teacher's views (``graders.course.results.version_changes``,
``vecgrade status``) say which marks are from older definitions of that assignment (``graded_under_other``).

Notebooks graded before fingerprints were per assignment record the whole folder's (``stamped_folder``): they are
compared with the folder's fingerprint now, so any change of the definitions since counts for them, as it did
when they were graded; a regrade records the assignment's own.
"""
from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path

SUFFIXES = (".py", ".md")  # what a definitions folder holds that grading reads
DECIDING = ("model", "sandbox", "checks")  # the subpackages of graders whose code decides a verdict


def definitions_files(folder: Path) -> dict[str, str]:
    """Every file of a course's definitions folder (the assignment modules import their variants, lessons
    and case generators), by path relative to it: what a task carries so a worker needs no shared folder."""
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(Path(folder).rglob("*"))
            if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts}


def fingerprint(files: Mapping[str, str]) -> str:
    """32 hex digits that change whenever any file's name or text changes (the same for the same files, in any
    order, in any process)."""
    return hashlib.sha256(json.dumps(dict(files), sort_keys=True).encode()).hexdigest()[:32]


def folder_fingerprint(folder: Path) -> str:
    """``fingerprint`` of the definitions folder's files."""
    return fingerprint(definitions_files(folder))


def assignment_names(paths: Iterable[str]) -> set[str]:
    """The assignments of a definitions folder, from its files' relative paths: its top-level modules but those
    starting with ``_`` (as ``graders.model.exercise.load_course`` lists them)."""
    return {Path(p).stem for p in paths if Path(p).parent == Path(".") and Path(p).suffix == ".py"
            and not Path(p).name.startswith("_")}


def defines(path: str, name: str, names: set[str]) -> bool:
    """Whether the definitions file at ``path`` (relative to the folder) is one assignment ``name`` is defined by:
    named after it in any subfolder (``name.py``, ``variants/name.py``, ``cases/name.py``, ``lessons/name.md``), or
    shared, named after none of the folder's assignments ``names`` (``variants/__init__.py``, a helper module
    ``_shared.py`` the assignments import): a shared file defines every assignment. An assignment that reads
    another's files (``load_variants`` of another name) is not seen: each assignment's files carry its name."""
    stem = Path(path).stem
    return stem == name or stem not in names


def assignment_files(files: Mapping[str, str], name: str) -> dict[str, str]:
    """The files of a definitions folder (``definitions_files``) that assignment ``name`` is defined by
    (``defines``)."""
    names = assignment_names(files)
    return {p: text for p, text in files.items() if defines(p, name, names)}


def assignment_fingerprint(files: Mapping[str, str], name: str) -> str:
    """``fingerprint`` of ``assignment_files``: changes when a file of the assignment or a shared one changes, not
    when another assignment's does."""
    return fingerprint(assignment_files(files, name))


STAMP = "vecgrade"  # the graded notebook's metadata entry that holds {"assignment": its assignment's fingerprint}
OWN, LEGACY = "assignment", "definitions"  # its keys: today's, and the whole folder's (recorded before)


def stamp(metadata: MutableMapping, digest: str) -> None:
    """Record in a graded notebook's ``metadata`` its assignment's fingerprint, which its verdicts were computed
    under; "" (definitions built in code, no folder's) records none. Whatever a student's notebook held there is
    replaced or removed."""
    if digest:
        metadata[STAMP] = {OWN: digest}
    else:
        metadata.pop(STAMP, None)


def _recorded(metadata, key: str) -> str:
    entry = metadata.get(STAMP) if isinstance(metadata, Mapping) else None
    digest = entry.get(key) if isinstance(entry, Mapping) else None
    return digest if isinstance(digest, str) else ""


def stamped(metadata) -> str:
    """The assignment's fingerprint ``stamp`` recorded in a notebook's ``metadata`` ("" when none: graded before
    notebooks recorded it or before it was the assignment's own, or not a graded notebook)."""
    return _recorded(metadata, OWN)


def stamped_folder(metadata) -> str:
    """The whole folder's fingerprint a notebook graded before fingerprints were per assignment records ("" when
    none)."""
    return _recorded(metadata, LEGACY)


def graded_under_other(metadata, own: str, folder: str) -> bool:
    """Whether a graded notebook's ``metadata`` records other definitions than its assignment's now (``own``, and
    the whole folder's ``folder``): its own fingerprint against ``own``; a notebook that records only the folder's
    (graded before fingerprints were per assignment) against ``folder``, so any change of the definitions since
    counts; a notebook that records none is not counted, nor is any when ``own`` is "" (built in code)."""
    if not own:
        return False
    recorded = stamped(metadata)
    if recorded:
        return recorded != own
    legacy = stamped_folder(metadata)
    return bool(legacy) and bool(folder) and legacy != folder


def source_fingerprint(root: Path, paths: Iterable[Path]) -> str:
    """``fingerprint`` of source files (``paths``, named relative to ``root`` and read as UTF-8): the one digest of
    "this code", for whatever must notice that code changed (the verdicts' salt, the catalogue's stamp)."""
    return fingerprint({str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in paths})


def code_fingerprint(package: Path) -> str:
    """``fingerprint`` of the code in ``package`` that decides a verdict (its ``DECIDING`` subpackages)."""
    return source_fingerprint(package, (p for sub in DECIDING for p in sorted((package / sub).rglob("*.py"))))


@functools.cache
def grader_fingerprint() -> str:
    """``code_fingerprint`` of this grader (the model, the sandbox and the checks), read once per process: a
    verdict kept by an older grader (a rule, a tolerance or a measurement changed) is never reused by a newer
    one."""
    return code_fingerprint(Path(__file__).resolve().parent.parent)
