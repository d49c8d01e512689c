"""The checked subset of Python that an exercise's reachable code must stay in.

Applied to the program slice only (graders.checks.reach), with every scope walked: module-level
statements, defs and helpers inside any block, nested defs, lambdas, walrus targets, class bodies,
decorators and default values. Three kinds of finding:

- *iteration*: loops, comprehensions, generators, recursion through any call path, the iterating
  builtins (``map``, ``sum``, ``sorted``, ``min``/``max`` with ``key=`` ...), ``.tolist()``/``.item()``,
  classes Python can walk element by element (``__getitem__``/``__iter__``/``__len__``/``__next__``);
- *forbidden*: the exercise's forbidden library functions, whatever they are called locally;
- *outside the subset*: what a submission would need to reach into the process that measures it:
  attribute chains off torch/einops/math/typing are resolved in the real modules and a module-valued
  step outside the allowlist (``torch.sys``, ``typing.functools``) is a finding; so are reflection,
  private and dunder attributes, imports of other modules, and torch's thread, JIT and dispatcher APIs.

Names resolve like Python does (graders.checks.scopes): a student's own ``softmax`` or a parameter
called ``sum`` is not the library function or the builtin.
"""
from __future__ import annotations

import ast
import builtins
import fnmatch
import functools
import importlib
import itertools
import types
from typing import Sequence

from graders.checks.finding import Finding
from graders.checks.recursion import recursive_functions
from graders.checks.scopes import resolve

LIBRARY_ROOTS = ("torch", "einops", "math", "typing")
ALLOWED_IMPORT_ROOTS = LIBRARY_ROOTS + ("__future__",)
ALLOWED_MODULES = {
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.special", "torch.fft",
    "torch.types", "math", "typing", "__future__", "einops",
}
ALLOWED_MODULE_PREFIXES = ("einops.",)  # einops.layers.torch, einops.einops: pure tensor-shape code
SUBSET = "torch, torch.nn, torch.nn.functional, torch.linalg, torch.special, torch.fft, einops, math and typing"

# torch names that reach the dispatcher, the JIT, threads or processes
TORCH_REACH = {
    "library", "ops", "overrides", "jit", "compile", "multiprocessing", "utils", "set_num_threads",
    "set_num_interop_threads", "backends", "fx", "_C", "_dynamo", "compiler", "export", "func", "hub",
    "profiler", "autograd", "package", "set_default_dtype", "set_default_device", "manual_seed",
    "set_rng_state", "use_deterministic_algorithms", "Thread", "Process",
}
REFLECTION = {
    "exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "hasattr", "globals", "locals",
    "vars", "open", "breakpoint", "input", "exit", "quit", "memoryview", "help", "dir", "get_ipython",
    "__build_class__",
}
DUNDER_OK = {"__init__", "__call__", "__name__"}
# on an object whose origin is unknown (a call's result, a container item) these names lead out of the
# subset: standard modules that torch's own modules hold as attributes, and frame/code introspection
ESCAPE_NAMES = {
    "subprocess", "shutil", "socket", "ctypes", "pickle", "marshal", "importlib", "inspect", "traceback", "gc",
    "weakref", "signal", "tempfile", "pathlib", "linecache", "dis", "concurrent", "queue", "asyncio", "mmap",
    "resource", "posix", "threading", "multiprocessing", "builtins", "sys", "os", "atexit", "pkgutil", "runpy",
    "site", "contextvars", "copyreg", "functools", "itertools", "operator", "glob", "platform", "unittest",
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame", "ag_frame",
    "tb_frame", "tb_next", "co_code", "co_consts",
}
ITERATING = {
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
    "all": "the built-in `all` walks the elements in Python; use `torch.all`",
    "any": "the built-in `any` walks the elements in Python; use `torch.any`",
}
# the objects behind those names, however they are reached (`torch.builtins.map`, `typing.functools.reduce`)
ITERATING_OBJECTS = {id(getattr(builtins, n)): n for n in ITERATING if hasattr(builtins, n)}
ITERATING_OBJECTS[id(functools.reduce)] = "reduce"
ITERATING_OBJECTS.update({id(getattr(itertools, n)): f"itertools.{n}" for n in dir(itertools) if not n.startswith("_")})
ELEMENT_METHODS = {
    "tolist": "`.tolist()` leaves tensor land to work on elements in Python",
    "item": "`.item()` leaves tensor land to work on elements in Python",
    "numpy": "`.numpy()` leaves tensor land",
    "apply_": "`.apply_()` calls Python code once per element",
    "map_": "`.map_()` calls Python code once per element",
    "map2_": "`.map2_()` calls Python code once per element",
}
ITERABLE_DUNDERS = ("__getitem__", "__iter__", "__len__", "__next__")
SHAPE_LIKE = {"shape", "size", "stride", "dim", "ndim"}
_LOOPS = {
    ast.For: "`for` loop", ast.AsyncFor: "`async for` loop", ast.While: "`while` loop",
    ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
}
_ITER_WHY = "it iterates in Python"
_OUTSIDE = f"only {SUBSET} may be used in the code an exercise reaches"


