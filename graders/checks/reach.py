"""The program slice: the notebook's statements that one exercise's function reaches, and nothing else.

An exercise is judged, and run, on the code its function can reach: the module-level imports, defs,
classes and assignments it uses, transitively, plus the module-level statements that change one of
them in place (graders.checks.mutation). Scratch cells, magics, shell commands, prints, plots and other
exercises' cells (even broken ones) are left out, so they cost this exercise nothing and cannot touch
the process that measures it.

Cells are read as the kernel runs them (graders.checks.reader, IPython's own input transformers): magic, shell
and help lines (``%timeit``, ``!pip``, ``x = %time ...``, ``obj?``, ``?obj``) are ``pass`` at the same
indentation, a cell magic that runs its body elsewhere (``%%python3``, ``%%bash``, any unknown one) holds no
code, and every statement keeps its original line number. The
slice is rendered from each chosen statement's own source, never from whole lines: a second statement on
the same line (``X = 1; <anything>``) is not part of it, and the rendered text is parsed again and
compared with the chosen statements, so the process runs exactly the code the checker checked.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Sequence

from graders.checks import reader
from graders.checks.finding import DEFINITION, Finding
from graders.checks.mutation import Sharing, aliases_of, changing_functions, class_methods, constants, mutated_roots
from graders.checks.scopes import Resolver, Scope, bind_block
from graders.model.errors import VecgradeError

_TEXT_BINDING = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=(?!=)", re.M)


@dataclass(eq=False)
class Cell:
    label: str
    lines: list[str]               # the source as the kernel runs it, one entry per line (graders.checks.reader)
    tree: ast.Module | None
    error: Finding | None = None   # the syntax error, for a cell that does not parse
    text_names: set[str] = field(default_factory=set)  # names a broken cell seems to define
    error_text: str = ""           # ``cell 7 has a syntax error at line 3: ...``, for a cell that does not parse
    binds_nothing: bool = False    # its code runs inside a function (``%%timeit``): it binds no module-level name


@dataclass(eq=False)
class Statement:
    """One module-level statement, with the names it binds, reads and changes in place."""
    cell: Cell
    node: ast.stmt
    index: int
    binds: frozenset[str]
    reads_now: frozenset[str]      # read when the cell runs (module-level code, decorators, defaults, class bodies)
    reads_later: frozenset[str]    # read when a function it defines is called
    imports_only: bool
    mutates: frozenset[str] = frozenset()          # names it changes without rebinding them (graders.checks.mutation)
    aliases: tuple[tuple[str, frozenset[str]], ...] = ()  # (alias, names it may share its value with)

    @property
    def first_line(self) -> int:
        decorators = getattr(self.node, "decorator_list", [])
        return min([self.node.lineno] + [d.lineno for d in decorators])

    @property
    def last_line(self) -> int:
        end = self.node.end_lineno
        assert end is not None, "ast.parse sets end_lineno on every statement"
        return end


def parse_cell(label: str, source: str, python_only: bool = False) -> Cell:
    """A notebook cell as the kernel runs it (graders.checks.reader: magic, shell and help lines are ``pass``, a
    foreign cell magic's body is no code; ``python_only``: a ``.py`` module, read as Python imports it). Raises
    ``graders.checks.nesting.TooDeep`` for a cell nested past the limit."""
    parsed = reader.parse_cell(label, source, python_only)
    lines = list(parsed.code.lines)
    if parsed.tree is not None:
        return Cell(label, lines, parsed.tree, binds_nothing=parsed.code.binds_nothing)
    assert parsed.error is not None, "the reader gives every cell without a tree its syntax error"
    error = Finding(label, parsed.error.line, "syntax error", f"{parsed.error.message}; this cell does not run",
                    DEFINITION)
    names = {a or b for a, b in _TEXT_BINDING.findall(source if parsed.code.rejected else parsed.code.text)}
    return Cell(label, lines, None, error, names, parsed.describe_error())


def _reads(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """Module-level names ``stmt`` reads, now and later (inside function bodies)."""
    module = Scope("module", None)
    resolver = Resolver(module)  # an empty module scope: every global read resolves to None
    resolver.visit(stmt)
    now: set[str] = set()
    later: set[str] = set()
    for node, target, where in resolver.loads.values():
        if target is None:
            (later if where.in_function() else now).add(node.id)
    return now, later


def statements(cells: Sequence[Cell]) -> list[Statement]:
    """Every module-level statement of the parsed cells, in notebook order. Nothing here changes a tree."""
    trees = [c.tree for c in cells if c.tree is not None]
    methods, changing = class_methods(trees), changing_functions(trees)
    out: list[Statement] = []
    for cell in cells:
        if cell.tree is None:
            continue
        for node in cell.tree.body:
            scope = Scope("module", None)
            bind_block(scope, [node])
            now, later = _reads(node)
            imports_only = isinstance(node, (ast.Import, ast.ImportFrom))
            binds = frozenset() if cell.binds_nothing else frozenset(scope.names)
            out.append(Statement(cell, node, len(out), binds, frozenset(now), frozenset(later),
                                 imports_only, mutated_roots(node, methods, changing), aliases_of(node)))
    return out


def _unconditional(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign,
                             ast.Import, ast.ImportFrom))


def bindings_before(stmts: list[Statement], name: str, end: int) -> list[Statement]:
    """The statements before ``end`` whose binding of ``name`` may be the one in force at ``end``:
    the last unconditional one and every conditional one after it."""
    found = []
    for s in reversed(stmts[:end]):
        if name in s.binds:
            found.append(s)
            if _unconditional(s.node) and not isinstance(s.node, ast.AugAssign):
                break
    return found[::-1]


def sharing(stmts: list[Statement]) -> Sharing:
    """Which names may share a value, over the whole notebook (graders.checks.mutation)."""
    return Sharing([pair for s in stmts for pair in s.aliases], constants([s.node for s in stmts]))


def slice_for(stmts: list[Statement], function: str, shared: Sharing | None = None) -> tuple[list[Statement], set[str]]:
    """The statements ``function`` reaches, in notebook order, and the names it reads that nothing binds.

    A closure, so the order in which names are met changes nothing: every reached binding of every name
    brings in each later statement that changes, in place, a value that name may share (``shared``)."""
    shared = shared if shared is not None else sharing(stmts)
    chosen: dict[int, Statement] = {}
    unbound: set[str] = set()
    work: list[tuple[str, int]] = [(function, len(stmts))]
    seen: set[tuple[str, int]] = set()
    followed: set[tuple[str, int]] = set()  # (name, binding) whose later in-place changes are in

    def choose(s: Statement) -> None:
        if s.index not in chosen:
            chosen[s.index] = s
            work.extend([(n, s.index) for n in sorted(s.reads_now)] + [(n, len(stmts)) for n in sorted(s.reads_later)])

    while work:
        name, end = work.pop()
        if (name, end) in seen:
            continue
        seen.add((name, end))
        found = bindings_before(stmts, name, end)
        if not found:
            unbound.add(name)
        for s in found:
            choose(s)
            if s.imports_only or (name, s.index) in followed:
                continue
            followed.add((name, s.index))
            for later in stmts[s.index + 1:]:  # they run before the function is called
                if not later.imports_only and any(shared.same_value(name, m) for m in later.mutates):
                    choose(later)
    return [chosen[i] for i in sorted(chosen)], unbound


class RenderMismatch(VecgradeError):
    """The rendered text does not parse back to the chosen statements (the slice fails closed)."""


def _future_imports(cell: Cell) -> list[ast.stmt]:
    assert cell.tree is not None, "only parsed cells hold chosen statements"
    return [n for n in cell.tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]


def _segments(node: ast.stmt) -> list[tuple[int, int, int | None]]:
    """(line, first byte, end byte or None) of the statement's own source, line by line (1-based lines,
    UTF-8 byte columns as the parser gives them). A compound statement starts its logical line."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    last = node.end_lineno
    assert last is not None and node.end_col_offset is not None, "ast.parse sets end positions"
    start = node.col_offset if first == node.lineno else 0
    if first == last:
        return [(first, start, node.end_col_offset)]
    return [(first, start, None)] + [(i, 0, None) for i in range(first + 1, last)] + [(last, 0, node.end_col_offset)]


