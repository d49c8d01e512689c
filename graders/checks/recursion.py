"""Recursion through any call path: a function that can reach its own binding.

A recursive call repeats Python work once per element, whatever route it takes: a direct call,
a lambda, an alias (``h = f``), a container (``(f,)[0](x)``), a method (``self.run``), ``self(...)``
on a module, or a class that builds itself. So the test is on bindings, not on call syntax: a
function (def, lambda or class) is recursive when its own binding is read anywhere in the code its
definition reaches, through the bindings that code reads in turn.
"""
from __future__ import annotations

import ast
import functools
from typing import Sequence

from graders.checks.scopes import FUNCTIONS, Resolver, Scope


def recursive_functions(module: Scope, resolver: Resolver, nodes: Sequence[ast.stmt]) -> list[tuple[ast.AST, str]]:
    """(definition, name) of every recursive function in ``nodes``.

    Calls through attributes count as calls of the reached classes' methods of that name, and
    ``self(...)`` as a call of their ``__call__``/``forward``; a class named in ``super(...)``,
    ``isinstance(...)`` or an annotation is not called."""
    scopes = [module] + list(resolver.scope_of.values())
    methods = {name: (id(s), name) for s in scopes if s.kind == "class" for name in s.names}
    calls_self = [methods[n] for n in ("__call__", "forward") if n in methods]
    not_calls: set[int] = set()
    for stmt in nodes:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and \
                    sub.func.id in ("super", "isinstance", "issubclass"):
                not_calls.update(id(n) for a in sub.args for n in ast.walk(a))
            for annotation in _annotations(sub):
                not_calls.update(id(n) for n in ast.walk(annotation))
    definers: dict[tuple[int, str], list[ast.AST]] = {}
    for s in scopes:
        for name, bound in s.names.items():
            definers[(id(s), name)] = bound

    @functools.lru_cache(maxsize=None)
    def edges(key: tuple[int, str]) -> frozenset:
        out = set()
        for d in definers.get(key, []):
            for sub in ast.walk(d):
                load = resolver.loads.get(id(sub))
                if id(sub) in not_calls:
                    continue
                if load is not None and load[1] is not None:
                    out.add((id(load[1]), load[0].id))  # load[0] is sub, the Name read
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "self":
                    out.update(calls_self)
                elif isinstance(sub, ast.Attribute) and sub.attr in methods and not sub.attr.startswith("__"):
                    out.add(methods[sub.attr])
        return frozenset(out)

    found: list[tuple[ast.AST, str]] = []
    for key, bound in definers.items():
        fn = next((d for d in bound if isinstance(d, FUNCTIONS + (ast.ClassDef,))), None)
        if fn is None:
            continue
        stack, seen = list(edges(key)), set()
        while stack:
            k = stack.pop()
            if k == key:
                found.append((fn, key[1]))
                break
            if k not in seen:
                seen.add(k)
                stack += edges(k)
    return found


def _annotations(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        found: list[ast.AST] = [arg.annotation for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                 if arg is not None and arg.annotation is not None]
        return found + ([node.returns] if node.returns is not None else [])
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []
