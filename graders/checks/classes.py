"""The rules for a class the student defines: what its body may define, what it may extend.

A class can make Python or torch call the student's code from places the checker does not follow:
``__getitem__``/``__iter__`` let Python walk its objects element by element (iteration); a Tensor
subclass, or a class defining ``__torch_function__``/``__torch_dispatch__``, runs its methods inside every
torch call made on its objects, the worker's own encoding and counting included; ``__reduce__``,
``__del__``, ``__init_subclass__`` and their kind run it from the interpreter's machinery; a metaclass or a
base the checker cannot resolve could do any of that. Those last are outside the subset.
"""
from __future__ import annotations

import ast
import builtins

from graders.checks import boundary
from graders.checks.finding import ITERATION, OUTSIDE
from graders.checks.library import LIBRARY_ROOTS, UNKNOWN, library_object

ITERABLE_DUNDERS = ("__getitem__", "__iter__", "__len__", "__next__")
_TENSOR_CLASS = "torch calls a Tensor subclass's methods from inside its own machinery, the grader's included"
_UNKNOWN_BASE = "the checker cannot tell what this base class does"


class ClassRules:
    """Checks one ``ClassDef`` at a time for the checker ``checker`` (graders.checks.subset._Checker)."""

    def __init__(self, checker):
        self.checker = checker

    def check(self, node: ast.ClassDef) -> None:
        for item in node.body:
            for name in _bound_names(item):
                if name in ITERABLE_DUNDERS:
                    self.checker.add(item, f"`{name}` in class `{node.name}`",
                                     "Python can walk its objects element by element (`list()`, `tuple()`, `for`)",
                                     ITERATION)
                elif name in boundary.HOOK_DUNDERS:
                    self.checker.add(item, f"`{name}` in class `{node.name}`", boundary.HOOK_DUNDERS[name], OUTSIDE)
        for keyword in node.keywords:
            if keyword.arg == "metaclass" or keyword.arg is None:
                self.checker.add(node, f"a metaclass for class `{node.name}`", _UNKNOWN_BASE, OUTSIDE)
        for base in node.bases:
            problem = self.base_problem(base)
            if problem:
                self.checker.add(node, f"class `{node.name}` based on `{ast.unparse(base)}`", problem, OUTSIDE)

    def base_problem(self, base: ast.expr) -> str | None:
        """Why ``base`` may not be extended, or None: the student's own classes, ``object``, exceptions,
        ``nn.Module`` and the typing constructs are fine; a Tensor class, a metaclass and anything the
        checker cannot resolve are not."""
        target = base.value if isinstance(base, ast.Subscript) else base  # Generic[T], NamedTuple
        q = self.checker.qual(target)
        if q is None:
            if isinstance(target, ast.Name):
                definers = self.checker.definers(target)
                if definers and all(isinstance(d, ast.ClassDef) for d in definers):
                    return None  # the student's own class, checked where it is defined
            return _UNKNOWN_BASE
        root, _, rest = q.partition(".")
        if root == "builtins":
            obj = getattr(builtins, rest, UNKNOWN)
        elif root in LIBRARY_ROOTS:
            obj = library_object(q)
        else:
            return _UNKNOWN_BASE
        if boundary.is_tensor_class(obj):
            return _TENSOR_CLASS
        if not boundary.plain_class_base(obj):
            return _UNKNOWN_BASE
        rule = boundary.classify(q, obj)
        return rule[1] if rule else None


def _bound_names(item: ast.stmt) -> list[str]:
    """Names a class-body statement binds: a def's name, assignment targets (``__getitem__ = lambda ...``)."""
    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [item.name]
    if isinstance(item, (ast.Assign, ast.AnnAssign)):
        targets = item.targets if isinstance(item, ast.Assign) else [item.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []
