"""The checked subset of Python that an exercise's reachable code must stay in.

Applied to the program slice only (graders.checks.reach), with every scope walked: module-level
statements, defs and helpers inside any block, nested defs, lambdas, walrus targets, class bodies,
decorators and default values. The kinds of finding (graders.checks.finding):

- *iteration* (except over fixed-size iterables, graders.checks.fixed): loops, comprehensions, generators,
  recursion through any call path, the iterating
  builtins (``map``, ``sum``, ``sorted``, ``min``/``max`` with ``key=`` ...), ``.tolist()``/``.item()``,
  classes Python can walk element by element (``__getitem__``/``__iter__``/``__len__``/``__next__``),
  higher-order calls that repeat Python code (``Module.apply``, ``vmap(..., chunk_size=...)``);
- *forbidden*: the exercise's forbidden library functions, whatever they are called locally;
- *form*: an import of the student's own module;
- *state*: state kept between calls (graders.checks.state), ``global``/``nonlocal`` included;
- *outside the subset*: what a submission would need to reach into the process that measures it:
  attribute chains off torch/einops/math/typing are resolved in the real modules and a module-valued
  step outside the allowlist (``torch.sys``, ``typing.functools``) is a finding; so are reflection,
  private and dunder attributes, imports of other modules, torch's thread, JIT and dispatcher APIs, and
  the allowlist's callables that run code or strings where the checker cannot follow
  (graders.checks.boundary), Tensor subclasses, assignments to a library's attributes.

Names resolve like Python does (graders.checks.scopes): a student's own ``softmax`` or a parameter
called ``sum`` is not the library function or the builtin.
"""
from __future__ import annotations

import ast
import builtins
import fnmatch
import functools
import itertools
import types
from typing import Sequence

from graders.checks import boundary
from graders.checks.calls import CallRules
from graders.checks.classes import ClassRules
from graders.checks.finding import FORBIDDEN, FORM, ITERATION, OUTSIDE, STATE, Finding
from graders.checks.fixed import ITERATED_ARGUMENTS, FixedSize
from graders.checks.library import (
    ALLOWED_FROM,
    LIBRARY_ROOTS,
    SUBSET,
    UNKNOWN,
    allowed_module,
    foreign_module_names,
    library_object,
)
from graders.checks.recursion import recursive_functions
from graders.checks.scopes import resolve
from graders.checks.state import STATE_WHAT, STATE_WHY, StateRules

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
    "__build_class__", "license", "credits", "copyright",  # the last three read files (site's printers)
}
DUNDER_OK = {"__init__", "__call__", "__name__"}
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
_LOOPS = {
    ast.For: "`for` loop", ast.AsyncFor: "`async for` loop", ast.While: "`while` loop",
    ast.ListComp: "list comprehension", ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension", ast.GeneratorExp: "generator expression",
}
_ITER_WHY = "it iterates in Python"
_OUTSIDE = f"only {SUBSET} may be used in the code an exercise reaches"
_OWN_MODULE = "only notebook cells are checked as your answer; paste its code into a notebook cell"


