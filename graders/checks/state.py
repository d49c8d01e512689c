"""State kept between calls: a function that remembers what it computed makes "fast" time a lookup.

A memo (``CACHE[key] = out`` ... ``return CACHE[key]``) returns the timed calls' results without computing
them, so it costs "vectorized" and "fast" (kind ``state``). Code that a function reaches keeps state between
calls when, inside a def or lambda, it changes in place (graders.checks.mutation's rule: an item or attribute
assigned or deleted, a list/dict/set mutator, an in-place ``*_`` method, ``out=``):

- a module-level value (``CACHE[key] = out``, ``CACHE.setdefault(k, v)``, ``SEEN.append(x)``, ``W.add_(1)``),
  directly or through a local alias (``c = CACHE`` ... ``c[k] = out``, or ``c |= {k: out}``: an augmented
  assignment changes a dict, list, set or tensor in place);
- a value passed to a function of the student's own that changes that parameter in place
  (``def remember(store, k, v): store[k] = v`` ... ``remember(CACHE, k, out)``; graders.checks.mutation's
  ``changing_functions``), or whose method of the student's own changes ``self``
  (``def f(a, _m=Memo())`` ... ``_m.get(k)``, where ``Memo.get`` assigns ``self.d[k]``; a call of an
  instance whose class's ``__call__`` or ``forward`` does);
- a function's attribute (``f.cache = ...``, ``f.calls += 1``): a def is a module-level value too;
- a parameter's default that is not a constant (``def f(a, _seen={})`` ... ``_seen[k] = a``): the default is
  made once and shared by every call;
- a variable of an enclosing function, from a nested function that outlives its call: one that is returned,
  stored, passed on or decorated (a closure's cell). A nested helper that its function only calls keeps its
  state for that one call.

``global`` and ``nonlocal`` are reported by the checker as the same kind. Reading any of these is free, and so
is changing the function's own locals and parameters without defaults (a helper that fills its argument, a
method that changes ``self``, called on a local), ``self.x = ...`` in a method (what it changes is found where
the method is called), and module-level statements (they run once, when the cell runs).
"""
from __future__ import annotations

import ast

from graders.checks.calls import VMAPS
from graders.checks.finding import STATE
from graders.checks.mutation import MUTATING_METHODS, changing_functions, mutated_roots, root_node
from graders.checks.scopes import Scope

STATE_WHAT = "keeps state between calls"
STATE_WHY = "compute the result on every call"
_MAX_DEPTH = 8
# methods that make or set up an instance: what they change in ``self`` is the new instance's, not kept state
_CONSTRUCTORS = {"__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__", "__enter__"}
_CALLED_AS_INSTANCE = {"__call__", "forward"}  # ``obj(...)`` runs these


