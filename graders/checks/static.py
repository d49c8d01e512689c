"""The static half of the vectorized check: read the submission's AST, run nothing.

``Submission(cells).program_for(name)`` is the only code of the notebook that runs, or is judged, for
the exercise ``name``: the statements its function reaches (graders.checks.reach), rendered from their
own source. Everything that costs the exercise "vectorized" is found in that code only
(graders.checks.subset): Python-level iteration, recursion, the exercise's forbidden calls, and any step
outside the checked subset of Python (APIs off the torch/einops/math allowlist, module-valued attributes,
reflection, threads, strings run as code). A finding outside the subset also costs "fast"
(``outside_findings``). A function that is not a plain top-level ``def`` fails closed, with a finding
that says what to write.

The submission's own modules (``helpers.py`` beside the notebook, given as ``modules``) are loaded in the
grading child before the cells (``modules_for``), as the kernel imported them, so "correct" and "fast" are
judged on the code the kernel ran; importing one costs "vectorized", and a module's code (all of it: an
import runs it whole) is checked with the same rules as a cell, in its own namespace.

Every finding carries the cell (or module file), the line within it and a reason a student can act on.
"""
from __future__ import annotations

import ast
from typing import Mapping, Sequence

from graders.checks import reach
from graders.checks.finding import COSTS_FAST, DEFINITION, OUTSIDE, Finding, sorted_unique, summarize
from graders.checks.reader import module_label
from graders.model.hints import LOOP_HINT

__all__ = ["Finding", "LOOP_HINT", "Submission", "module_label", "parse_cells", "summarize"]

_SEPARATE = "put each statement of this cell on a line of its own"