def _allowed_module(name: str) -> bool:
    return name in ALLOWED_MODULES or name.startswith(ALLOWED_MODULE_PREFIXES)


@functools.lru_cache(maxsize=None)
def _library_object(qual: str):
    """The real object ``qual`` names (``torch.nn.functional.softmax``), or a sentinel when unknown."""
    root, *rest = qual.split(".")
    if root not in LIBRARY_ROOTS:
        return _UNKNOWN
    try:
        obj = importlib.import_module(root)
        for i, part in enumerate(rest):
            if not hasattr(obj, part) and isinstance(obj, types.ModuleType) and not part.startswith("_"):
                importlib.import_module(".".join([root, *rest[: i + 1]]))  # a submodule not imported yet
            obj = getattr(obj, part)
    except Exception:  # an attribute that does not exist fails at run time, not here
        return _UNKNOWN
    return obj


_UNKNOWN = object()


@functools.lru_cache(maxsize=1)
def _foreign_module_names() -> frozenset[str]:
    """Attribute names under which an allowed module exposes a module outside the subset (sys, os,
    builtins, threading, functools ...): flagged on ANY object, so an alias cannot hide them.
    Tensor methods of the same name (``cuda``, ``cpu`` ...) are left to the resolved checks."""
    import sys

    import einops.layers.torch  # noqa: F401  (so its modules are scanned too)
    foreign: set[str] = set()
    allowed: set[str] = set()
    einops_modules = [name for name in list(sys.modules) if name.startswith(ALLOWED_MODULE_PREFIXES)]
    for mod in sorted(ALLOWED_MODULES - {"__future__"}) + sorted(einops_modules):
        m = importlib.import_module(mod)
        for n in dir(m):
            v = getattr(m, n, None)
            if isinstance(v, types.ModuleType):
                (allowed if _allowed_module(v.__name__) else foreign).add(n)
    import torch
    return frozenset((foreign - allowed - set(dir(torch.Tensor)) - set(dir(torch.nn.Module))) | ESCAPE_NAMES)


