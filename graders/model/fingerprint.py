"""The definitions' fingerprint: the one answer to "did the definitions change?".

A course's definitions are the files of its definitions folder (the assignment
modules, their variants, cases and lessons): ``definitions_files`` reads them,
``fingerprint`` digests them. Every place that must notice a change uses it: the
coordinator forgets what it knew (``Engine.definitions``), a process keeps one
folder and one import per version (``graders.engine.job``,
``graders.model.exercise.load_assignment_once``), and a verdict's salt holds it
(``graders.checks.submission.verdict_salt``), so a verdict kept under older
definitions is never reused. The salt also holds ``grader_fingerprint``, the same digest of the grader's own
deciding code, so neither is a verdict kept by an older grader. A graded notebook records the fingerprint it was
graded under (``stamp``, read back with ``stamped``), so the teacher's views
(``graders.course.results.version_changes``) say which marks are from older
definitions.
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


STAMP = "vecgrade"  # the graded notebook's metadata entry that holds {"definitions": its fingerprint}


def stamp(metadata: MutableMapping, digest: str) -> None:
    """Record in a graded notebook's ``metadata`` the fingerprint its verdicts were computed under; "" (definitions
    built in code, no folder's) records none. Whatever a student's notebook held there is replaced or removed."""
    if digest:
        metadata[STAMP] = {"definitions": digest}
    else:
        metadata.pop(STAMP, None)


def stamped(metadata) -> str:
    """The fingerprint ``stamp`` recorded in a notebook's ``metadata`` ("" when none: graded before notebooks
    recorded it, or not a graded notebook)."""
    entry = metadata.get(STAMP) if isinstance(metadata, Mapping) else None
    digest = entry.get("definitions") if isinstance(entry, Mapping) else None
    return digest if isinstance(digest, str) else ""


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