def parse_cells(cells: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, ast.Module]], list[Finding]]:
    """Parse each (label, source) cell as the kernel runs it (graders.checks.reader); broken cells become findings.
    Raises ``graders.checks.nesting.TooDeep`` for a cell nested past the limit."""
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
    """The student's code cells, as statements that can be sliced per exercise, and their own modules
    (module name -> source)."""

    def __init__(self, cells: Sequence[tuple[str, str]], modules: Mapping[str, str] | None = None):
        """Raises ``graders.checks.nesting.TooDeep`` when a cell or module nests past the limit (read nowhere)."""
        self.cells = [reach.parse_cell(label, source) for label, source in cells]
        self.modules = dict(modules or {})
        self._modules = {name: reach.parse_cell(module_label(name), source, python_only=True)
                         for name, source in self.modules.items()}
        self.statements = reach.statements(self.cells)
        self.sharing = reach.sharing(self.statements)
        self._slices: dict[str, tuple[list[reach.Statement], set[str]]] = {}
        self._programs: dict[str, tuple[list[tuple[str, str]], list[Finding]]] = {}
        self._findings: dict[tuple, list[Finding]] = {}

    def _slice(self, function: str) -> tuple[list[reach.Statement], set[str]]:
        if function not in self._slices:
            self._slices[function] = reach.slice_for(self.statements, function, self.sharing)
        return self._slices[function]

    def _program(self, function: str) -> tuple[list[tuple[str, str]], list[Finding]]:
        """The rendered program, and a finding per cell whose statements could not be rendered apart
        (that cell is left out: fail closed)."""
        if function not in self._programs:
            chosen, _ = self._slice(function)
            program: list[tuple[str, str]] = []
            problems: list[Finding] = []
            for cell in {id(s.cell): s.cell for s in chosen}.values():
                mine = [s for s in chosen if s.cell is cell]
                try:
                    program += reach.render(mine)
                except reach.RenderMismatch:
                    problems.append(Finding(cell.label, mine[0].first_line, "code that cannot be separated",
                                            _SEPARATE, OUTSIDE))
            self._programs[function] = (program, problems)
        return self._programs[function]

    def program_for(self, function: str) -> list[tuple[str, str]]:
        """The minimal program that defines ``function``: the module-level imports, defs, classes and
        assignments (and module-level statements that mutate a reached name) that it reaches,
        transitively, in notebook order; each entry keeps its cell label and ORIGINAL line numbers
        (blank lines pad), so a traceback or finding points at the student's cell and line. Only the
        chosen statements' own source is in it, never the rest of their lines."""
        return self._program(function)[0]

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
        findings += self._program(function)[1]
        return sorted_unique(findings)

    def syntax_errors_for(self, function: str) -> list[str]:
        """Each cell that does not run and may be why ``function`` is missing, worded for the student
        (``cell 7 has a syntax error at line 3: invalid syntax``): the broken cells that seem to define it or a
        name it needs; every broken cell when nothing else defines it."""
        _, unbound = self._slice(function)
        broken = [c for c in self.cells if c.error is not None]
        mine = [c for c in broken if function in c.text_names or c.text_names & unbound]
        if not mine and not any(function in s.binds for s in self.statements):
            mine = broken
        return [c.error_text for c in mine]

    def _definition_problems(self, function: str) -> list[Finding]:
        write = f"write it as a plain `def {function}(...):` at the top level of its cell"
        bindings = [s for s in self.statements if function in s.binds]
        if not bindings:
            if any(function in c.text_names for c in self.cells):
                return []  # the syntax error says it
            return [Finding("notebook", 0, f"`{function}` is not defined", write, DEFINITION)]
        last = bindings[-1]
        where = (last.cell.label, last.node.lineno)
        if isinstance(last.node, ast.AsyncFunctionDef):
            return [Finding(*where, f"`{function}` is an `async def`", write, DEFINITION)]
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
            return [Finding(*where, how, write, DEFINITION)]
        others = [s for s in bindings[:-1] if not isinstance(s.node, ast.FunctionDef)]
        if others:
            o = others[-1]
            return [Finding(o.cell.label, o.node.lineno, f"`{function}` is defined twice in different ways",
                            f"keep only one plain `def {function}(...):`", DEFINITION)]
        return []

    def iteration_findings(self, function: str, forbidden: Sequence[str] = (),
                           loop_hint: str = LOOP_HINT, shape_params: Sequence[str] = ()) -> list[Finding]:
        """Everything that costs this exercise "vectorized", in the code the function reaches only (and in
        the submission's own modules that code imports); ``shape_params``: ``Exercise.shape_params``."""
        key = (function, tuple(forbidden), loop_hint, tuple(shape_params))
        if key not in self._findings:
            from graders.checks.subset import check_program  # noqa: PLC0415  (imports torch: only when checking)
            chosen, _ = self._slice(function)
            own = frozenset(self.modules)
            nodes = [s.node for s in chosen]
            findings = self.problems_for(function)
            findings += check_program(nodes, [s.cell.label for s in chosen], forbidden, loop_hint, own, function,
                                      shape_params)
            for name in self._imported_modules(nodes):
                findings += self._module_findings(name, forbidden, loop_hint, own)
            self._findings[key] = sorted_unique(findings)
        return list(self._findings[key])

    def outside_findings(self, function: str) -> list[Finding]:
        """The findings of ``function``'s program that also cost "fast": those that leave the checked subset (a
        process that ran code the checker could not check cannot be trusted for its timing) and state kept
        between calls (a memo's timed calls measure a lookup, not the compute)."""
        return [f for f in self.iteration_findings(function) if f.kind in COSTS_FAST]

    def modules_for(self, function: str) -> list[tuple[str, str, str]]:
        """(name, label, source) of each module of the submission's own that ``function``'s program imports,
        in the order the grading child loads them (a module after the ones it imports). A module is checked
        whole, so it is sent whole."""
        chosen, _ = self._slice(function)
        found = self._imported_modules([s.node for s in chosen])
        return [(name, module_label(name), self.modules[name]) for name in reversed(found)]

    def _imported_modules(self, nodes: list[ast.stmt]) -> list[str]:
        """The submission's own modules that ``nodes`` import, and those they import in turn."""
        found: list[str] = []
        pending = list(nodes)
        while pending:
            for sub in ast.walk(pending.pop()):
                names = [a.name for a in sub.names] if isinstance(sub, ast.Import) else \
                    [sub.module] if isinstance(sub, ast.ImportFrom) and sub.module and not sub.level else []
                for name in (n.split(".")[0] for n in names):
                    if name in self.modules and name not in found:
                        found.append(name)
                        tree = self._module_tree(name)
                        pending += tree.body if tree is not None else []
        return found

    def _module_tree(self, name: str) -> ast.Module | None:
        return self._modules[name].tree

    def _module_findings(self, name: str, forbidden, loop_hint: str, own: frozenset[str]) -> list[Finding]:
        """A module runs whole when it is imported: every statement of it is checked, in its own namespace."""
        from graders.checks.subset import check_program  # noqa: PLC0415  (imports torch: only when checking)
        label = module_label(name)
        cell = self._modules[name]
        if cell.tree is None:
            assert cell.error is not None, "parse_cell gives every cell without a tree its syntax error"
            return [cell.error]
        body = cell.tree.body
        return check_program(body, [label] * len(body), forbidden, loop_hint, own)
