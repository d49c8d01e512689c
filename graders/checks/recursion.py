"""Recursion through any call path: a function that can reach its own binding.

A recursive call repeats Python work once per element, whatever route it takes: a direct call,
a lambda, an alias (``h = f``), a container (``(f,)[0](x)``), a method (``self.run``), ``self(...)``
on a module, a class that builds itself, or a function stored into an item or attribute that reads
that item or attribute again (``OPS['f'] = lambda x: OPS['f'](x)``, ``obj.f = lambda: obj.f()``). So
the test is on bindings, not on call syntax: a function (def, lambda or class) is recursive when its own
binding is read anywhere in the code its definition reaches, through the bindings that code reads in turn.
"""
from __future__ import annotations

import ast
import functools
from typing import Sequence

from graders.checks.scopes import FUNCTIONS, Resolver, Scope

Key = tuple[object, str]  # (id of a scope, name), or ("slot", "attr:f" / "item:'f'") for a stored function


def _slot(target: ast.AST) -> str | None:
    """The slot a function is stored into or read from: ``x.f`` -> "attr:f", ``x['f']`` -> "item:'f'"."""
    if isinstance(target, ast.Attribute):
        return f"attr:{target.attr}"
    if isinstance(target, ast.Subscript):
        key = target.slice
        return f"item:{ast.dump(key)}" if isinstance(key, ast.Constant) else "item:?"
    return None


def recursive_functions(module: Scope, resolver: Resolver, nodes: Sequence[ast.stmt]) -> list[tuple[ast.AST, str]]:
    """(definition, name) of every recursive function in ``nodes``.

    Calls through attributes count as calls of the reached classes' methods of that name (every class
    that defines it), and ``self(...)`` as a call of their ``__call__``/``forward``; a class named in
    ``super(...)``, ``isinstance(...)`` or an annotation is not called. A function stored into an item or
    attribute is reached by every read of an item with the same constant key (any key, when it is not a
    constant) or of an attribute with the same name."""
    scopes = [module] + list(resolver.scope_of.values())
    methods: dict[str, list[Key]] = {}
    for s in scopes:
        if s.kind == "class":
            for name in s.names:
                methods.setdefault(name, []).append((id(s), name))
    calls_self = [k for n in ("__call__", "forward") for k in methods.get(n, [])]
    not_calls: set[int] = set()
    definers: dict[Key, list[ast.AST]] = {}
    for s in scopes:
        for name, bound in s.names.items():
            definers[(id(s), name)] = list(bound)
    for stmt in nodes:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and \
                    sub.func.id in ("super", "isinstance", "issubclass"):
                not_calls.update(id(n) for a in sub.args for n in ast.walk(a))
            for annotation in _annotations(sub):
                not_calls.update(id(n) for n in ast.walk(annotation))
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    slot = _slot(target)
                    if slot is not None:
                        definers.setdefault(("slot", slot), []).append(sub.value)
    slots = {k[1] for k in definers if k[0] == "slot"}

    def read_slots(node: ast.AST) -> list[Key]:
        slot = _slot(node)
        if slot is None or not isinstance(getattr(node, "ctx", None), ast.Load):
            return []
        if slot.startswith("item:"):  # an unknown key may be any stored key, and a stored unknown key any read
            found = [s for s in slots if s.startswith("item:") and (slot == "item:?" or s in (slot, "item:?"))]
            return [("slot", s) for s in found]
        return [("slot", slot)] if slot in slots else []

    @functools.lru_cache(maxsize=None)
    def edges(key: Key) -> frozenset:
        out: set[Key] = set()
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
                    out.update(methods[sub.attr])
                out.update(read_slots(sub))
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
                found.append((fn, _shown(key)))
                break
            if k not in seen:
                seen.add(k)
                stack += edges(k)
    return found


def _shown(key: Key) -> str:
    if key[0] != "slot":
        return key[1]
    kind, _, what = key[1].partition(":")
    return f".{what}" if kind == "attr" else "a stored function"


def _annotations(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = node.args
        found: list[ast.AST] = [arg.annotation for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                                if arg is not None and arg.annotation is not None]
        return found + ([node.returns] if node.returns is not None else [])
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []
