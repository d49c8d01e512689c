"""The definitions' catalogue: what the teacher's views read of them (assignment and exercise names, order,
points), without torch.

The definitions (``assignments/<name>.py``) import torch, which takes seconds; ``vecgrade status`` and ``vecgrade
export`` need only their names and points. The catalogue is derived from the loaded definitions (``entry_of``) and
kept in the course folder as ``CATALOGUE``, stamped with the definitions folder's fingerprint
(``graders.model.fingerprint``) and a digest of this module's source (``Points``' defaults and the file's layout
live here): ``read_catalogue`` returns it only while both are the same, so a changed definition is never answered
from an older catalogue (the caller loads the definitions again and rewrites it).
The grade ids and ``Points`` are defined here, and the exercise model uses them: one source for each.
"""
from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

from graders.model.atomic import write_atomically
from graders.model.fingerprint import source_fingerprint
from graders.model.verdict import PARTS

if TYPE_CHECKING:
    from graders.model.exercise import Assignment

CATALOGUE = ".vecgrade-catalogue.json"  # in the course folder


def _code() -> str:
    """A digest of this module's source: a catalogue written by another version of it (other defaults, another
    layout) is no catalogue."""
    here = Path(__file__)
    return source_fingerprint(here.parent, [here])


@dataclass(frozen=True)
class Points:
    correct: float = 2.0
    vectorized: float = 1.0
    fast: float = 1.0

    def of(self, part: str) -> float:
        return getattr(self, part)


def grade_id(exercise: str, part: str) -> str:
    """The nbgrader grade id of one part of an exercise (its grade cell's name)."""
    return f"{exercise}_{part}"


class GradedExercise(Protocol):
    """What grading records of an exercise: an ``Exercise`` and an ``ExerciseEntry`` alike."""

    @property
    def name(self) -> str: ...

    @property
    def points(self) -> Points: ...

    def grade_id(self, part: str) -> str: ...


class GradedAssignment(Protocol):
    """What the gradebook's readers need of an assignment: an ``Assignment`` and an ``AssignmentEntry`` alike."""

    @property
    def name(self) -> str: ...

    @property
    def exercises(self) -> Sequence[GradedExercise]: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def folder_print(self) -> str: ...


@dataclass(frozen=True)
class ExerciseEntry:
    name: str
    points: Points

    def grade_id(self, part: str) -> str:
        return grade_id(self.name, part)


@dataclass(frozen=True)
class AssignmentEntry:
    name: str
    title: str
    order: int
    exercises: tuple[ExerciseEntry, ...]
    # the assignment's own fingerprint, as ``Assignment.fingerprint`` (kept in its entry)
    fingerprint: str = field(default="", compare=False, repr=False)
    # the definitions folder's, as ``Assignment.folder_print`` (the catalogue's stamp; not in its entries)
    folder_print: str = field(default="", compare=False, repr=False)


def entry_of(assignment: Assignment) -> AssignmentEntry:
    """The catalogue's entry of a loaded assignment."""
    exercises = tuple(ExerciseEntry(ex.name, ex.points) for ex in assignment.exercises)
    return AssignmentEntry(assignment.name, assignment.title, assignment.order, exercises, assignment.fingerprint,
                           assignment.folder_print)


def max_points(assignment: GradedAssignment) -> dict[str, float]:
    """{grade_id: points} of every part of every exercise, in the definitions' order."""
    return {ex.grade_id(p): ex.points.of(p) for ex in assignment.exercises for p in PARTS}


def _from_json(data: dict, fingerprint: str) -> AssignmentEntry:
    return AssignmentEntry(str(data["name"]), str(data["title"]), int(data["order"]),
                           tuple(ExerciseEntry(str(e["name"]), Points(**{p: float(e["points"][p]) for p in PARTS}))
                                 for e in data["exercises"]), str(data["fingerprint"]), fingerprint)


def read_catalogue(path: Path, fingerprint: str) -> dict[str, AssignmentEntry] | None:
    """The catalogue at ``path``, by name in course order, if it was written for definitions of ``fingerprint``;
    None when it is missing, unreadable, of another layout or of other definitions."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("code") != _code() or data.get("fingerprint") != fingerprint:
            return None
        entries = [_from_json(a, fingerprint) for a in data["assignments"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return {e.name: e for e in entries}


def write_catalogue(path: Path, fingerprint: str, entries: Sequence[AssignmentEntry]) -> None:
    """Write the catalogue of definitions of ``fingerprint`` (``entries`` in course order), whole or not at all; a
    folder that cannot be written is left alone (the next reader loads the definitions, as without one)."""
    path = Path(path)
    listed = [{k: v for k, v in asdict(e).items() if k != "folder_print"} for e in entries]
    text = json.dumps({"code": _code(), "fingerprint": fingerprint, "assignments": listed}, indent=1)
    with contextlib.suppress(OSError):
        write_atomically(path, text, mode=0o644)  # as a file written with open() is under the usual umask
