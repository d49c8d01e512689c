"""Which cells of a submitted notebook are the student's program, and what they are called.

The program is the assignment's preamble, then every code cell except the
setup, grade and visible-examples cells, in notebook order, as a notebook's "Run All" would run them. Cells are
recognised by their nbgrader ``grade_id``, which nbgrader restores for locked
cells, so a student cannot smuggle code past the checks by editing metadata.
"""
from __future__ import annotations

from nbformat import NotebookNode

from graders.model.exercise import PARTS, Assignment

SETUP_ID = "setup"


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata, ``{}`` for a cell nbgrader does not manage: the one place that reads it."""
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id_of(cell) -> str:
    return nbgrader_meta(cell).get("grade_id", "")


def is_locked_test(cell) -> bool:
    """A grade cell that is not also a solution: a test the student may not edit (nbgrader's ``is_grade``
    without ``is_solution``)."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution")


def answer_id(name: str) -> str:
    return f"{name}_answer"


def examples_id(name: str) -> str:
    return f"{name}_examples"


def loop_id(name: str) -> str:
    return f"{name}_loop"


def submission_cells(nb: NotebookNode, assignment: Assignment) -> list[tuple[str, str]]:
    """(label, source) of each code cell that belongs to the student's program."""
    answers = {answer_id(ex.name): ex.name for ex in assignment.exercises}
    skipped = {SETUP_ID} | {examples_id(ex.name) for ex in assignment.exercises}
    skipped |= {ex.grade_id(p) for ex in assignment.exercises for p in PARTS}
    cells = [("preamble", assignment.preamble)]
    for number, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code":
            continue
        grade_id = grade_id_of(cell)
        if grade_id in skipped or is_locked_test(cell):
            continue
        label = f"your `{answers[grade_id]}` cell" if grade_id in answers else f"cell {number}"
        cells.append((label, cell.source))
    return cells