class StateRules:
    """Finds, for the checker ``checker`` (graders.checks.subset._Checker), the writes that outlive a call."""

    def __init__(self, checker):
        self.checker = checker
        self.function_of: dict[int, ast.AST] = {}  # id(scope of a def/lambda body) -> the def/lambda
        for stmt in checker.nodes:
            for node in ast.walk(stmt):
                scope = checker.resolver.scope_of.get(id(node))
                if scope is not None and scope.kind == "function":
                    self.function_of[id(scope)] = node
        module = ast.Module(body=list(checker.nodes), type_ignores=[])
        self.changing = changing_functions([module])  # the student's functions that change a parameter
        self.methods = _self_changing(module)  # class name -> its methods that change ``self``
        self.any_method = frozenset().union(*self.methods.values())

    def check(self, node: ast.AST) -> None:
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):  # `c |= {k: out}`
            self._augmented(node, node.target)
            return
        for target in self._changed(node):
            root = root_node(target)
            load = self.checker.resolver.loads.get(id(root)) if root is not None else None
            if load is None or not load[2].in_function():
                continue
            kept = self._kept(load[0], load[1], load[2], 0)
            if kept:
                self.checker.add(node, f"{STATE_WHAT}: `{_shown(node)}` changes {kept}", STATE_WHY, STATE)
                return

    def _augmented(self, node: ast.AugAssign, target: ast.Name) -> None:
        """``c += x`` inside a function changes ``c``'s value in place when it is a dict, list, set or tensor:
        kept state when ``c`` is a local alias of state that outlives the call (a bare module-level name cannot
        be augmented in a function without ``global``, which is reported as it is)."""
        fn = self.checker.parent.get(id(node))
        while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            fn = self.checker.parent.get(id(fn))
        where = self.checker.resolver.scope_of.get(id(fn)) if fn is not None else None
        if where is None or where.lookup(target.id) is not where:  # `global`/`nonlocal` names: reported as such
            return
        kept = self._kept(target, where, where, 0)
        if kept:
            self.checker.add(node, f"{STATE_WHAT}: `{_shown(node)}` changes {kept}", STATE_WHY, STATE)

    def _changed(self, node: ast.AST) -> list[ast.AST]:
        """The values ``node`` changes in place: graders.checks.mutation's rule, applied inside functions, with
        the student's own functions that change a parameter and methods that change ``self``."""
        found = _changed(node)
        if not isinstance(node, ast.Call):
            return found
        f = node.func
        if isinstance(f, ast.Name) and f.id in self.changing and self._own_function(f):
            for where in self.changing[f.id]:
                found += node.args[where:where + 1] if isinstance(where, int) else \
                    [k.value for k in node.keywords if k.arg == where]
        if isinstance(f, ast.Attribute) and self._changes_self(f.value, {f.attr}):
            found.append(f.value)
        if isinstance(f, ast.Name) and not self._own_function(f) and self._changes_self(f, _CALLED_AS_INSTANCE):
            found.append(f)  # `_m(key)`: an instance whose `__call__` (or an nn.Module's `forward`) changes it
        return found

    def _changes_self(self, receiver: ast.AST, methods: set[str]) -> bool:
        """Calling one of ``methods`` on ``receiver`` runs a method of the student's that changes ``self``: the
        receiver is made by a class of the student's with such a method (``M = Memo()``, ``_m=Memo()``), or is
        made elsewhere (a factory, an alias) while some class of the student's has one."""
        if not self.any_method & methods:
            return False
        classes = self._classes(receiver)
        return any(self.methods.get(c, frozenset()) & methods for c in classes) if classes is not None else True

    def _classes(self, receiver: ast.AST) -> set[str] | None:
        """The student's classes ``receiver`` may be an instance of, by the values its name is bound to at module
        level or as a parameter's default; an empty set for literals (a dict, a list, a number); None when
        unknown (a call of something else, a name bound in a function)."""
        root = root_node(receiver)
        load = self.checker.resolver.loads.get(id(root)) if root is not None else None
        if root is not receiver or load is None or load[1] is None:
            return None
        found: set[str] = set()
        for definer in load[1].names.get(root.id, []):
            value = self._default(definer) if isinstance(definer, ast.arg) else definer
            if value is None and isinstance(definer, ast.arg):
                continue  # a parameter without a default: the caller's value, not kept
            if isinstance(value, (ast.Constant, ast.Dict, ast.List, ast.Set, ast.Tuple, ast.JoinedStr,
                                  ast.ListComp, ast.DictComp, ast.SetComp)):
                continue
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.methods:
                found.add(value.func.id)
            elif isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias)):
                continue
            else:
                return None
        return found

    def _own_function(self, name: ast.Name) -> bool:
        """``name`` is read where it means one of the student's module-level defs or classes."""
        load = self.checker.resolver.loads.get(id(name))
        scope = load[1] if load is not None else None
        return scope is not None and scope.kind == "module" and any(
            isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for d in scope.names.get(name.id, []))

    def _kept(self, name: ast.Name, scope: Scope | None, where: Scope, depth: int) -> str | None:
        """What outlives the call in the value ``name`` (read in ``where``, bound in ``scope``), or None."""
        if scope is None or depth > _MAX_DEPTH:
            return None
        definers = scope.names.get(name.id, [])
        if scope.kind == "module":
            if any(id(d) in self.checker.aliases for d in definers):
                return None  # a library's object: assigning to it is outside the subset, said elsewhere
            if any(isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) for d in definers):
                return f"an attribute of the function `{name.id}`"
            return f"the module-level `{name.id}`"
        if scope.kind != "function":
            return None
        own = _function_scope(where)
        if scope is not own:
            fn = self.function_of.get(id(own))
            return f"`{name.id}` of the enclosing function" if fn is not None and self._escapes(fn) else None
        for definer in definers:
            if isinstance(definer, ast.arg):
                default = self._default(definer)
                if default is not None and not _immutable(default):
                    return f"the parameter `{name.id}`, whose default is made once for every call"
            elif isinstance(definer, ast.expr):  # `c = CACHE`, `row = TABLE[0]`, `w = W.view(-1)`
                alias = root_node(definer)
                load = self.checker.resolver.loads.get(id(alias)) if alias is not None else None
                if load is not None:
                    kept = self._kept(load[0], load[1], load[2], depth + 1)
                    if kept:
                        return kept
        return None

    def _default(self, arg: ast.arg) -> ast.expr | None:
        arguments = self.checker.parent.get(id(arg))
        if not isinstance(arguments, ast.arguments):
            return None
        positional = arguments.posonlyargs + arguments.args
        for i, a in enumerate(positional):
            if a is arg:
                offset = len(positional) - len(arguments.defaults)
                return arguments.defaults[i - offset] if i >= offset else None
        for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
            if a is arg:
                return default
        return None

    def _escapes(self, fn: ast.AST) -> bool:
        """The nested def or lambda ``fn`` may outlive the call of its enclosing function: it is decorated,
        returned, yielded or stored. Called, or passed to a call that is not returned, it lives as long as that
        call (a function of the student's that stores it keeps state of its own, found there)."""
        if getattr(fn, "decorator_list", None):
            return True
        name = fn.name if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        above = self.checker.parent.get(id(fn))
        if isinstance(fn, ast.Lambda) and isinstance(above, ast.Assign) and len(above.targets) == 1 \
                and isinstance(above.targets[0], ast.Name):
            name = above.targets[0].id
        if name is None:
            return self._leaves(fn)
        return any(self._leaves(load) for load, scope, _ in self.checker.resolver.loads.values()
                   if load.id == name and scope is not None and any(d is fn for d in scope.names.get(name, [])))

    def _leaves(self, node: ast.AST) -> bool:
        """The function value ``node`` may outlive the statement it is in: it is returned, yielded, stored or
        aliased. Called, or passed to a call (for the length of that call; ``vmap`` hands it back), it does not."""
        direct = self.checker.parent.get(id(node))
        if isinstance(direct, ast.Call) and direct.func is node:
            return False
        if isinstance(direct, ast.Call) and (node in direct.args or any(k.value is node for k in direct.keywords)):
            return self.checker.qual(direct.func) in VMAPS and self._leaves(direct)
        if isinstance(direct, ast.keyword):
            call = self.checker.parent.get(id(direct))
            return isinstance(call, ast.Call) and self.checker.qual(call.func) in VMAPS and self._leaves(call)
        return not isinstance(direct, ast.Expr)