def render(chosen: list[Statement]) -> list[tuple[str, str]]:
    """(label, source) per cell, in notebook order: each chosen statement's own source at its original line
    (statements that shared a line are joined by ``;``, everything else is blank), plus the cell's
    ``from __future__`` imports. Raises RenderMismatch unless the text parses to exactly those statements."""
    by_cell: dict[int, tuple[Cell, list[ast.stmt]]] = {}
    for s in chosen:
        by_cell.setdefault(id(s.cell), (s.cell, []))[1].append(s.node)
    out = []
    for cell, nodes in by_cell.values():
        futures = [n for n in _future_imports(cell) if n not in nodes]
        nodes = sorted(futures + nodes, key=lambda n: (n.lineno, n.col_offset))
        pieces: dict[int, list[str]] = {}
        for node in nodes:
            for line, start, end in _segments(node):
                raw = cell.lines[line - 1].encode()
                pieces.setdefault(line, []).append(raw[start:end].decode())
        last = max(pieces)
        text = "\n".join("; ".join(pieces.get(i, [])) for i in range(1, last + 1)) + "\n"
        expected = ast.dump(ast.Module(body=nodes, type_ignores=[]))
        try:
            same = ast.dump(ast.parse(text)) == expected
        except SyntaxError:
            same = False
        if not same:
            raise RenderMismatch(cell.label)
        out.append((cell.label, text))
    return out
