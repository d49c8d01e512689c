"""The rules for a call: the builtins and library calls that iterate in Python or run a string as code.

``min``/``max`` over one iterable or with ``key=``, ``.sort(key=...)`` and ``math.prod``/``math.fsum`` over
anything but a fixed-size iterable (a shape, a short literal: graders.checks.fixed) iterate in Python;
``vmap(..., chunk_size=...)`` repeats the function once per chunk.
``x.type("torch.DoubleTensor")`` imports the module its string names, and a format string that reads
attributes (``'{0.__class__}'.format(x)``) evaluates a string: both are outside the subset.
"""
from __future__ import annotations

import ast
import string

from graders.checks import boundary
from graders.checks.finding import ITERATION, OUTSIDE
from graders.checks.library import UNKNOWN, library_object

# math functions that walk a Python iterable: fine over a shape, iteration over a tensor
MATH_ITERATING = {"math.prod", "math.fsum", "math.sumprod", "math.dist"}
VMAPS = {"torch.vmap", "torch.func.vmap"}


class CallRules:
    """Checks one ``Call`` at a time for the checker ``checker`` (graders.checks.subset._Checker)."""

    def __init__(self, checker):
        self.checker = checker

    def check(self, node: ast.Call) -> None:
        add = self.checker.add
        keywords = {k.arg for k in node.keywords}
        f = node.func
        q = self.checker.qual(f)
        if isinstance(f, ast.Name) and f.id == "type" and len(node.args) == 3 and q == "builtins.type":
            add(node, "`type(name, bases, dict)`", boundary.REFLECTION, OUTSIDE)
        elif isinstance(f, ast.Name) and f.id in ("min", "max") and q == f"builtins.{f.id}":
            single = len(node.args) == 1 and not any(isinstance(a, ast.Starred) for a in node.args)
            fixed = single and self.checker.fixed.iterable(node.args[0])
            if "key" in keywords and not fixed:
                add(node, f"`{f.id}(..., key=...)`", "it calls Python code once per element", ITERATION)
            elif single and not fixed and "key" not in keywords:
                add(node, f"`{f.id}` over one iterable", f"it walks the elements in Python; use `torch.{f.id}`",
                    ITERATION)
        elif isinstance(f, ast.Attribute) and f.attr == "sort" and "key" in keywords:
            add(node, "`.sort(key=...)`", "it calls Python code once per element; use `torch.sort`", ITERATION)
        elif q in MATH_ITERATING and not all(self.checker.fixed.iterable(a) for a in node.args):
            add(node, f"`{q}` over an iterable", "it walks the elements in Python; use the torch reduction", ITERATION)
        elif isinstance(f, ast.Attribute) and f.attr == "type" and (node.args or "dtype" in keywords):
            arg = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "dtype")
            if not self._names_a_dtype(arg):
                add(node, "`.type(...)` with a name", "given a string, it imports the module the string names; "
                    "pass a torch dtype (`x.to(torch.float64)`)", OUTSIDE)
        elif isinstance(f, ast.Attribute) and f.attr in ("format", "format_map"):
            self._format(node, f)
        if any(k.arg == "chunk_size" and not _is_none(k.value) for k in node.keywords):
            add(node, "`chunk_size=`", "vmap then runs the function once per chunk, in Python", ITERATION)
        elif q in VMAPS and None in keywords:
            add(node, "`vmap(..., **options)`", "the checker cannot see vmap's options (`chunk_size` repeats the "
                "function in Python)", ITERATION)

    def _names_a_dtype(self, node: ast.AST) -> bool:
        import torch  # noqa: PLC0415  (lazy: only when checking)
        if _is_none(node) or isinstance(node, ast.Attribute) and node.attr == "dtype":
            return True
        q = self.checker.qual(node)
        obj = library_object(q) if q else UNKNOWN
        return isinstance(obj, torch.dtype) or type(obj).__name__ == "tensortype"

    def _format(self, node: ast.Call, f: ast.Attribute) -> None:
        """``'{0.__class__}'.format(x)`` reads attributes that a string names: a string run as code. A template
        that is a literal (or a literal repeated, ``'{} ' * n``) is read here; one built at run time is outside,
        except a plain name or attribute (a template passed in is not followed: it can read, never call)."""
        template = f.value
        if self.checker.qual(template) == "builtins.str":  # str.format(template, ...)
            if not node.args:
                return
            template = node.args[0]
        literals = _literals(template)
        if literals is None:
            if not isinstance(template, (ast.Name, ast.Attribute)):
                self.checker.add(node, f"`.{f.attr}` on a string built at run time", boundary.STRINGS, OUTSIDE)
        elif any(field and any(c in field for c in ".[") for text in literals for field in _format_fields(text)):
            self.checker.add(node, "a format string that reads attributes or items", boundary.STRINGS, OUTSIDE)


def _literals(node: ast.AST) -> list[str] | None:
    """The string literals a template is made of, when it is a literal or a literal repeated; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for side in (node.left, node.right):
            found = _literals(side)
            if found is not None:
                return found
    return None


def _format_fields(template: str) -> list[str]:
    try:
        return [field or "" for _, field, _, _ in string.Formatter().parse(template)]
    except ValueError:
        return []


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
