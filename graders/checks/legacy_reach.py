"""The notebook-wide reach rules of the old design, kept only until the worker runs the sliced program.

`Submission.reach_findings()` delegates here; new code uses graders.checks.static.

Two rule sets, applied to different code:

- *iteration rules* (loops, comprehensions, recursion, ``map``, ``.tolist()``,
  the exercise's forbidden calls ...) apply to the exercise's function and to
  every function, lambda and class it can reach by name;
- *reach rules* (imports outside torch/einops/math, reflection such as
  ``getattr``/``exec``, dunder and private attributes, thread settings) apply
  to all code that can run: module-level statements and everything reachable
  from them, plus the exercise's function. These are the tools a submission
  would need to reach into the process that counts its work, so the runtime
  evidence is only trusted when none of them appears.

Every finding carries the cell, the line and a reason a student can act on.
"""
from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from typing import Iterable, Sequence

from IPython.core.inputtransformer2 import TransformerManager

ALLOWED_IMPORTS = ("torch", "einops", "math", "typing", "__future__", "numbers")

LOOP_HINT = "replace it with operations on whole tensors (broadcasting, indexing, reductions)"

ITERATING_BUILTINS = {
    "map": "`map` calls Python code once per element",
    "filter": "`filter` calls Python code once per element",
    "reduce": "`reduce` calls Python code once per element",
    "zip": "`zip` walks the elements in Python",
    "enumerate": "`enumerate` walks the elements in Python",
    "sorted": "`sorted` sorts in Python; use `torch.sort`",
    "reversed": "`reversed` walks the elements in Python; use `torch.flip`",
    "sum": "the built-in `sum` adds in Python; use `torch.sum`",
    "iter": "`iter` walks the elements in Python",
    "next": "`next` walks the elements in Python",
    "itertools": "`itertools` iterates in Python",
}
ELEMENT_METHODS = {
    "tolist": "`.tolist()` leaves tensor land to work on elements in Python",
    "item": "`.item()` leaves tensor land to work on elements in Python",
    "numpy": "`.numpy()` leaves tensor land",
    "apply_": "`.apply_()` calls Python code once per element",
    "map_": "`.map_()` calls Python code once per element",
    "map2_": "`.map2_()` calls Python code once per element",
    "__iter__": "`__iter__` walks the elements in Python",
    "__next__": "`__next__` walks the elements in Python",
}
REFLECTION = {
    "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr",
    "globals", "locals", "vars", "open", "breakpoint", "input", "exit", "quit",
    "memoryview", "__builtins__", "get_ipython",
}
# torch attributes that reach the dispatcher, the JIT, threads or processes
TORCH_REACH = {
    "library", "ops", "overrides", "jit", "compile", "multiprocessing", "utils",
    "set_num_threads", "set_num_interop_threads", "backends", "fx", "_C",
    "_dynamo",
}
DUNDER_OK = {"__init__", "__call__", "__name__"}


from graders.checks.finding import Finding  # noqa: E402


@dataclass
class _Unit:
    """A piece of code that can be reached: a def, a class, or a module-level value."""
    node: ast.AST
    cell: str


def parse_cells(cells: Sequence[tuple[str, str]]) -> tuple[list[tuple[str, ast.Module]], list[Finding]]:
    """Parse each (label, source) cell; IPython magics become plain calls first."""
    tm = TransformerManager()
    parsed, problems = [], []
    for label, source in cells:
        try:
            tree = ast.parse(tm.transform_cell(source))
        except SyntaxError as e:
            problems.append(Finding(label, e.lineno or 0, "syntax error", str(e.msg)))
            continue
        parsed.append((label, tree))
    return parsed, problems


def _bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


