"""Fixed-size iteration: a loop whose number of steps cannot grow with the input is vectorized-class work.

A loop or comprehension costs nothing when every iterable it walks is one of:

- a literal range of at most ``MAX_FIXED_ITEMS`` items (``range(4)``, ``range(1, 9, 2)``), or a range whose
  bounds are small constants and a tensor's number of dimensions (``range(x.ndim)``, ``range(1, x.dim())``,
  ``range(len(x.shape))``);
- a literal tuple, list or set of at most ``MAX_FIXED_ITEMS`` items (``((0, 0), (0, 1), (1, 0), (1, 1))``);
- a tensor's ``shape``, ``size()`` or ``stride()``, or a slice of one (``x.shape[1:]``);
- a parameter of the exercise's function that the exercise declares to be a shape, sizes, strides or a
  permutation (``Exercise.shape_params``: ``shape`` in ``nhwc_to_nchw_offsets(shape)``), read as it came in or
  rebound to a fixed-size copy of itself (``shape = list(shape)``, ``tuple(shape)``, ``[*shape]``; no other
  binding of the name), or a slice of one;
- a tensor made from those (``torch.tensor(shape)``, ``torch.as_tensor(perm)``), and what keeps its number of
  elements: size-keeping methods (``.flip(0)``, ``.cumprod(0)``, ``.long()``), arithmetic with numbers or other
  such tensors, and indexing by a slice, a number or such a tensor (so ``.tolist()`` of one is free);
- ``zip``, ``enumerate``, ``reversed``, ``sorted``, ``list``, ``tuple``, ``iter`` or ``map`` over those, and a
  comprehension or generator whose every ``for`` is over those;
- a name every binding of which (a plain ``name = ...``) is one of those, and, for a list or set, that no code
  changes in place.

The same iterables make ``zip``, ``map``, ``enumerate``, ``sum``, ``sorted``, ``min``/``max``, ``math.prod``
... free. Anything else can grow with the input and stays a finding: ``range(n)`` with ``n`` a parameter,
``range(x.shape[0])``, ``range(len(x))``, ``for row in x``.

A ``shape``/``size()``/``stride()`` of ``self``, ``cls`` or one of the student's own objects is not taken for a
tensor's, and none is in a program that gives anything an attribute or method of those names (``self.shape =
rows``, a class with a ``size`` method): the checker cannot tell what such an attribute holds.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence

from graders.checks.mutation import MUTATING_METHODS, root_name

# the most items a literal range, tuple or list may have for a loop over it to count as fixed-size
MAX_FIXED_ITEMS = 8
SHAPE_ATTRIBUTES = {"shape"}           # x.shape
SHAPE_METHODS = {"size", "stride"}     # x.size(), x.stride() (with an argument they are one number)
DIMS_ATTRIBUTES = {"ndim"}             # x.ndim
DIMS_METHODS = {"dim", "ndimension"}   # x.dim()
# builtins that walk their first argument and give as many items (or fewer)
_PASS_THROUGH = {"enumerate", "reversed", "sorted", "list", "tuple", "iter", "set", "frozenset"}
# builtins that iterate their arguments: which of the positional arguments they walk
ITERATED_ARGUMENTS = {
    "zip": slice(0, None), "map": slice(1, None), "filter": slice(1, None), "enumerate": slice(0, 1),
    "reversed": slice(0, 1), "sorted": slice(0, 1), "sum": slice(0, 1), "iter": slice(0, 1), "all": slice(0, 1),
    "any": slice(0, 1), "min": slice(0, 1), "max": slice(0, 1),
}
_MAX_DEPTH = 12
TENSOR_MAKERS = {"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor"}
# tensor methods whose result has as many elements as the tensor (or fewer)
SIZE_KEEPING = {"flip", "fliplr", "cumprod", "cumsum", "roll", "long", "int", "to", "clone", "contiguous", "abs",
                "neg", "reshape", "view", "flatten", "sort", "argsort", "detach", "cpu", "mul", "add", "sub",
                "div", "floor_divide", "remainder", "prod", "sum", "max", "min", "argmax", "argmin", "clamp",
                "clamp_min", "clamp_max", "pow", "float", "double", "diff", "flipud"}


class FixedSize:
    """Decides, for the checker ``checker`` (graders.checks.subset._Checker), whether iterating an expression
    takes a number of steps that cannot grow with the input."""

    def __init__(self, checker, nodes: list[ast.stmt], function: str = "", shape_params: Sequence[str] = ()):
        self.checker = checker
        self.changed = _changed_names(nodes)
        self.own_shapes = _defines_shape_names(nodes)
        self.function, self.shape_params = function, frozenset(shape_params)
        self._assumed: set[frozenset[int]] = set()  # shape parameters whose rebindings are being checked

    def iterable(self, node: ast.AST, depth: int = 0) -> bool:
        """Iterating ``node`` gives a fixed, small number of items."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return len(node.elts) <= MAX_FIXED_ITEMS and all(
                not isinstance(e, ast.Starred) or self.iterable(e.value, depth + 1) for e in node.elts)
        if self.shape(node) or self.fixed_tensor(node, depth):
            return True
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return all(not g.is_async and self.iterable(g.iter, depth + 1) for g in node.generators)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return self.iterable(node.value, depth + 1)
        if isinstance(node, ast.Call) and all(k.arg in ("strict", "key", "reverse") for k in node.keywords):
            builtin = self._builtin(node.func)
            if builtin == "range":
                return self.range_is_fixed(node)
            if builtin in _PASS_THROUGH or builtin in ("zip", "map", "filter"):
                return self.walks_fixed(node, builtin, depth)
            return False
        if isinstance(node, ast.Name):
            definers = self.checker.definers(node)
            return bool(definers) and all(self._fixed_binding(node.id, d, depth) for d in definers)
        return False

    def walks_fixed(self, call: ast.Call, builtin: str, depth: int = 0) -> bool:
        """``call`` (of the builtin ``builtin``) walks only fixed-size iterables."""
        if any(isinstance(a, ast.Starred) for a in call.args):
            return False
        walked = call.args[ITERATED_ARGUMENTS.get(builtin, slice(0, 1))]
        return bool(walked) and all(self.iterable(a, depth + 1) for a in walked)

    def range_is_fixed(self, call: ast.Call) -> bool:
        args = call.args
        if call.keywords or not 1 <= len(args) <= 3 or any(isinstance(a, ast.Starred) for a in args):
            return False
        values = [_int_constant(a) for a in args]
        if all(v is not None for v in values):
            try:
                return len(range(*values)) <= MAX_FIXED_ITEMS  # type: ignore[arg-type]
            except ValueError:  # a step of 0
                return False
        return all(v is not None and abs(v) <= MAX_FIXED_ITEMS or self.dims(a) for a, v in zip(args, values,
                                                                                                   strict=True))

    def dims(self, node: ast.AST, depth: int = 0) -> bool:
        """``node`` is a number of dimensions (or a small offset from one): ``x.ndim``, ``x.dim()``,
        ``len(x.shape)``, ``x.ndim - 1``."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, ast.Attribute) and node.attr in DIMS_ATTRIBUTES:
            return self._tensor_like(node.value)
        if isinstance(node, ast.Call) and not node.args and not node.keywords \
                and isinstance(node.func, ast.Attribute) and node.func.attr in DIMS_METHODS:
            return self._tensor_like(node.func.value)
        if isinstance(node, ast.Call) and self._builtin(node.func) == "len" and len(node.args) == 1:
            return self.iterable(node.args[0], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            sides = (node.left, node.right)
            small = [_int_constant(s) for s in sides]
            return all(self.dims(s, depth + 1) or v is not None and abs(v) <= MAX_FIXED_ITEMS
                       for s, v in zip(sides, small, strict=True))
        if isinstance(node, ast.Name):
            definers = self.checker.definers(node)
            return bool(definers) and all(_plain_binding(node.id, d, self.checker.parent)
                                          and self.dims(d, depth + 1) for d in definers)
        return False

    def shape(self, node: ast.AST) -> bool:
        """``x.shape``, ``x.size()``, ``x.stride()`` of anything but the student's own objects, and a declared shape
        parameter of the exercise's function (``shape_param``)."""
        if isinstance(node, ast.Name):
            return self.shape_param(node)
        if isinstance(node, ast.Attribute) and node.attr in SHAPE_ATTRIBUTES:
            return self._tensor_like(node.value)
        if isinstance(node, ast.Call) and not node.args and not node.keywords \
                and isinstance(node.func, ast.Attribute) and node.func.attr in SHAPE_METHODS:
            return self._tensor_like(node.func.value)
        return False

    def shape_param(self, node: ast.Name, depth: int = 0) -> bool:
        """``node`` reads a parameter of the exercise's function that the exercise declares fixed-size
        (``Exercise.shape_params``), and every other binding of the name in that scope is a plain ``name = ...``
        whose value is fixed-size when the name is (``shape = list(shape)``, ``tuple(shape)``, ``[*shape]``)."""
        if node.id not in self.shape_params or depth > _MAX_DEPTH:
            return False
        definers = self.checker.definers(node)
        key = frozenset(id(d) for d in definers)
        if key in self._assumed:  # inside a rebinding of this very name: it reads the value before it
            return True
        params = [d for d in definers if isinstance(d, ast.arg)]
        rebindings = [d for d in definers if not isinstance(d, ast.arg)]
        if len(params) != 1 or params[0].arg != node.id:
            return False
        signature = self.checker.parent.get(id(params[0]))
        function = self.checker.parent.get(id(signature))
        if not (isinstance(function, ast.FunctionDef) and function.name == self.function
                and isinstance(signature, ast.arguments) and params[0] not in (signature.vararg, signature.kwarg)):
            return False
        self._assumed.add(key)
        try:
            return all(self._fixed_binding(node.id, d, depth) and not (
                node.id in self.changed and self._grows_in_place(d)) for d in rebindings)
        finally:
            self._assumed.discard(key)

    def _grows_in_place(self, value: ast.AST) -> bool:
        """``value`` makes a list or set, which code that changes the name in place could grow."""
        return isinstance(value, (ast.List, ast.Set, ast.ListComp, ast.SetComp)) or isinstance(value, ast.Call) \
            and self._builtin(value.func) in ("list", "set")

    def fixed_tensor(self, node: ast.AST, depth: int = 0) -> bool:
        """A tensor with a fixed, small number of elements: made (``TENSOR_MAKERS``) from a fixed-size iterable,
        then kept so (the module's docstring)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
            if self.checker.qual(node.func) in TENSOR_MAKERS:
                return len(node.args) == 1 and self.iterable(node.args[0], depth + 1)
            if isinstance(node.func, ast.Attribute) and node.func.attr in SIZE_KEEPING:
                return self.fixed_tensor(node.func.value, depth + 1) and all(
                    self._small(a, depth) for a in (*node.args, *(k.value for k in node.keywords)))
            return False
        if isinstance(node, ast.BinOp):
            sides = (node.left, node.right)
            return any(self.fixed_tensor(s, depth + 1) for s in sides) and all(self._small(s, depth) for s in sides)
        if isinstance(node, ast.UnaryOp):
            return self.fixed_tensor(node.operand, depth + 1)
        if isinstance(node, ast.Subscript):
            index = node.slice
            return self.fixed_tensor(node.value, depth + 1) and (
                isinstance(index, ast.Slice) or _int_constant(index) is not None or self._small(index, depth))
        if isinstance(node, ast.Name):
            definers = self.checker.definers(node)
            return bool(definers) and all(_plain_binding(node.id, d, self.checker.parent)
                                          and self.fixed_tensor(d, depth + 1) for d in definers)
        return False

    def _small(self, node: ast.AST, depth: int) -> bool:
        """An argument that cannot make a fixed tensor grow: a constant, a dtype or axis name, a number of
        dimensions, or a fixed tensor."""
        return isinstance(node, ast.Constant) or isinstance(node, ast.Attribute) and \
            self.checker.qual(node) is not None or self.dims(node, depth + 1) or self.fixed_tensor(node, depth + 1)

    def _tensor_like(self, node: ast.AST) -> bool:
        """Not ``self``/``cls``, a class of the student's or an instance of one: there ``shape`` may be anything.
        A program that gives anything a ``shape``, ``size``, ``stride``, ``ndim`` or ``dim`` of its own trusts none."""
        if self.own_shapes:
            return False
        root = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if isinstance(root, ast.Name):
            if root.id in ("self", "cls"):
                return False
            definers = self.checker.definers(root)
            if definers and any(self.checker._own_definer(d) for d in definers):
                return False
        return True

    def _builtin(self, func: ast.AST) -> str | None:
        q = self.checker.qual(func)
        return q[len("builtins."):] if isinstance(func, ast.Name) and q == f"builtins.{func.id}" else None

    def _fixed_binding(self, name: str, definer: ast.AST, depth: int) -> bool:
        if not _plain_binding(name, definer, self.checker.parent):
            return False
        if isinstance(definer, (ast.List, ast.Set)) and name in self.changed:
            return False  # a list that grows (`PAIRS.append(...)`) is not fixed
        return self.iterable(definer, depth + 1)


def _plain_binding(name: str, definer: ast.AST, parent: dict[int, ast.AST]) -> bool:
    """``definer`` is the whole value of a plain ``name = ...`` (``name: T = ...``, ``(name := ...)``), not one
    side of an unpacking."""
    above = parent.get(id(definer))
    if isinstance(above, ast.Assign) and above.value is definer:
        return any(isinstance(t, ast.Name) and t.id == name for t in above.targets)
    if isinstance(above, (ast.AnnAssign, ast.NamedExpr)) and above.value is definer:
        return isinstance(above.target, ast.Name) and above.target.id == name
    return False


def _int_constant(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_constant(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _changed_names(nodes: list[ast.stmt]) -> frozenset[str]:
    """Names changed in place anywhere in ``nodes``, in any scope (by name: a list of that name anywhere is not
    taken as fixed)."""
    changed: set[str] = set()
    for stmt in nodes:
        for node in ast.walk(stmt):
            target = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and (node.func.attr in MUTATING_METHODS or node.func.attr.endswith("_")):
                target = node.func.value
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                target = node
            elif isinstance(node, ast.AugAssign):
                target = node.target
            elif isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                                     and node.func.id in {*ITERATED_ARGUMENTS, *_PASS_THROUGH, "len"}):
                for a in node.args:  # passed to a function that may change it
                    if isinstance(a, ast.Name):
                        changed.add(a.id)
            name = root_name(target) if target is not None else None
            if name:
                changed.add(name)
    return frozenset(changed)


def _defines_shape_names(nodes: list[ast.stmt]) -> bool:
    """Some code of the program assigns an attribute named like a tensor's shape (``self.shape = x``,
    ``g.size = ...``) or a class defines one (a method ``size``, a class attribute ``shape``)."""
    names = SHAPE_ATTRIBUTES | SHAPE_METHODS | DIMS_ATTRIBUTES | DIMS_METHODS
    for stmt in nodes:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.attr in names:
                return True
            if isinstance(node, ast.ClassDef):
                scope = ast.Module(body=node.body, type_ignores=[])
                bound = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                bound |= {t.id for n in ast.walk(scope) if isinstance(n, (ast.Assign, ast.AnnAssign))
                          for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
                if bound & names:
                    return True
    return False
