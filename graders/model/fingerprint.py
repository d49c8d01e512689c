"""The definitions' fingerprint: the one answer to "did the definitions change?".

A course's definitions are the files of its definitions folder (the assignment
modules, their variants, cases and lessons): ``definitions_files`` reads them,
``fingerprint`` digests them. Every place that must notice a change uses it: the
coordinator forgets what it knew (``Engine.definitions``), a process keeps one
folder and one import per version (``graders.engine.job``,
``graders.model.exercise.load_assignment_once``), and a verdict's salt holds it
(``graders.checks.submission.verdict_salt``), so a verdict kept under older
definitions is never reused.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

SUFFIXES = (".py", ".md")  # what a definitions folder holds that grading reads


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
