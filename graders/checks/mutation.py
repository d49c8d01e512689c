"""Which module-level statements change a value in place, and which names may share a value.

An exercise's program must contain every module-level statement that changes a value its function
uses (``W[0] = 1``), or the grader's process computes with the old value while the kernel used the new
one. It must contain nothing else: a scratch cell that only reads an answer's constant
(``MODES.keys()``, ``OFFSETS.tolist()``, ``len(X)``) is not part of the program, so its loop costs nothing.

A statement changes ``X`` in place when, outside any def, lambda or class body, it:

- assigns to or deletes an item or attribute rooted at ``X`` (``X[0] = 1``, ``X.a = 2``, ``del X[0]``,
  ``X[0] += 1``, ``for X[i] in ...``, ``with ... as X.a``);
- calls a mutating method on something rooted at ``X``: the list, dict, set and deque mutators, any
  method whose name ends in ``_`` (torch's in-place methods: ``X.add_(1)``, ``X.copy_(Y)``), nn.Module's
  registering and loading methods, and any method one of the student's own classes defines;
  ``X.to(...)``, ``X.float()``, ``X.eval()`` and their kind (nn.Module's in-place conversions) when the
  result is thrown away (``model.eval()`` as a statement of its own);
- passes ``X`` as the first argument of a function whose name ends in ``_`` (``nn.init.zeros_(X)``), of
  ``setattr``/``delattr``, or as ``out=X``; or passes it to a function of the student's own that changes
  that parameter in place (``def scale(t): t *= 2`` ... ``scale(W)``);
- augments a name that may share ``X``'s value (``w += 1`` after ``w = W.view(-1)``: in place for tensors).

Module-level aliases share a value: ``s = SETTINGS``, ``w = W.view(-1)``, ``row = T[0]``,
``a, b = X.unbind()``, ``for row in T``. Sharing goes both ways (a view and its base see each other's
changes) and is transitive, so a change through any name of a group is a change of every name in it
(``Sharing``). Names only ever bound to constants (numbers, strings, tuples of them) share nothing.
"""
from __future__ import annotations

import ast
from typing import Iterable

MUTATING_METHODS = {
    "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",    # list
    "update", "setdefault", "popitem",                                           # dict
    "add", "discard", "intersection_update", "difference_update", "symmetric_difference_update",  # set
    "appendleft", "extendleft", "popleft", "rotate",                             # deque
    "register_buffer", "register_parameter", "add_module", "register_module", "load_state_dict",
    "zero_grad", "set_extra_state", "set_submodule",                             # nn.Module
}
# nn.Module converts itself in place and returns itself; on a tensor these return a new one
MUTATING_WHEN_DISCARDED = {"to", "float", "double", "half", "bfloat16", "cpu", "cuda", "type", "train", "eval",
                           "apply", "share_memory", "requires_grad_"}
# methods whose result shares the receiver's value (views and items): `w = W.view(-1)` is an alias of W
VIEW_METHODS = {
    "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "squeeze", "unsqueeze", "expand",
    "expand_as", "flatten", "unflatten", "narrow", "select", "diagonal", "unfold", "split", "chunk", "unbind",
    "tensor_split", "as_strided", "detach", "swapaxes", "swapdims", "movedim", "moveaxis", "get", "setdefault",
    "values", "items", "__getitem__",
}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def class_methods(trees: Iterable[ast.AST]) -> frozenset[str]:
    """Names of the methods the student's classes define, anywhere in the notebook."""
    return frozenset(item.name for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                     for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))


def root_node(node: ast.AST) -> ast.Name | None:
    """``X`` for ``X``, ``X.a[0].b``, ``X.view(-1)[0]``: the name node whose value a chain of items, attributes and
    views (or in-place calls, which return their receiver) still is; None past a call that makes a new value
    (``X.clone()``, ``X.sum()``)."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                (node.func.attr in VIEW_METHODS or node.func.attr.endswith("_")):
            node = node.func.value
        else:
            return node if isinstance(node, ast.Name) else None


def root_name(node: ast.AST) -> str | None:
    """The name of ``root_node(node)``."""
    found = root_node(node)
    return found.id if found is not None else None


def _module_level(stmt: ast.stmt) -> Iterable[ast.AST]:
    """Every node of ``stmt`` that runs when the cell runs: not the bodies of defs, lambdas and classes."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):  # a def's or lambda's body runs later; a class body's names are its own
            stack.extend(ast.iter_child_nodes(node))


def _stored(targets: Iterable[ast.AST]) -> set[str]:
    """Roots of item and attribute targets (``X[0] = ...``, ``a, X.b = ...``); plain names are rebound, not changed."""
    roots: set[str] = set()
    pending = list(targets)  # a copy: the tree itself is never changed
    while pending:
        t = pending.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            pending.extend(t.elts)
        elif isinstance(t, ast.Starred):
            pending.append(t.value)
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            name = root_name(t)
            if name:
                roots.add(name)
    return roots


def changing_functions(trees: Iterable[ast.Module]) -> dict[str, frozenset[int | str]]:
    """The student's top-level functions that change a parameter in place: name -> its positions and names."""
    found: dict[str, frozenset[int | str]] = {}
    for tree in trees:
        for stmt in tree.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = [a.arg for a in stmt.args.posonlyargs + stmt.args.args]
            changed = set().union(*[mutated_roots(inner) for inner in stmt.body])
            where: set[int | str] = {i for i, p in enumerate(params) if p in changed}
            where |= {p for p in params + [a.arg for a in stmt.args.kwonlyargs] if p in changed}
            if where:
                found[stmt.name] = frozenset(where)
    return found


