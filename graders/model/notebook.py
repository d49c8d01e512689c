"""Which cells of a submitted notebook are the student's program, and what they are called.

The program is the assignment's preamble, then every code cell except the
setup, grade and visible-examples cells, in notebook order, as a notebook's "Run All" would run them. Cells are
recognised by their nbgrader ``grade_id``, which nbgrader restores for locked
cells, so a student cannot smuggle code past the checks by editing metadata. A notebook whose metadata was
stripped (exported, copied through another tool) still has the course's setup cell: it is recognised by what it
does (``is_course_setup``), so its import of the self-check is not taken for the student's code. Leaving a cell
out only ever removes code from the program: nothing a left-out cell does runs where the answer is graded.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from nbformat import NotebookNode

from graders.model.verdict import PARTS

if TYPE_CHECKING:
    from graders.model.exercise import Assignment

SETUP_ID = "setup"
SELFCHECK_MODULE = "graders.student.selfcheck"


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
        if grade_id in skipped or is_locked_test(cell) or is_course_setup(cell.source, assignment):
            continue
        label = f"your `{answers[grade_id]}` cell" if grade_id in answers else f"cell {number}"
        cells.append((label, cell.source))
    return cells


def is_course_setup(source: str, assignment: Assignment) -> bool:
    """``source`` does only what the course's setup cell does (graders.course.build.setup_source): inside a guard
    that only re-raises, the preamble's imports and one import from the self-check, then ``register_exercises``
    calls. Comments, the facts registered and the guard's message do not matter; any other statement does (a
    student's own import in that cell keeps the whole cell the student's)."""
    try:
        body = ast.parse(source).body
        preamble = [ast.dump(s) for s in ast.parse(assignment.preamble).body]
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not the setup cell: the student's (or refused)
        return False
    if not body or not isinstance(body[0], ast.Try):
        return False
    guard = body[0]
    selfcheck = [s for s in guard.body if isinstance(s, ast.ImportFrom) and s.module == SELFCHECK_MODULE
                 and not s.level]
    try:
        imports = [ast.dump(s) for s in guard.body if s not in selfcheck]
    except RecursionError:  # nested past what any setup cell holds: the student's (graders.checks.nesting refuses it)
        return False
    if len(selfcheck) != 1 or imports != preamble or guard.orelse or guard.finalbody:
        return False
    if not all(h.body and all(isinstance(s, ast.Raise) for s in h.body) for h in guard.handlers):
        return False
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
               and s.value.func.id == "register_exercises" for s in body[1:])
