"""Python's name resolution on the AST: which binding does each name in the code refer to?

The checks must judge the library function, not a student's own function, parameter or variable that
happens to share its name (a parameter called ``sum``, a helper called ``softmax``). So names are
resolved the way Python resolves them: function scopes (parameters, assignments, walrus targets,
nested defs, imports), comprehension scopes, class bodies (visible only to their own statements), the
notebook's module scope, then builtins.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(eq=False)
class Scope:
    kind: str                      # "module", "function", "class", "comprehension"
    parent: "Scope | None"
    # name -> the nodes that give it a value: a def/class/lambda node, an assigned expression, an import alias,
    # a parameter (ast.arg), or the statement that binds it (for, with, except)
    names: dict[str, list[ast.AST]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)

    def bind(self, name: str, definer: ast.AST) -> None:
        self.names.setdefault(name, []).append(definer)

    def lookup(self, name: str) -> "Scope | None":
        """The scope whose binding ``name`` refers to here; None for builtins and unbound names."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if scope.kind == "class" and not first:
                scope = scope.parent
                continue
            if name in scope.declared_global:
                return _module_of(scope) if name in _module_of(scope).names else None
            if name in scope.names and name not in scope.declared_nonlocal:
                return scope
            first = False
            scope = scope.parent
        return None

    def in_function(self) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope.kind == "function":
                return True
            scope = scope.parent
        return False


def _module_of(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def bind_block(scope: Scope, statements: Sequence[ast.AST] | ast.AST) -> None:
    """Record every name ``statements`` bind in ``scope`` itself (not in nested functions or classes)."""
    for stmt in [statements] if isinstance(statements, ast.AST) else statements:
        _bind(scope, stmt, None)


def _bind(scope: Scope, node: ast.AST, definer: ast.AST | None) -> None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        scope.bind(node.name, node)
        return  # its body is its own scope; decorators and defaults bind nothing worth tracking
    if isinstance(node, ast.Lambda):
        return
    if isinstance(node, COMPREHENSIONS):
        for sub in ast.walk(node):  # walrus targets inside a comprehension bind in the enclosing scope
            if isinstance(sub, ast.NamedExpr):
                scope.bind(sub.target.id, sub.value)
        return
    if isinstance(node, ast.Global):
        scope.declared_global.update(node.names)
    elif isinstance(node, ast.Nonlocal):
        scope.declared_nonlocal.update(node.names)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            if alias.name != "*":
                scope.bind(alias.asname or alias.name.split(".")[0], alias)
        return
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            _bind_pairwise(scope, target, node.value)
        _bind(scope, node.value, None)
        return
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        _bind(scope, node.target, node.value if isinstance(node, ast.AnnAssign) and node.value else node)
        if node.value is not None:
            _bind(scope, node.value, None)
        return
    elif isinstance(node, ast.NamedExpr):
        scope.bind(node.target.id, node.value)
        _bind(scope, node.value, None)
        return
    elif isinstance(node, ast.Name):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            scope.bind(node.id, definer if definer is not None else node)
        return
    elif isinstance(node, ast.ExceptHandler) and node.name:
        scope.bind(node.name, node)
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        scope.bind(node.name, node)
    elif isinstance(node, ast.MatchMapping) and node.rest:
        scope.bind(node.rest, node)
    if isinstance(node, (ast.For, ast.AsyncFor)):
        _bind(scope, node.target, node)
        children: list[ast.AST] = [node.iter, *node.body, *node.orelse]
        for child in children:
            _bind(scope, child, None)
        return
    if isinstance(node, ast.withitem):
        _bind(scope, node.context_expr, None)
        if node.optional_vars is not None:
            _bind(scope, node.optional_vars, node.context_expr)
        return
    for child in ast.iter_child_nodes(node):
        _bind(scope, child, definer if isinstance(node, (ast.Tuple, ast.List, ast.Starred)) else None)


def _bind_pairwise(scope: Scope, target: ast.AST, value: ast.AST) -> None:
    """``a, b = x, y`` binds ``a`` to ``x`` and ``b`` to ``y`` (so ``f, n = (lambda: f()), 0`` has the lambda as
    the definer of ``f``); any other unpacking binds every name to the whole value."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
        for t, v in zip(target.elts, value.elts, strict=True):
            _bind_pairwise(scope, t, v)
    else:
        _bind(scope, target, value)


class Resolver(ast.NodeVisitor):
    """Walks code in its scopes and records, for every name that is read, the scope it resolves to.

    ``loads`` maps id(Name) -> (node, resolved scope or None, scope where it is read);
    ``scope_of`` maps id(def/lambda/class/comprehension) -> the scope of its body.
    """

    def __init__(self, module: Scope):
        self.scope = module
        self.loads: dict[int, tuple[ast.Name, Scope | None, Scope]] = {}
        self.scope_of: dict[int, Scope] = {}

    def _enter(self, kind: str, node: ast.AST) -> Scope:
        scope = Scope(kind, self.scope)
        self.scope_of[id(node)] = scope
        return scope

    def _in(self, scope: Scope, nodes) -> None:
        outer, self.scope = self.scope, scope
        for n in nodes:
            self.visit(n)
        self.scope = outer

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) or isinstance(node.ctx, ast.Del):
            self.loads[id(node)] = (node, self.scope.lookup(node.id), self.scope)

    def _arguments_outside(self, args: ast.arguments) -> None:
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(d)
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None and a.annotation is not None:
                self.visit(a.annotation)

    def _function(self, node, body: list[ast.AST]) -> None:
        scope = self._enter("function", node)
        a = node.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if arg is not None:
                scope.bind(arg.arg, arg)
        bind_block(scope, body)
        self._in(scope, body)

    def visit_FunctionDef(self, node) -> None:
        for d in node.decorator_list:
            self.visit(d)
        self._arguments_outside(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self._function(node, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._arguments_outside(node.args)
        self._function(node, [node.body])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for n in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(n)
        scope = self._enter("class", node)
        bind_block(scope, node.body)
        self._in(scope, node.body)

    def _comprehension(self, node, parts: list[ast.AST]) -> None:
        first, *rest = node.generators
        self.visit(first.iter)  # the first iterable is evaluated in the enclosing scope
        scope = self._enter("comprehension", node)
        for gen in node.generators:
            for target in ast.walk(gen.target):
                if isinstance(target, ast.Name):
                    scope.bind(target.id, gen)
        nodes = [first.target, *first.ifs]
        for gen in rest:
            nodes += [gen.target, gen.iter, *gen.ifs]
        self._in(scope, nodes + parts)

    def visit_ListComp(self, node) -> None:
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node) -> None:
        self._comprehension(node, [node.key, node.value])


def resolve(statements: list[ast.stmt]) -> tuple[Scope, Resolver]:
    """Resolve every name in ``statements`` taken as one module (the notebook's namespace)."""
    module = Scope("module", None)
    bind_block(module, statements)
    resolver = Resolver(module)
    for stmt in statements:
        resolver.visit(stmt)
    return module, resolver
