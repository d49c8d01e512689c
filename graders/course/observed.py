"""What the grader wrote into the autograded notebooks' grade cells: failures and timed speeds, per exercise.

A grade cell's ``metadata.vecgrade`` is the trusted verdict as data (``Verdict.to_json``, written by
``TrustedVerdicts``): its status, reason code, message and measured figures ("fast": speedup, time over the
reference's). Nothing here is the student's (the grader overwrites it in every grade cell after the kernel ran),
and nothing here reads text: neither the cell's output nor a verdict's message is parsed.

Failures are grouped by part and reason code (``Reason``), and shown with the class's figures: one number where
the class agrees, the range where it does not (``speedup 1.2-3.4``), and the group's most frequent message as an
example, as the grader wrote it. A failed "correct" leaves "vectorized" and "fast" not graded; those are counted
with their cause.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from textwrap import shorten

import nbformat

from graders.coursedir.paths import CoursePaths, Step
from graders.model.exercise import Assignment
from graders.model.verdict import GATED_MESSAGE, Reason, Status, Verdict, cell_verdict

GATED = GATED_MESSAGE
MAX_MESSAGE = 400  # characters of an example message kept: every message of the grader fits (the longest ~310)
# what each failing reason means, as the report names a group of failures
REASON_WORDS = {
    Reason.WRONG_VALUE: "wrong result", Reason.RAISED: "raised an error", Reason.NOT_WRITTEN: "not written yet",
    Reason.NOT_DEFINED: "function not defined", Reason.MODIFIED_INPUT: "changed an input (or not in place)",
    Reason.NOT_A_VIEW: "returned a copy, not a view", Reason.HANG: "never returned", Reason.CRASHED: "crashed",
    Reason.PYTHON_LOOP: "Python-level iteration or a forbidden call", Reason.OUTSIDE_SUBSET: "code outside the "
    "checked subset", Reason.KEEPS_STATE: "keeps state between calls", Reason.GROWS: "work grows with the input",
    Reason.FORBIDDEN_OP: "a forbidden op", Reason.THREADS: "started a thread", Reason.TOO_SLOW: "too slow",
    Reason.GATED: GATED_MESSAGE,
}


@dataclass
class Failure:
    """Failures of one part for one reason: how many, each numeric figure's values, and their messages."""
    part: str
    reason: Reason
    figures: dict[str, list[float]] = field(default_factory=dict)
    messages: Counter = field(default_factory=Counter)
    times: int = 0

    @property
    def gates(self) -> bool:
        """A failed "correct" leaves vectorized and fast not graded (``ExerciseChecks.run``)."""
        return self.part == "correct"

    def figures_text(self) -> str:
        """``speedup 1.2-3.4, ref_factor 4.1``: each figure the class's verdicts carry, one value or the range."""
        return ", ".join(f"{name} {_span(values)}" for name, values in sorted(self.figures.items()))

    def example(self) -> str:
        """The group's most frequent message, as the grader wrote it ("" for none)."""
        return self.messages.most_common(1)[0][0] if self.messages else ""

    def message(self) -> str:
        """The group in words: the reason, the class's figures, an example message."""
        figures = self.figures_text()
        head = REASON_WORDS.get(self.reason, self.reason.value) + (f" ({figures})" if figures else "")
        example = self.example()
        return f"{head}: e.g. {example}" if example else head


def _span(values: list[float]) -> str:
    """One number, or the range ``low-high`` of the numbers the class's verdicts carry."""
    low, high = min(values), max(values)
    return f"{low:.3g}" if low == high else f"{low:.3g}\u2013{high:.3g}"


@dataclass
class Speed:
    """One timed answer: its speedup over the loop version (None: stopped early as far slower) and its verdict."""
    speedup: float | None
    passed: bool


@dataclass
class Verdicts:
    """Per exercise: the timed answers of the class, and its failures grouped by part and reason."""
    speeds: dict[str, list[Speed]] = field(default_factory=dict)
    failures: dict[str, dict[tuple[str, Reason], Failure]] = field(default_factory=dict)

    def frequent(self, exercise: str, n: int = 5) -> list[Failure]:
        return sorted(self.failures.get(exercise, {}).values(), key=lambda f: (-f.times, f.part, f.reason.value))[:n]

    def count(self, exercise: str, verdict: Verdict) -> None:
        """Counts a failed ``verdict`` of ``exercise`` in its group (part, reason), with its numeric figures."""
        group = self.failures.setdefault(exercise, {}).setdefault(
            (verdict.part, verdict.reason), Failure(verdict.part, verdict.reason))
        for name, value in verdict.figures.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                group.figures.setdefault(name, []).append(float(value))
        text = shorten(verdict.message, width=MAX_MESSAGE, placeholder=" ...")  # shown as it is, never parsed
        if text:
            group.messages[text] += 1
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
                out.count(ex.name, verdict)
    return out
