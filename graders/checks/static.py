"""The static half of the vectorized check: read the submission's AST, run nothing.

``Submission(cells).program_for(name)`` is the only code of the notebook that runs, or is judged, for
the exercise ``name``: the statements its function reaches (graders.checks.reach). Everything that
costs the exercise "vectorized" is found in that code only (graders.checks.subset): Python-level
iteration, recursion, the exercise's forbidden calls, and any step outside the checked subset of
Python (APIs off the torch/einops/math allowlist, module-valued attributes, reflection, threads).
A function that is not a plain top-level ``def`` fails closed, with a finding that says what to write.

Every finding carries the cell, the line within the cell and a reason a student can act on.
"""
from __future__ import annotations

import ast
from typing import Sequence

from graders.checks import reach
from graders.checks.finding import Finding, sorted_unique, summarize
from graders.model.hints import LOOP_HINT

__all__ = ["Finding", "LOOP_HINT", "Submission", "parse_cells", "summarize"]

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def parse_cells(cells: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, ast.Module]], list[Finding]]:
    """Parse each (label, source) cell, IPython lines neutralized; broken cells become findings."""
    parsed: list[tuple[str, ast.Module]] = []
    problems: list[Finding] = []
    for label, source in cells:
        cell = reach.parse_cell(label, source)
        if cell.tree is None:
            assert cell.error is not None, "parse_cell gives every cell without a tree its syntax error"
            problems.append(cell.error)
        else:
            parsed.append((label, cell.tree))
    return parsed, problems


class Submission:
    """The student's code cells, as statements that can be sliced per exercise."""

    def __init__(self, cells: Sequence[tuple[str, str]]):
        self.cells = [reach.parse_cell(label, source) for label, source in cells]
        self.statements = reach.statements(self.cells)
        self._slices: dict[str, tuple[list[reach.Statement], set[str]]] = {}

    def _slice(self, function: str) -> tuple[list[reach.Statement], set[str]]:
        if function not in self._slices:
            self._slices[function] = reach.slice_for(self.statements, function)
        return self._slices[function]

    def program_for(self, function: str) -> list[tuple[str, str]]:
        """The minimal program that defines ``function``: the module-level imports, defs, classes and
        assignments (and module-level statements that mutate a reached name) that it reaches,
        transitively, in notebook order; each entry keeps its cell label and ORIGINAL line numbers
        (blank lines pad), so a traceback or finding points at the student's cell and line."""
        return reach.render(self._slice(function)[0])

    def statements_for(self, function: str) -> list[tuple[str, ast.stmt]]:
        """(cell label, statement) of each statement ``function`` reaches, in notebook order."""
        return [(s.cell.label, s.node) for s in self._slice(function)[0]]

    def problems_for(self, function: str) -> list[Finding]:
        """Why ``function`` cannot be judged as written: a syntax error in a cell it needs, or a
        binding that is not a plain top-level ``def`` (fail closed, with what to write instead)."""
        chosen, unbound = self._slice(function)
        findings = [c.error for c in self.cells
                    if c.error is not None and (function in c.text_names or c.text_names & unbound)]
        findings += self._definition_problems(function)
        return sorted_unique(findings)

    def _definition_problems(self, function: str) -> list[Finding]:
        write = f"write it as a plain `def {function}(...):` at the top level of its cell"
        bindings = [s for s in self.statements if function in s.binds]
        if not bindings:
            if any(function in c.text_names for c in self.cells):
                return []  # the syntax error says it
            return [Finding("notebook", 0, f"`{function}` is not defined", write)]
        last = bindings[-1]
        where = (last.cell.label, last.node.lineno)
        if isinstance(last.node, ast.AsyncFunctionDef):
            return [Finding(*where, f"`{function}` is an `async def`", write)]
        if not isinstance(last.node, ast.FunctionDef):
            if isinstance(last.node, (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Match)):
                block = type(last.node).__name__.lower()
                how = f"`{function}` is defined inside {'an' if block == 'if' else 'a'} `{block}` block"
            elif isinstance(last.node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                how = f"`{function}` is bound by an assignment, not a `def`"
            elif isinstance(last.node, (ast.Import, ast.ImportFrom)):
                how = f"`{function}` is imported, not written"
            else:
                how = f"`{function}` is not a plain `def`"
            return [Finding(*where, how, write)]
        others = [s for s in bindings[:-1] if not isinstance(s.node, ast.FunctionDef)]
        if others:
            o = others[-1]
            return [Finding(o.cell.label, o.node.lineno, f"`{function}` is defined twice in different ways",
                            f"keep only one plain `def {function}(...):`")]
        return []

    def iteration_findings(self, function: str, forbidden: Sequence[str] = (),
                           loop_hint: str = LOOP_HINT) -> list[Finding]:
        """Everything that costs this exercise "vectorized", in the code the function reaches only."""
        from graders.checks.subset import check_program  # noqa: PLC0415  (imports torch: only when checking)
        chosen, _ = self._slice(function)
        findings = self.problems_for(function)
        findings += check_program([s.node for s in chosen], [s.cell.label for s in chosen], forbidden, loop_hint)
        return sorted_unique(findings)