class LegacySubmission:
    """The student's code cells, indexed by the names they bind at module level."""

    def __init__(self, cells: Sequence[tuple[str, str]]):
        self.modules, self.problems = parse_cells(cells)
        self.symbols: dict[str, list[_Unit]] = {}
        self.methods: dict[str, list[_Unit]] = {}
        self.roots: list[_Unit] = []
        # names a submission imported from torch/einops (`from einops import reduce`) are tensor ops
        # local name -> imported name, for `from m import x as y` (so a renamed forbidden call is still found)
        self.imported = {alias.asname or alias.name: alias.name for _, tree in self.modules
                         for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        self.library_names = {alias.asname or alias.name for _, tree in self.modules for node in ast.walk(tree)
                              if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0]
                              in ("torch", "einops") for alias in node.names}
        for label, tree in self.modules:
            for stmt in tree.body:
                self._index(stmt, label)

    def _index(self, stmt: ast.stmt, cell: str) -> None:
        names = _bound_names(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.symbols.setdefault(stmt.name, []).append(_Unit(stmt, cell))
            # decorators and defaults run when the cell runs
            self.roots += [_Unit(d, cell) for d in stmt.decorator_list]
            self.roots += [_Unit(d, cell) for d in stmt.args.defaults + stmt.args.kw_defaults if d]
        elif isinstance(stmt, ast.ClassDef):
            self.symbols.setdefault(stmt.name, []).append(_Unit(stmt, cell))
            self.roots += [_Unit(d, cell) for d in stmt.decorator_list + stmt.bases]
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.methods.setdefault(item.name, []).append(_Unit(item, cell))
                else:
                    self.roots.append(_Unit(item, cell))
        else:
            for name in names:
                value = getattr(stmt, "value", None)
                if value is not None:
                    self.symbols.setdefault(name, []).append(_Unit(value, cell))
            self.roots.append(_Unit(stmt, cell))

    def defines(self, name: str) -> bool:
        return any(isinstance(u.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                   or isinstance(u.node, ast.ClassDef) for u in self.symbols.get(name, ()))

    # -- reachability -------------------------------------------------------------------------
    def _referenced(self, node: ast.AST) -> Iterable[_Unit]:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in self.symbols:
                yield from self.symbols[sub.id]
            elif isinstance(sub, ast.Attribute) and sub.attr in self.methods:
                yield from self.methods[sub.attr]
            if isinstance(sub, ast.ClassDef):
                for item in sub.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        yield _Unit(item, "")

    def reachable(self, start: Iterable[_Unit]) -> list[_Unit]:
        seen: dict[int, _Unit] = {}
        work = list(start)
        while work:
            unit = work.pop()
            if id(unit.node) in seen:
                continue
            seen[id(unit.node)] = unit
            for ref in self._referenced(unit.node):
                work.append(_Unit(ref.node, ref.cell or unit.cell))
        return list(seen.values())

    # -- the two checks --------------------------------------------------------------------------
    def iteration_findings(self, function: str, forbidden: Sequence[str] = (),
                           loop_hint: str = LOOP_HINT) -> list[Finding]:
        """Python-level iteration, recursion and forbidden calls in code reachable from ``function``."""
        units = self.reachable(self.symbols.get(function, []))
        findings = []
        for unit in units:
            findings += _iteration_in(unit, forbidden, loop_hint, self.library_names, self.imported)
            findings += _reach_in(unit)
        findings += self._recursion(units)
        return _sorted_unique(findings)

    def reach_findings(self) -> list[Finding]:
        """Reflection and imports in code that runs when the notebook's cells run."""
        findings = list(self.problems)
        for unit in self.reachable(self.roots):
            findings += _reach_in(unit)
        return _sorted_unique(findings)

    def _recursion(self, units: list[_Unit]) -> list[Finding]:
        funcs = {u.node.name: u for u in units if isinstance(u.node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        calls = {name: {c.func.id for c in ast.walk(u.node) if isinstance(c, ast.Call)
                        and isinstance(c.func, ast.Name) and c.func.id in funcs}
                 for name, u in funcs.items()}
        findings = []
        for name, u in funcs.items():
            # does `name` reach itself through the call graph?
            stack, seen = list(calls[name]), set()
            while stack:
                callee = stack.pop()
                if callee == name:
                    findings.append(Finding(u.cell, u.node.lineno, f"recursion in `{name}`",
                                            "a recursive call repeats Python work per element"))
                    break
                if callee not in seen:
                    seen.add(callee)
                    stack += calls.get(callee, ())
        return findings


def summarize(findings: Sequence[Finding], limit: int = 3) -> str:
    """Findings grouped by cell and kind: 'cell 3, lines 4, 5: `for` loop; <why>'."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for f in findings:
        groups.setdefault((f.cell, f.what, f.why), []).append(f.line)
    parts = []
    for (cell, what, why), lines in groups.items():
        where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
        parts.append(f"{cell}, {where}: {what}; {why}")
    more = len(parts) - limit
    return "; ".join(parts[:limit]) + (f" (and {more} more)" if more > 0 else "")


def _sorted_unique(findings: list[Finding]) -> list[Finding]:
    return sorted(set(findings), key=lambda f: (f.cell, f.line, f.what))


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


_LOOPS = {
    ast.For: "`for` loop", ast.AsyncFor: "`async for` loop", ast.While: "`while` loop",
    ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
}


def _iteration_in(unit: _Unit, forbidden: Sequence[str], loop_hint: str,
                  library_names: set[str] = frozenset(), imported: dict[str, str] | None = None) -> list[Finding]:
    out = []
    shadowed = _parameter_uses(unit.node)
    for node in ast.walk(unit.node):
        line = getattr(node, "lineno", 0)
        kind = _LOOPS.get(type(node))
        if kind:
            out.append(Finding(unit.cell, line, kind, loop_hint))
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            out.append(Finding(unit.cell, line, "`yield`", "a generator produces elements one at a time in Python"))
        elif (isinstance(node, ast.Name) and node.id in ITERATING_BUILTINS and node.id not in library_names
              and id(node) not in shadowed):
            out.append(Finding(unit.cell, line, f"`{node.id}`", ITERATING_BUILTINS[node.id]))
        elif isinstance(node, ast.Attribute) and node.attr in ELEMENT_METHODS:
            out.append(Finding(unit.cell, line, f"`.{node.attr}`", ELEMENT_METHODS[node.attr]))
        elif isinstance(node, ast.Attribute) and node.attr in ("reduce",) and _root_name(node) == "functools":
            out.append(Finding(unit.cell, line, "`functools.reduce`", ITERATING_BUILTINS["reduce"]))
        if isinstance(node, ast.Name):
            name = (imported or {}).get(node.id, node.id)  # a renamed import keeps its real name
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.alias):
            name = node.name.split(".")[-1]
        else:
            continue
        if _matches(name, forbidden):
            out.append(Finding(unit.cell, line, f"`{name}`", "it is forbidden in this exercise"))
    return out


def _parameter_uses(tree: ast.AST) -> set[int]:
    """Names in a function's body that refer to one of its parameters (`reduce` in
    `def f(x, reduce): ... reduce ...` is an argument, not the builtin)."""
    uses: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = fn.args
            params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p}
            body = fn.body if isinstance(fn.body, list) else [fn.body]
            uses |= {id(n) for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in params}
    return uses


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _reach_in(unit: _Unit) -> list[Finding]:
    out = []
    for node in ast.walk(unit.node):
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for mod in mods:
                top, *rest = mod.split(".")
                if top not in ALLOWED_IMPORTS or any(p.startswith("_") or p in TORCH_REACH for p in rest):
                    out.append(Finding(unit.cell, line, f"import of `{mod}`",
                                       "submissions may import only torch, einops and math"))
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in TORCH_REACH or alias.name.startswith("_") or alias.name == "*":
                        out.append(Finding(unit.cell, line, f"import of `{alias.name}`",
                                           "it reaches into the process that grades your code"))
        elif isinstance(node, ast.Name) and (node.id in REFLECTION or (node.id.startswith("__") and node.id != "__name__")):
            out.append(Finding(unit.cell, line, f"`{node.id}`", "reflection is not allowed in a submission"))
        elif isinstance(node, ast.Attribute):
            attr = node.attr
            is_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if attr.startswith("__") and attr.endswith("__") and attr not in DUNDER_OK:
                out.append(Finding(unit.cell, line, f"`.{attr}`", "reflection is not allowed in a submission"))
            elif attr.startswith("_") and not is_self:
                out.append(Finding(unit.cell, line, f"`.{attr}`", "private attributes are not allowed in a submission"))
            elif attr in TORCH_REACH and not is_self:
                out.append(Finding(unit.cell, line, f"`.{attr}`",
                                   "it reaches the dispatcher, the JIT or the thread pool, which grading relies on"))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.append(Finding(unit.cell, line, f"`{type(node).__name__.lower()}`",
                               "state kept across calls is not allowed in a submission"))
    return out
