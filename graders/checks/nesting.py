"""How deeply a parsed cell nests, measured without recursion, and the refusal of a cell nested past the limit.

The checks walk a cell's syntax tree recursively (``ast.NodeVisitor``, ``ast.unparse``, ``copy.deepcopy``), a few
Python frames per level: a scratch cell ``junk = 0 + 0 + ... + 0`` of 600 terms would exhaust Python's recursion
limit in them and stop the grading of a whole class. So every tree the grader reads is measured here first, with
an explicit stack, and a cell that nests more than ``MAX_NESTING`` levels is refused with ``TooDeep``, whose
message tells the student what to change. Real code nests a few tens of levels at most; the checks' recursive
walks stay far inside Python's recursion limit at ``MAX_NESTING``.

A level is one syntax node inside another (a statement, an expression, an argument, a comprehension ...); the
markers ``ast.Load``, ``ast.Add`` and the like are not levels.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from graders.model.errors import VecgradeError

__all__ = ["MAX_NESTING", "Depth", "TooDeep", "depth", "refuse_deep"]

MAX_NESTING = 100
_MARKERS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


@dataclass(frozen=True)
class Depth:
    levels: int  # the deepest nesting of the tree, in levels (0 for an empty cell)
    line: int    # the line of the deepest node (0 when it has none)


def depth(tree: ast.AST) -> Depth:
    """The deepest nesting of ``tree`` below its root, found iteratively (any depth, no recursion)."""
    deepest = Depth(0, 0)
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    while stack:
        node, level, line = stack.pop()
        line = getattr(node, "lineno", line)
        if level > deepest.levels:
            deepest = Depth(level, line)
        stack.extend((child, level + 1, line) for child in ast.iter_child_nodes(node)
                     if not isinstance(child, _MARKERS))
    return deepest


class TooDeep(VecgradeError):
    """A cell (or module) of the submission nests past ``MAX_NESTING`` levels: vecgrade does not read it, and
    refuses the notebook with this message (worded for the student). ``levels`` is None when Python's own
    parser gave up on it."""

    def __init__(self, label: str, levels: int | None, line: int = 0):
        self.label, self.levels, self.line = label, levels, line
        where = f"{label}, line {line}," if line else label
        if levels is None:
            what = f"{where} nests expressions too deeply for Python to read"
        else:
            what = f"{where} nests expressions {levels} levels deep"
        super().__init__(f"{what}, more than the {MAX_NESTING} vecgrade reads; split the expression into "
                         "several statements")


def refuse_deep(label: str, tree: ast.AST) -> None:
    """Raise ``TooDeep`` when ``tree`` (the cell ``label``) nests past ``MAX_NESTING`` levels."""
    found = depth(tree)
    if found.levels > MAX_NESTING:
        raise TooDeep(label, found.levels, found.line)