class _Checker:
    def __init__(self, nodes: Sequence[ast.stmt], labels: Sequence[str], forbidden: Sequence[str], loop_hint: str):
        self.forbidden, self.loop_hint = tuple(forbidden), loop_hint
        self.module, self.resolver = resolve(list(nodes))
        self.label: dict[int, str] = {}
        for node, label in zip(nodes, labels, strict=True):
            for sub in ast.walk(node):
                self.label[id(sub)] = label
        self.aliases: dict[int, str] = {}
        for node in nodes:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import):
                    for a in sub.names:
                        self.aliases[id(a)] = a.name if a.asname else a.name.split(".")[0]
                elif isinstance(sub, ast.ImportFrom):
                    base = "." * sub.level + (sub.module or "")
                    for a in sub.names:
                        self.aliases[id(a)] = f"{base}.{a.name}"
        self.nodes = list(nodes)
        self.out: list[Finding] = []

    def add(self, node: ast.AST, what: str, why: str) -> None:
        self.out.append(Finding(self.label.get(id(node), "notebook"), getattr(node, "lineno", 0), what, why))

    # -- what a name or attribute chain means --------------------------------------------------------
    def qual(self, node: ast.AST, depth: int = 0) -> str | None:
        """``torch.nn.functional.softmax`` for ``F.softmax`` after ``import torch.nn.functional as F``;
        ``builtins.sum`` for an unshadowed ``sum``; None for the student's own objects."""
        if depth > 20:
            return None
        if isinstance(node, ast.Attribute):
            base = self.qual(node.value, depth + 1)
            return f"{base}.{node.attr}" if base else None
        if not isinstance(node, ast.Name) or id(node) not in self.resolver.loads:
            return None
        _, scope, _ = self.resolver.loads[id(node)]
        if scope is None:
            return f"builtins.{node.id}" if hasattr(builtins, node.id) else None
        quals: set[str | None] = set()  # None: a binding that is the student's own object
        for definer in scope.names.get(node.id, []):
            if id(definer) in self.aliases:
                quals.add(self.aliases[id(definer)])
            elif isinstance(definer, (ast.Name, ast.Attribute)):  # `m = torch`, `sm = torch.softmax`
                quals.add(self.qual(definer, depth + 1))
            else:
                quals.add(None)
        return quals.pop() if len(quals) == 1 else None

    def forbidden_name(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.forbidden)

    # -- the rules -----------------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        for stmt in self.nodes:
            for node in ast.walk(stmt):
                self.visit(node)
        self.recursion()
        return self.out

    def visit(self, node: ast.AST) -> None:
        kind = _LOOPS.get(type(node))
        if kind:
            self.add(node, kind, self.loop_hint)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            self.add(node, "`yield`", "a generator produces elements one at a time in Python")
        elif isinstance(node, ast.Name) and id(node) in self.resolver.loads:
            self.name(node)
        elif isinstance(node, ast.Attribute):
            self.attribute(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports(node)
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    bound = [item.name]
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):  # `__getitem__ = lambda self, i: ...`
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    bound = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                else:
                    bound = []
                for name in bound:
                    if name in ITERABLE_DUNDERS:
                        self.add(item, f"`{name}` in class `{node.name}`",
                                 "Python can walk its objects element by element (`list()`, `tuple()`, `for`)")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.add(node, f"`{type(node).__name__.lower()}`", "state kept across calls is not allowed")
        elif isinstance(node, (ast.AsyncFunctionDef, ast.Await)):
            self.add(node, "`async`", _OUTSIDE)

    def name(self, node: ast.Name) -> None:
        q = self.qual(node)
        if node.id.startswith("__") and node.id != "__name__" and (q is None or q.startswith("builtins.")):
            self.add(node, f"`{node.id}`", "reflection is not allowed in the code an exercise reaches")
            return
        if q is None:
            if self.resolver.loads[id(node)][1] is None and node.id in REFLECTION:  # get_ipython
                self.add(node, f"`{node.id}`", "reflection is not allowed in the code an exercise reaches")
            return
        if q.startswith("builtins."):
            if node.id in ITERATING:
                self.add(node, f"`{node.id}`", ITERATING[node.id])
            elif node.id in REFLECTION:
                self.add(node, f"`{node.id}`", "reflection is not allowed in the code an exercise reaches")
            return
        self.library(node, q, node.id)

    def library(self, node: ast.AST, q: str, shown: str) -> None:
        """Checks for a name or attribute that resolves into a library."""
        obj = _library_object(q)
        if isinstance(obj, types.ModuleType) and not _allowed_module(obj.__name__):
            self.add(node, f"`{shown}` (the module `{obj.__name__}`)", _OUTSIDE)
        elif obj is not _UNKNOWN and id(obj) in ITERATING_OBJECTS:
            self.add(node, f"`{shown}`", ITERATING.get(ITERATING_OBJECTS[id(obj)], _ITER_WHY))
        elif q == "functools.reduce" or q.startswith("itertools."):  # imported: the import is reported too
            self.add(node, f"`{shown}`", ITERATING.get(q.split(".")[-1], _ITER_WHY))
        root = q.split(".")[0]
        if isinstance(node, ast.Name) and root in LIBRARY_ROOTS and self.forbidden_name(q.split(".")[-1]):
            self.add(node, f"`{q.split('.')[-1]}`", "it is forbidden in this exercise")

    def attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        base = self.qual(node.value)
        is_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if attr.startswith("__") and attr.endswith("__") and attr not in DUNDER_OK:
            self.add(node, f"`.{attr}`", "reflection is not allowed in the code an exercise reaches")
        elif attr.startswith("_") and not attr.endswith("__") and not is_self:
            self.add(node, f"`.{attr}`", "private attributes are not allowed in the code an exercise reaches")
        elif attr in TORCH_REACH and not is_self:
            self.add(node, f"`.{attr}`", "it reaches the dispatcher, the JIT, threads or the random state, "
                                         "which grading relies on")
        elif base is None and attr in _foreign_module_names():
            self.add(node, f"`.{attr}`", f"it reaches a module outside the subset; {_OUTSIDE}")
        if attr in ELEMENT_METHODS:
            self.add(node, f"`.{attr}`", ELEMENT_METHODS[attr])
        if self.forbidden_name(attr):
            self.add(node, f"`{attr}`", "it is forbidden in this exercise")
        if base is not None:
            if base == "builtins.list" and attr == "sort":
                self.add(node, "`list.sort`", "it sorts in Python; use `torch.sort`")
            elif base.startswith("builtins."):
                if base.split(".")[1] in REFLECTION or base.split(".")[1] in ITERATING:
                    pass  # the name itself is reported
            else:
                self.library(node, f"{base}.{attr}", f"{_dotted(node)}")

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            targets = [(module, None)] + [(module, a.name) for a in node.names]
        else:
            targets = [(a.name, None) for a in node.names]
        for module, name in targets:
            if name is None:
                top = module.split(".")[0]
                obj = _library_object(module) if top in LIBRARY_ROOTS else _UNKNOWN
                ok = top == "__future__" or (isinstance(obj, types.ModuleType) and _allowed_module(obj.__name__))
                if not ok:
                    self.add(node, f"import of `{module}`", _OUTSIDE)
                continue
            if name == "*" or name.startswith("_") or name in TORCH_REACH:
                self.add(node, f"import of `{name}` from `{module}`", _OUTSIDE)
                continue
            if module == "__future__":
                continue
            obj = _library_object(f"{module}.{name}")
            if isinstance(obj, types.ModuleType) and not _allowed_module(obj.__name__):
                self.add(node, f"import of `{module}.{name}` (the module `{obj.__name__}`)", _OUTSIDE)
            elif obj is not _UNKNOWN and id(obj) in ITERATING_OBJECTS:
                self.add(node, f"import of `{name}`", ITERATING.get(ITERATING_OBJECTS[id(obj)], _ITER_WHY))
            if self.forbidden_name(name):
                self.add(node, f"`{name}`", "it is forbidden in this exercise")

    def call(self, node: ast.Call) -> None:
        keywords = {k.arg for k in node.keywords}
        f = node.func
        if isinstance(f, ast.Name) and f.id == "type" and len(node.args) == 3 and self.qual(f) == "builtins.type":
            self.add(node, "`type(name, bases, dict)`", "reflection is not allowed in the code an exercise reaches")
        elif isinstance(f, ast.Name) and f.id in ("min", "max") and self.qual(f) == f"builtins.{f.id}":
            single = len(node.args) == 1 and not any(isinstance(a, ast.Starred) for a in node.args)
            if "key" in keywords:
                self.add(node, f"`{f.id}(..., key=...)`", "it calls Python code once per element")
            elif single and not _shape_like(node.args[0]):
                self.add(node, f"`{f.id}` over one iterable", f"it walks the elements in Python; use `torch.{f.id}`")
        elif isinstance(f, ast.Attribute) and f.attr == "sort" and "key" in keywords:
            self.add(node, "`.sort(key=...)`", "it calls Python code once per element; use `torch.sort`")

    def recursion(self) -> None:
        for node, name in recursive_functions(self.module, self.resolver, self.nodes):
            self.add(node, f"recursion in `{name}`", "a recursive call repeats Python work per element")


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every expression the parser makes
        return getattr(node, "attr", "?")


def _shape_like(node: ast.AST) -> bool:
    """``x.shape``, ``x.size()``, ``(a, b)``: iterating these walks dimensions, not elements."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr in SHAPE_LIKE
    if isinstance(node, ast.Subscript):
        return _shape_like(node.value)
    return isinstance(node, (ast.Tuple, ast.List, ast.Constant))


def check_program(nodes: Sequence[ast.stmt], labels: Sequence[str], forbidden: Sequence[str] = (),
                  loop_hint: str = "") -> list[Finding]:
    """Findings in the module-level statements ``nodes`` (each from the cell in ``labels``)."""
    return _Checker(nodes, labels, forbidden, loop_hint).run()
