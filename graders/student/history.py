"""The code a student's kernel has run, as the grader would see it: one (label, source) per cell.

The grader reads the notebook's code cells; the self-check runs in the kernel and
reads IPython's history of raw inputs instead (each cell as the student typed it), so
helpers defined in any cell are seen, and line numbers count from the top of each
cell. Both read a cell through the one reader, graders.checks.reader (IPython's own
input transformers), so they agree on what each cell defines and on its lines. The history also holds cells
that were edited and run again; an older run is dropped when a later run rebinds
every name it bound (or, for a cell that did not parse, starts the same way), so a
loop the student has since removed does not show up. Cells of the kit itself
(setup, examples, grade cells) are skipped, as the grader skips them.
"""
from __future__ import annotations

import ast
from typing import Sequence

from graders.checks.nesting import TooDeep
from graders.checks.reach import parse_cell

KIT_MARKERS = ("graders.student", "# Visible examples for", "grade_part(")


def kernel_history() -> list[tuple[int, str]] | None:
    """(execution count, raw source) of each cell this IPython kernel ran, or None outside IPython. The raw
    source is what the student typed, as the notebook saves it (``In`` holds IPython's translation)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the student package
        return None
    shell = get_ipython()
    if shell is None:
        return None
    manager = shell.history_manager
    inputs = manager.input_hist_raw if manager is not None else shell.user_ns.get("In", [])
    return [(count, source) for count, source in enumerate(inputs) if source and source.strip()]


def _bound(source: str) -> set[str] | None:
    """The module-level names a cell binds, as the grader reads it; None for a cell that does not run."""
    try:
        cell = parse_cell("cell", source)
    except TooDeep:
        return None  # the grader refuses it, and the self-check says so (graders.student.selfcheck)
    if cell.tree is None:
        return None
    if cell.binds_nothing:  # ``%%timeit``: its code ran inside a function
        return set()
    tree = cell.tree
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "")


def program_cells(history: Sequence[tuple[int, str]], preamble: str,
                  answers: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The student's program from a kernel history, newest run of each cell, labelled like the grader's.

    A cell that defines one of ``answers`` is "your `name` cell"; any other is "cell In [N]".
    """
    kept: list[tuple[int, str]] = []
    later_names: set[str] = set()
    later_starts: set[str] = set()
    later_sources: set[str] = set()
    for count, source in reversed(history):
        if any(marker in source for marker in KIT_MARKERS):
            continue
        names = _bound(source)
        start = _first_line(source)
        superseded = (start in later_starts) if names is None else (bool(names) and names <= later_names)
        superseded = superseded or source in later_sources
        later_names |= names or set()
        later_sources.add(source)
        later_starts.add(start)
        if not superseded:
            kept.append((count, source))
    cells = [("preamble", preamble)]
    for count, source in reversed(kept):
        names = _bound(source) or set()
        own = [name for name in answers if name in names]
        cells.append((f"your `{own[0]}` cell" if own else f"cell In [{count}]", source))
    return cells
