"""The program slice: the notebook's statements that one exercise's function reaches, and nothing else.

An exercise is judged, and run, on the code its function can reach: the module-level imports, defs,
classes and assignments it uses, transitively, plus the module-level statements that mutate one of
them. Scratch cells, magics, shell commands, prints, plots and other exercises' cells (even broken
ones) are left out, so they cost this exercise nothing and cannot touch the process that measures it.

Cells are parsed one by one. IPython lines (``%timeit``, ``!pip``, ``x = %time ...``, ``obj?``) are
replaced by ``pass`` at the same indentation, so every statement keeps its original line number.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Sequence

from graders.checks.finding import Finding
from graders.checks.scopes import Resolver, Scope, bind_block

# cell magics whose body is not Python: the whole cell is left out
FOREIGN_CELL_MAGICS = {"bash", "sh", "script", "html", "javascript", "js", "latex", "markdown", "svg",
                       "writefile", "file", "perl", "ruby", "python2", "sx", "system", "cython"}
_IPYTHON_LINE = re.compile(r"^(\s*)(?:[%!]|[\w.,\s\[\]()*]+=\s*[%!])|^(\s*)[\w.]+\?\??\s*$")
_TEXT_BINDING = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=(?!=)", re.M)


@dataclass
class Cell:
    label: str
    lines: list[str]               # the source as parsed, IPython lines replaced by `pass`
    tree: ast.Module | None
    error: Finding | None = None   # the syntax error, for a cell that does not parse
    text_names: set[str] = field(default_factory=set)  # names a broken cell seems to define


@dataclass(eq=False)
class Statement:
    """One module-level statement, with the names it binds and reads."""
    cell: Cell
    node: ast.stmt
    index: int
    binds: set[str]
    reads_now: set[str]      # read when the cell runs (module-level code, decorators, defaults, class bodies)
    reads_later: set[str]    # read when a function it defines is called
    imports_only: bool

    @property
    def first_line(self) -> int:
        decorators = getattr(self.node, "decorator_list", [])
        return min([self.node.lineno] + [d.lineno for d in decorators])

    @property
    def last_line(self) -> int:
        end = self.node.end_lineno
        assert end is not None, "ast.parse sets end_lineno on every statement"
        return end


def parse_cell(label: str, source: str) -> Cell:
    lines = source.split("\n")
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split()[0] if first[2:].split() else ""
        if magic in FOREIGN_CELL_MAGICS:
            return Cell(label, [], ast.Module(body=[], type_ignores=[]))
        lines = ["pass"] + lines[1:]  # %%time, %%timeit, %%capture: the body is Python
    try:
        return Cell(label, lines, ast.parse("\n".join(lines)))
    except SyntaxError:
        pass
    cleaned = [_neutral(line) for line in lines]
    try:
        return Cell(label, cleaned, ast.parse("\n".join(cleaned)))
    except SyntaxError as e:
        error = Finding(label, e.lineno or 0, "syntax error", f"{e.msg}; this cell does not run")
        names = {a or b for a, b in _TEXT_BINDING.findall("\n".join(cleaned))}
        return Cell(label, cleaned, None, error, names)


def _neutral(line: str) -> str:
    m = _IPYTHON_LINE.match(line)
    if not m:
        return line
    indent = m.group(1) if m.group(1) is not None else (m.group(2) or "")
    return indent + "pass"


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
    out: list[Statement] = []
    for cell in cells:
        if cell.tree is None:
            continue
        for node in cell.tree.body:
            scope = Scope("module", None)
            bind_block(scope, [node])
            now, later = _reads(node)
            imports_only = isinstance(node, (ast.Import, ast.ImportFrom))
            out.append(Statement(cell, node, len(out), set(scope.names), now, later, imports_only))
    return out


def _mutated_roots(stmt: ast.stmt) -> set[str]:
    """Names a module-level statement changes without rebinding them: ``W[0] = 1``, ``cfg.x = 2``,
    ``table.append(3)``, ``del W[0]`` (also inside module-level ``for``/``if``/``with`` blocks)."""
    roots: set[str] = set()

    def root(node):
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def walk(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            targets = [node.func]
        while targets:
            t = targets.pop()
            if isinstance(t, (ast.Tuple, ast.List)):
                targets += t.elts
            elif isinstance(t, ast.Starred):
                targets.append(t.value)
            elif isinstance(t, (ast.Attribute, ast.Subscript)) and root(t):
                roots.add(root(t))
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(stmt)
    return roots


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


def slice_for(stmts: list[Statement], function: str) -> tuple[list[Statement], set[str]]:
    """The statements ``function`` reaches, in notebook order, and the names it reads that nothing binds."""
    chosen: dict[int, Statement] = {}
    unbound: set[str] = set()
    work: list[tuple[str, int]] = [(function, len(stmts))]
    seen: set[tuple[str, int]] = set()
    while work:
        name, end = work.pop()
        if (name, end) in seen:
            continue
        seen.add((name, end))
        found = bindings_before(stmts, name, end)
        if not found:
            unbound.add(name)
        for s in found:
            if s.index in chosen:
                continue
            chosen[s.index] = s
            work += [(n, s.index) for n in s.reads_now] + [(n, len(stmts)) for n in s.reads_later]
            if not s.imports_only:  # later statements that change this value in place run before the call
                for later in stmts[s.index + 1:]:
                    if name in _mutated_roots(later.node) and not later.imports_only:
                        if later.index not in chosen:
                            chosen[later.index] = later
                            work += [(n, later.index) for n in later.reads_now]
                            work += [(n, len(stmts)) for n in later.reads_later]
    return [chosen[i] for i in sorted(chosen)], unbound


def render(chosen: list[Statement]) -> list[tuple[str, str]]:
    """(label, source) per cell, in notebook order; unselected lines are blank so line numbers hold."""
    by_cell: dict[int, tuple[Cell, set[int]]] = {}
    for s in chosen:
        cell, lines = by_cell.setdefault(id(s.cell), (s.cell, set()))
        lines.update(range(s.first_line, s.last_line + 1))
    out = []
    for cell, lines in by_cell.values():
        last = max(lines)
        text = [cell.lines[i - 1] if i in lines else "" for i in range(1, last + 1)]
        out.append((cell.label, "\n".join(text) + "\n"))
    return out