class _Checker:
    def __init__(self, nodes: Sequence[ast.stmt], labels: Sequence[str], forbidden: Sequence[str], loop_hint: str,
                 own_modules: frozenset[str] = frozenset(), function: str = "", shape_params: Sequence[str] = ()):
        self.forbidden, self.loop_hint, self.own_modules = tuple(forbidden), loop_hint, own_modules
        self.module, self.resolver = resolve(list(nodes))
        self.label: dict[int, str] = {}
        self.parent: dict[int, ast.AST] = {}
        self.aliases: dict[int, str] = {}
        self.own_methods: set[str] = set()  # methods the student's classes define (not the library's)
        for node, label in zip(nodes, labels, strict=True):
            for sub in ast.walk(node):
                self.label[id(sub)] = label
                for child in ast.iter_child_nodes(sub):
                    self.parent[id(child)] = sub
                if isinstance(sub, ast.Import):
                    for a in sub.names:
                        self.aliases[id(a)] = a.name if a.asname else a.name.split(".")[0]
                elif isinstance(sub, ast.ImportFrom):
                    base = "." * sub.level + (sub.module or "")
                    for a in sub.names:
                        self.aliases[id(a)] = f"{base}.{a.name}"
                elif isinstance(sub, ast.ClassDef):
                    self.own_methods.update(i.name for i in sub.body if isinstance(i, ast.FunctionDef))
        self.nodes = list(nodes)
        self.fixed = FixedSize(self, self.nodes, function, shape_params)
        self.state = StateRules(self)
        self.out: list[Finding] = []
        self.classes = ClassRules(self)
        self.calls = CallRules(self)

    def add(self, node: ast.AST, what: str, why: str, kind: str) -> None:
        self.out.append(Finding(self.label.get(id(node), "notebook"), getattr(node, "lineno", 0), what, why, kind))

    # -- what a name or attribute chain means --------------------------------------------------------
    def qual(self, node: ast.AST, depth: int = 0) -> str | None:
        """``torch.nn.functional.softmax`` for ``F.softmax`` after ``import torch.nn.functional as F``;
        ``builtins.sum`` for an unshadowed ``sum``; None for the student's own objects (their own modules
        included) and for anything the checker cannot follow."""
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
                alias = self.aliases[id(definer)]
                quals.add(None if alias.split(".")[0] in self.own_modules else alias)
            elif isinstance(definer, (ast.Name, ast.Attribute)):  # `m = torch`, `sm = torch.softmax`
                quals.add(self.qual(definer, depth + 1))
            else:
                quals.add(None)
        return quals.pop() if len(quals) == 1 else None

    def definers(self, node: ast.Name) -> list[ast.AST]:
        load = self.resolver.loads.get(id(node))
        return [] if load is None or load[1] is None else load[1].names.get(node.id, [])

    def forbidden_name(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.forbidden)

    def allowed_step(self, node: ast.AST, q: str) -> bool:
        """``torch.func`` read only to take one of its allowed names (``torch.func.vmap``)."""
        above = self.parent.get(id(node))
        return q in ALLOWED_FROM and isinstance(above, ast.Attribute) and above.attr in ALLOWED_FROM[q]

    # -- the rules -----------------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        for stmt in self.nodes:
            for node in ast.walk(stmt):
                self.visit(node)
        self.recursion()
        return self.out

    def visit(self, node: ast.AST) -> None:
        self.state.check(node)
        kind = _LOOPS.get(type(node))
        if kind:
            if not self.fixed_loop(node):
                self.add(node, kind, self.loop_hint, ITERATION)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            self.add(node, "`yield`", "a generator produces elements one at a time in Python", ITERATION)
        elif isinstance(node, ast.Name) and id(node) in self.resolver.loads:
            self.name(node)
        elif isinstance(node, ast.Attribute):
            self.attribute(node)
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                self.store(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports(node)
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.ClassDef):
            self.classes.check(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.add(node, f"{STATE_WHAT}: `{type(node).__name__.lower()}`", STATE_WHY, STATE)
        elif isinstance(node, (ast.AsyncFunctionDef, ast.Await)):
            self.add(node, "`async`", _OUTSIDE, OUTSIDE)

    def fixed_loop(self, node: ast.AST) -> bool:
        """A loop or comprehension over iterables that cannot grow with the input (graders.checks.fixed)."""
        if isinstance(node, ast.For):
            return self.fixed.iterable(node.iter)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return all(not g.is_async and self.fixed.iterable(g.iter) for g in node.generators)
        return False

    def name(self, node: ast.Name) -> None:
        q = self.qual(node)
        if node.id.startswith("__") and node.id != "__name__" and (q is None or q.startswith("builtins.")):
            self.add(node, f"`{node.id}`", boundary.REFLECTION, OUTSIDE)
            return
        if q is None:
            if self.resolver.loads[id(node)][1] is None and node.id in REFLECTION:  # get_ipython
                self.add(node, f"`{node.id}`", boundary.REFLECTION, OUTSIDE)
            return
        if q.startswith("builtins."):
            if node.id in ITERATING:
                call = self.parent.get(id(node))
                over_fixed = isinstance(call, ast.Call) and call.func is node and node.id in ITERATED_ARGUMENTS \
                    and self.fixed.walks_fixed(call, node.id)
                if not over_fixed:
                    self.add(node, f"`{node.id}`", ITERATING[node.id], ITERATION)
            elif node.id in REFLECTION:
                self.add(node, f"`{node.id}`", boundary.REFLECTION, OUTSIDE)
            return
        self.library(node, q, node.id)

    def library(self, node: ast.AST, q: str, shown: str) -> None:
        """Checks for a name or attribute that resolves into a library."""
        obj = library_object(q)
        if isinstance(obj, types.ModuleType) and not allowed_module(obj.__name__):
            if not self.allowed_step(node, q):
                self.add(node, f"`{shown}` (the module `{obj.__name__}`)", _OUTSIDE, OUTSIDE)
        elif obj is not UNKNOWN and id(obj) in ITERATING_OBJECTS:
            self.add(node, f"`{shown}`", ITERATING.get(ITERATING_OBJECTS[id(obj)], _ITER_WHY), ITERATION)
        elif q == "functools.reduce" or q.startswith("itertools."):  # imported: the import is reported too
            self.add(node, f"`{shown}`", ITERATING.get(q.split(".")[-1], _ITER_WHY), ITERATION)
        elif obj is not UNKNOWN:
            rule = boundary.classify(q, obj)
            if rule:
                self.add(node, f"`{shown}`", rule[1], rule[0])
        root = q.split(".")[0]
        if isinstance(node, ast.Name) and root in LIBRARY_ROOTS and self.forbidden_name(q.split(".")[-1]):
            self.add(node, f"`{q.split('.')[-1]}`", "it is forbidden in this exercise", FORBIDDEN)

    def attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        base = self.qual(node.value)
        is_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if attr.startswith("__") and attr.endswith("__") and attr not in DUNDER_OK:
            self.add(node, f"`.{attr}`", boundary.REFLECTION, OUTSIDE)
        elif attr.startswith("_") and not attr.endswith("__") and not is_self:
            self.add(node, f"`.{attr}`", "private attributes are not allowed in the code an exercise reaches",
                     OUTSIDE)
        elif attr in TORCH_REACH and not is_self and not (base and self.allowed_step(node, f"{base}.{attr}")):
            self.add(node, f"`.{attr}`", "it reaches the dispatcher, the JIT, threads or the random state, "
                                         "which grading relies on", OUTSIDE)
        elif base is None and attr in foreign_module_names():
            self.add(node, f"`.{attr}`", f"it reaches a module outside the subset; {_OUTSIDE}", OUTSIDE)
        rule = boundary.attribute_rule(attr)
        if not rule and base is None and not is_self and attr not in self.own_methods:
            rule = boundary.outside_names().get(attr)  # `(torch,)[0].load`: the origin is hidden, the name is not
        if rule:
            self.add(node, f"`.{attr}`", rule[1], rule[0])
        elif attr in boundary.ITERATING_ATTRIBUTES and attr not in self.own_methods:
            self.add(node, f"`.{attr}`", boundary.ITERATING_ATTRIBUTES[attr], ITERATION)
        if attr in ELEMENT_METHODS and not (attr == "tolist" and self.fixed.iterable(node.value)):
            self.add(node, f"`.{attr}`", ELEMENT_METHODS[attr], ITERATION)
        if self.forbidden_name(attr):
            self.add(node, f"`{attr}`", "it is forbidden in this exercise", FORBIDDEN)
        if base is not None:
            if base == "builtins.list" and attr == "sort":
                self.add(node, "`list.sort`", "it sorts in Python; use `torch.sort`", ITERATION)
            elif not base.startswith("builtins."):  # a builtin's own name is reported where it is read
                self.library(node, f"{base}.{attr}", f"{_dotted(node)}")

    def store(self, node: ast.Attribute) -> None:
        """``torch.stack = f``, ``torch.Tensor.add = f``, ``type(x).add = f``: monkeypatching an object the
        student did not define changes the library every later call runs on, the worker's own included."""
        root = node.value
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        what = f"{'deletion of' if isinstance(node.ctx, ast.Del) else 'assignment to'} `{_dotted(node)}`"
        if self.qual(node.value) is not None:
            self.add(node, what, "it changes the library itself, which the grader's own machinery runs on", OUTSIDE)
        elif not isinstance(root, ast.Name) or node.attr in boundary.library_names() and not self.own_object(root):
            self.add(node, what, "the checker cannot tell that the object is yours; it may be the library's own",
                     OUTSIDE)

    def own_object(self, name: ast.Name) -> bool:
        """``name`` is certainly the student's own object: ``self``/``cls`` of a method, one of the student's
        classes, or an instance made by calling one (``cfg = Config()``)."""
        definers = self.definers(name)
        return bool(definers) and all(self._own_definer(d) for d in definers)

    def _own_definer(self, definer: ast.AST) -> bool:
        if isinstance(definer, ast.ClassDef):
            return True
        if isinstance(definer, ast.Call) and isinstance(definer.func, ast.Name):
            callee = self.definers(definer.func)
            return bool(callee) and all(isinstance(c, ast.ClassDef) for c in callee)
        if isinstance(definer, ast.arg):  # the first parameter of a def in a class body
            arguments = self.parent.get(id(definer))
            fn = self.parent.get(id(arguments)) if arguments is not None else None
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(arguments, ast.arguments):
                first = (arguments.posonlyargs + arguments.args)[:1]
                return first == [definer] and isinstance(self.parent.get(id(fn)), ast.ClassDef)
        return False

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names = [a.name for a in node.names]
            whole = module in ALLOWED_FROM and set(names) <= ALLOWED_FROM[module]
            targets = ([] if whole else [(module, None)]) + [(module, n) for n in names]
        else:
            targets = [(a.name, None) for a in node.names]
        for module, name in targets:
            top = module.split(".")[0]
            if top in self.own_modules:
                if name is None:
                    self.add(node, f"import of your own module `{top}`", _OWN_MODULE, FORM)
                continue
            if name is None:
                obj = library_object(module) if top in LIBRARY_ROOTS else UNKNOWN
                ok = top == "__future__" or (isinstance(obj, types.ModuleType) and allowed_module(obj.__name__))
                if not ok:
                    self.add(node, f"import of `{module}`", _OUTSIDE, OUTSIDE)
                continue
            if name == "*" or name.startswith("_") or name in TORCH_REACH and module not in ALLOWED_FROM:
                self.add(node, f"import of `{name}` from `{module}`", _OUTSIDE, OUTSIDE)
                continue
            if module == "__future__":
                continue
            obj = library_object(f"{module}.{name}")
            if isinstance(obj, types.ModuleType) and not allowed_module(obj.__name__):
                self.add(node, f"import of `{module}.{name}` (the module `{obj.__name__}`)", _OUTSIDE, OUTSIDE)
            elif obj is not UNKNOWN and id(obj) in ITERATING_OBJECTS:
                self.add(node, f"import of `{name}`", ITERATING.get(ITERATING_OBJECTS[id(obj)], _ITER_WHY),
                         ITERATION)
            elif obj is not UNKNOWN and (rule := boundary.classify(f"{module}.{name}", obj)):
                self.add(node, f"import of `{name}` from `{module}`", rule[1], rule[0])
            if self.forbidden_name(name):
                self.add(node, f"`{name}`", "it is forbidden in this exercise", FORBIDDEN)

    def call(self, node: ast.Call) -> None:
        self.calls.check(node)

    def recursion(self) -> None:
        for node, name in recursive_functions(self.module, self.resolver, self.nodes):
            self.add(node, f"recursion in `{name}`", "a recursive call repeats Python work per element", ITERATION)


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every expression the parser makes
        return getattr(node, "attr", "?")


def check_program(nodes: Sequence[ast.stmt], labels: Sequence[str], forbidden: Sequence[str] = (),
                  loop_hint: str = "", own_modules: frozenset[str] = frozenset(), function: str = "",
                  shape_params: Sequence[str] = ()) -> list[Finding]:
    """Findings in the module-level statements ``nodes`` (each from the cell in ``labels``); imports of
    ``own_modules`` (the submission's own ``*.py`` files) are findings of their own. ``shape_params``: the
    parameters of ``function`` (the exercise's) that are fixed-size like a tensor's shape (graders.checks.fixed)."""
    return _Checker(nodes, labels, forbidden, loop_hint, own_modules, function, shape_params).run()
