"""What the grader wrote into the autograded notebooks' grade cells: failure messages and timed speeds, per exercise.

A grade cell's ``metadata.vecgrade`` is the trusted verdict as data (``Verdict.to_json``, written by
``TrustedVerdicts``): its status, reason code, message and measured figures ("fast": speedup, time over the
reference's). Nothing here is the student's (the grader overwrites it in every grade cell after the kernel ran),
and nothing here reads the cell's output text.

Failure messages are grouped by their shape (the message with its numbers taken
out), and shown with their numbers: one number where the class agrees, the range
where it does not (``38-64 calls took more than 0.3 s``). A failed "correct"
leaves "vectorized" and "fast" not graded; those are counted with their cause.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from graders.coursedir.paths import CoursePaths, Step
from graders.model.exercise import Assignment
from graders.model.verdict import GATED_MESSAGE, Reason, Status, Verdict, cell_verdict

GATED = GATED_MESSAGE
NUMBER = re.compile(r"(?<![\w.])[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
MAX_MESSAGE = 400  # characters of a message kept: every message of the grader fits (the longest "fast" ~310)
SLOT = "\x00"  # where a number was taken out of a message (a message never holds NUL)


@dataclass
class Failure:
    """Failures of one part sharing a message shape: how many, and the numbers at each place in the message."""
    part: str
    shape: str
    numbers: list[list[str]]
    times: int = 0

    @property
    def gates(self) -> bool:
        """A failed "correct" leaves vectorized and fast not graded (``ExerciseChecks.run``)."""
        return self.part == "correct"

    def message(self) -> str:
        pieces = self.shape.split(SLOT)
        out = pieces[0]
        for values, piece in zip(self.numbers, pieces[1:], strict=True):
            out += _span(values) + piece
        return out


def _span(values: list[str]) -> str:
    """One number, or the range ``low-high`` of the numbers seen at one place of a message."""
    low, high = min(values, key=float), max(values, key=float)
    return low if float(low) == float(high) else f"{low}\u2013{high}"


@dataclass
class Speed:
    """One timed answer: its speedup over the loop version (None: stopped early as far slower) and its verdict."""
    speedup: float | None
    passed: bool


@dataclass
class Verdicts:
    """Per exercise: the timed answers of the class, and its failures grouped by message shape."""
    speeds: dict[str, list[Speed]] = field(default_factory=dict)
    failures: dict[str, dict[tuple[str, str], Failure]] = field(default_factory=dict)

    def frequent(self, exercise: str, n: int = 5) -> list[Failure]:
        return sorted(self.failures.get(exercise, {}).values(), key=lambda f: (-f.times, f.part))[:n]

    def count(self, exercise: str, part: str, text: str) -> None:
        first = text.strip().splitlines()[0] if text.strip() else "(no message)"
        first = first[:MAX_MESSAGE].replace(SLOT, "")
        shape = NUMBER.sub(SLOT, first)
        group = self.failures.setdefault(exercise, {}).setdefault(
            (part, shape), Failure(part, shape, [[] for _ in NUMBER.findall(first)]))
        for slot, value in zip(group.numbers, NUMBER.findall(first), strict=True):
            slot.append(value)
        group.times += 1


def _speed(verdict: Verdict) -> Speed | None:
    """The timed speed of a "fast" verdict; a far slower answer stopped before it was timed fully has none."""
    speedup = verdict.figures.get("speedup")
    if isinstance(speedup, (int, float)) and not isinstance(speedup, bool):
        return Speed(float(speedup), verdict.passed)
    return Speed(None, False) if verdict.reason is Reason.TOO_SLOW else None


def read_verdicts(root: Path, assignment: Assignment, students: list[str]) -> Verdicts:
    """The verdicts in ``autograded/<student>/<assignment>/`` of each of ``students``."""
    out = Verdicts({ex.name: [] for ex in assignment.exercises}, {ex.name: {} for ex in assignment.exercises})
    for student in students:
        path = CoursePaths(root).notebook(Step.AUTOGRADED, assignment.name, student)
        if not path.exists():
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            found = assignment.part_of(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))
            if not found or cell.get("cell_type") != "code":
                continue
            ex, part = found
            verdict = cell_verdict(cell)
            if verdict is None or verdict.status is Status.NOT_GRADED:
                continue
            if part == "fast" and (speed := _speed(verdict)) is not None:
                out.speeds[ex.name].append(speed)
            if not verdict.passed and verdict.reason is not Reason.GATED:
                out.count(ex.name, part, verdict.message)
    return out