def mutated_roots(stmt: ast.stmt, own_methods: frozenset[str] = frozenset(),
                  changing: dict[str, frozenset[int | str]] | None = None) -> frozenset[str]:
    """Names ``stmt`` changes in place, by the rule of this module's docstring (``changing``: the student's
    functions that change a parameter, from ``changing_functions``)."""
    roots: set[str] = set()
    discarded: set[int] = set()  # calls whose result is thrown away (the parent Expr is met first)
    for node in _module_level(stmt):
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Assign):
            roots |= _stored(node.targets)
        elif isinstance(node, ast.AugAssign):  # `W[0] += 1`, and `w += 1`: in place for a tensor or a list
            roots |= _stored([node.target]) | ({node.target.id} if isinstance(node.target, ast.Name) else set())
        elif isinstance(node, ast.AnnAssign):
            roots |= _stored([node.target])
        elif isinstance(node, ast.Delete):
            roots |= _stored(node.targets)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            roots |= _stored([node.target])
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            roots |= _stored([node.optional_vars])
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            discarded.add(id(node.value))
        if isinstance(node, ast.Call):
            roots |= _call_mutates(node, own_methods, id(node) in discarded, changing or {})
    return frozenset(roots)


def _call_mutates(call: ast.Call, own_methods: frozenset[str], discarded: bool,
                  changing: dict[str, frozenset[int | str]]) -> set[str]:
    roots: set[str] = set()
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    in_place = name.endswith("_") and not name.startswith("__") or name in ("setattr", "delattr")
    if isinstance(f, ast.Name) and f.id in changing:
        for where in changing[f.id]:
            args = call.args[where:where + 1] if isinstance(where, int) else \
                [k.value for k in call.keywords if k.arg == where]
            roots |= {n for n in map(root_name, args) if n}
    if isinstance(f, ast.Attribute):
        receiver = root_name(f.value)
        if receiver and (in_place or name in MUTATING_METHODS or name in own_methods
                         or discarded and name in MUTATING_WHEN_DISCARDED):
            roots.add(receiver)
    if in_place and call.args:  # nn.init.zeros_(W), torch.relu_(W), a student's double_(W)
        first = root_name(call.args[0])
        if first:
            roots.add(first)
    for keyword in call.keywords:
        if keyword.arg == "out":
            for target in ast.walk(keyword.value):
                if isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)) and root_name(target):
                    roots.add(root_name(target))  # type: ignore[arg-type]
    return roots


def _shares(value: ast.AST) -> set[str]:
    """Names whose value ``value`` may share: ``X``, ``X.a``, ``X[0]``, ``X.view(-1)``, ``(X, Y)``."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.Tuple, ast.List)):
        return set().union(*[_shares(e) for e in value.elts]) if value.elts else set()
    if isinstance(value, ast.Starred):
        return _shares(value.value)
    if isinstance(value, (ast.Attribute, ast.Subscript)):
        return _shares(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS:
        return _shares(value.func.value)
    if isinstance(value, ast.NamedExpr):
        return _shares(value.value)
    return set()


def aliases_of(stmt: ast.stmt) -> tuple[tuple[str, frozenset[str]], ...]:
    """(alias, names it may share its value with) for the module-level assignments and ``for`` targets in
    ``stmt``."""
    found: list[tuple[str, frozenset[str]]] = []
    for node in _module_level(stmt):
        targets: list[ast.AST]
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.NamedExpr):
            targets, value = [node.target], node.value
        elif isinstance(node, (ast.For, ast.AsyncFor)):  # `for row in T`: each row is an item of T
            targets, value = [node.target], node.iter
        else:
            continue
        sources = frozenset(_shares(value))
        if not sources:
            continue
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id not in sources:
                    found.append((name.id, sources))
    return tuple(found)


def constants(stmts: Iterable[ast.stmt]) -> frozenset[str]:
    """Names that every module-level binding gives a constant (``N = 3``, ``MODE = "sum"``, ``S = (1, 2)``):
    their values cannot change in place, so they share nothing."""
    values: dict[str, list[ast.AST]] = {}
    for stmt in stmts:
        for node in _module_level(stmt):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            values.setdefault(name.id, []).append(node.value if target is name else node)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr,
                                   ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                                   ast.ImportFrom, ast.withitem)):
                for bound in _bound(node):
                    values.setdefault(bound, []).append(node)
    return frozenset(n for n, given in values.items() if all(_constant(v) for v in given))


def _bound(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)] if target is not None else []


def _constant(value: ast.AST) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.UnaryOp):
        return _constant(value.operand)
    return isinstance(value, ast.Tuple) and all(_constant(e) for e in value.elts)


class Sharing:
    """Which module-level names may share one value: the groups that aliases join, both ways, transitively."""

    def __init__(self, pairs: Iterable[tuple[str, frozenset[str]]], immutable: frozenset[str] = frozenset()):
        self.parent: dict[str, str] = {}
        for alias, sources in pairs:
            for source in sources:
                if alias not in immutable and source not in immutable:
                    self.parent[self._group(alias)] = self._group(source)

    def _group(self, name: str) -> str:
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def same_value(self, a: str, b: str) -> bool:
        return a == b or self._group(a) == self._group(b)