def _function_scope(scope: Scope) -> Scope:
    while scope.kind != "function" and scope.parent is not None:
        scope = scope.parent
    return scope


def _self_changing(module: ast.Module) -> dict[str, frozenset[str]]:
    """For each class of the student's, the names of its methods that change ``self`` in place
    (``self.d[k] = v``, ``self.seen.append(x)``, ``self.n += 1``), constructors aside."""
    methods: dict[str, frozenset[str]] = {}
    for cls in ast.walk(module):
        if not isinstance(cls, ast.ClassDef):
            continue
        found = set()
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name in _CONSTRUCTORS:
                continue
            params = fn.args.posonlyargs + fn.args.args
            if not params or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
                continue
            me = params[0].arg
            if any(me in mutated_roots(stmt) for stmt in fn.body):
                found.add(fn.name)
        if found:
            methods[cls.name] = methods.get(cls.name, frozenset()) | found
    return methods


def _changed(node: ast.AST) -> list[ast.AST]:
    """The values ``node`` changes in place (graders.checks.mutation's rule, applied inside functions)."""
    if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return [node.value]
    if not isinstance(node, ast.Call):
        return []
    found: list[ast.AST] = []
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    in_place = name.endswith("_") and not name.startswith("_")
    if isinstance(f, ast.Attribute) and (in_place or name in MUTATING_METHODS):
        found.append(f.value)
    if in_place and node.args:  # nn.init.zeros_(W)
        found.append(node.args[0])
    found += [k.value for k in node.keywords if k.arg == "out"]
    return found


def _immutable(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _immutable(node.operand)
    return isinstance(node, ast.Tuple) and all(_immutable(e) for e in node.elts)


def _shown(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
