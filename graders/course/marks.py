"""The marks table: one row per student, one "correct / vectorized / fast" column per exercise.

``vecgrade report`` and ``vecgrade demo`` both show it; the demo adds what each
simulated student wrote and whether the marks are what the student deserves.
"""
from __future__ import annotations

from typing import Sequence

from rich.table import Table

from graders.model.exercise import PARTS, Assignment, Exercise

Marks = tuple[float | None, ...]  # one exercise's marks, in PARTS order; None = no grade row


def exercise_marks(ex: Exercise, scores: dict[str, float | None]) -> Marks:
    """The marks of one exercise in one student's ``{grade_id: score}``."""
    return tuple(scores.get(ex.grade_id(p)) for p in PARTS)


def format_marks(marks: Marks, by_hand: Sequence[bool] = ()) -> str:
    """``2 / 0 / 1``: one exercise's marks, ``-`` for no grade row; a mark graded by hand (``by_hand``, in PARTS
    order) is starred: ``2* / 0 / 1``."""
    flags = tuple(by_hand) or (False,) * len(marks)
    return " / ".join(("-" if m is None else f"{m:g}") + ("*" if hand else "")
                      for m, hand in zip(marks, flags, strict=True))


def total(assignment: Assignment, scores: dict[str, float | None]) -> float:
    return sum(m or 0.0 for ex in assignment.exercises for m in exercise_marks(ex, scores))


def marks_table(assignment: Assignment, title: str, before: Sequence[str] = ("student",),
                after: Sequence[str] = ()) -> Table:
    """An empty table: the ``before`` columns, one column per exercise, the ``after`` columns."""
    table = Table(title=title)
    for column in (*before, *(ex.name for ex in assignment.exercises), *after):
        table.add_column(column)
    return table


def add_marks_row(table: Table, assignment: Assignment, scores: dict[str, float | None],
                  before: Sequence[str], after: Sequence[str] = ()) -> None:
    cells = [format_marks(exercise_marks(ex, scores)) for ex in assignment.exercises]
    table.add_row(*before, *cells, *after)
