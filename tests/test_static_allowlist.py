"""The allowlist, walked (issue 18 A): every callable of the checked subset that can run the student's code or
strings where the checker cannot follow is a finding of the right kind, and honest code has none.

The walk itself is a test: it enumerates the allowed modules (and Tensor's and nn.Module's methods) again and
fails on any callable that takes a function or whose own code evaluates, compiles, imports, opens or pickles,
unless graders.checks.boundary flags it or lists it as reviewed. A new higher-order op in a torch upgrade
fails here until someone decides what it is.
"""
import ast
import importlib
import inspect
import re
import textwrap
import types

import pytest
import torch

from graders.checks import boundary
from graders.checks.finding import FORM, ITERATION, OUTSIDE
from graders.checks.library import ALLOWED_MODULES, UNKNOWN, library_object
from graders.checks.submission import grade_submission
from graders.checks.subset import ELEMENT_METHODS, TORCH_REACH, check_program

from tests.testkit import program

CALLABLE_PARAM = re.compile(r"fn$|func|function|hook|callback|closure")
PRIMITIVE_NAMES = {"eval", "exec", "compile", "__import__", "open"}
PRIMITIVE_ATTRS = {"_import_dotted_name", "import_module", "_eval_type", "_evaluate", "_hop_compile_and_call",
                   "compile", "load", "loads"}


def takes_code(obj) -> bool:
    """A callable that takes a function, or whose own source (a class: its methods') calls a primitive that runs
    strings or files."""
    try:
        if any(CALLABLE_PARAM.search(p) for p in inspect.signature(obj).parameters):
            return True
    except (TypeError, ValueError):
        pass
    if isinstance(obj, type):
        return any(_calls_primitive(m) for m in vars(obj).values() if inspect.isfunction(m))
    return inspect.isfunction(obj) and _calls_primitive(obj)


def _calls_primitive(fn) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in PRIMITIVE_NAMES | PRIMITIVE_ATTRS:
                return True
            if isinstance(f, ast.Attribute) and f.attr in PRIMITIVE_ATTRS and ast.unparse(f.value) != "self":
                return True
    return False


def allowlist():
    """(qualified name, attribute name, object) of every public callable of the allowed modules and classes."""
    for name in sorted(ALLOWED_MODULES - {"__future__"}):
        module = importlib.import_module(name)
        for attr in sorted(dir(module)):
            obj = getattr(module, attr, None)
            if not attr.startswith("_") and callable(obj) and not isinstance(obj, types.ModuleType):
                yield f"{name}.{attr}", attr, obj
    for cls, name in ((torch.Tensor, "torch.Tensor"), (torch.nn.Module, "torch.nn.Module")):
        for attr in sorted(dir(cls)):
            obj = getattr(cls, attr, None)
            if not attr.startswith("_") and callable(obj):
                yield f"{name}.{attr}", attr, obj


def decided(qual: str, attr: str, obj) -> bool:
    return bool(boundary.classify(qual, obj) or boundary.attribute_rule(attr) or attr in boundary.ITERATING_ATTRIBUTES
                or attr in ELEMENT_METHODS or attr in TORCH_REACH or qual in boundary.REVIEWED)


def test_every_callable_of_the_allowlist_that_takes_code_is_decided():
    undecided = [q for q, attr, obj in allowlist() if takes_code(obj) and not decided(q, attr, obj)]
    assert undecided == [], f"review these (graders.checks.boundary): {undecided}"


def test_the_walk_sees_callbacks_and_string_primitives():
    def planted_callback(fn):
        return fn()

    def planted_eval(text):
        return eval(text)

    assert takes_code(planted_callback) and takes_code(planted_eval)
    assert not takes_code(torch.add) and not takes_code(torch.nn.functional.relu)
    assert not decided("torch.planted", "planted", planted_callback)
    assert decided("torch.load", "load", torch.load) and decided("torch.vmap", "vmap", torch.vmap)


def test_every_listed_name_exists():
    listed = (list(boundary.OUTSIDE_CALLABLES) + list(boundary.ITERATING_CALLABLES)
              + sorted(boundary.SAFE_TORCH_CLASSES) + list(boundary.REVIEWED))
    missing = [q for q in listed if library_object(q) is UNKNOWN]
    assert missing == [], f"renamed or removed in this torch: {missing}"
    assert library_object("torch.no_such_function") is UNKNOWN


def findings(source: str, own_modules=frozenset()):
    tree = ast.parse(source)
    return check_program(tree.body, ["cell"] * len(tree.body), own_modules=frozenset(own_modules))


TI = "import torch\nimport torch.nn.functional as F\nimport typing\nimport math\nimport einops\n"

# (source, the finding's `what` (a part of it), its kind)
ATTACKS = {
    # strings evaluated as code
    "get_type_hints": ("def f(a: 'len([x for x in range(9)])'):\n    return typing.get_type_hints(g)\n",
                       "`typing.get_type_hints`", OUTSIDE),
    "get_type_hints imported": ("from typing import get_type_hints as hints\nx = hints\n",
                                "import of `get_type_hints` from `typing`", OUTSIDE),
    "ForwardRef": ("r = typing.ForwardRef('__import__(\"os\")')\n", "`typing.ForwardRef`", OUTSIDE),
    "Tensor.type with a string": ("def f(a):\n    return a.type('os.path')\n", "`.type(...)` with a name", OUTSIDE),
    "format reads attributes": ("def f(a):\n    return '{0.__class__.__init__}'.format(a)\n",
                                "a format string that reads attributes", OUTSIDE),
    "str.format with the template first": ("def f(a):\n    return str.format('{0.__class__}', a)\n",
                                           "a format string that reads attributes", OUTSIDE),
    "format of a built string": ("def f(a):\n    return ('{0.' + '__class__}').format(a)\n",
                                 "on a string built at run time", OUTSIDE),
    # hooks and callbacks
    "Tensor.register_hook": ("def f(a):\n    a.register_hook(print)\n    return a\n", "`.register_hook`", OUTSIDE),
    "post accumulate hook": ("def f(a):\n    a.register_post_accumulate_grad_hook(print)\n    return a\n",
                             "`.register_post_accumulate_grad_hook`", OUTSIDE),
    "forward hook": ("m = torch.nn.Identity()\nm.register_forward_hook(lambda *a: None)\n",
                     "`.register_forward_hook`", OUTSIDE),
    "forward pre hook": ("m = torch.nn.Identity()\nm.register_forward_pre_hook(lambda *a: None)\n",
                         "`.register_forward_pre_hook`", OUTSIDE),
    "backward hook": ("m = torch.nn.Identity()\nm.register_full_backward_hook(lambda *a: None)\n",
                      "`.register_full_backward_hook`", OUTSIDE),
    "state dict hook": ("m = torch.nn.Identity()\nm.register_load_state_dict_post_hook(print)\n",
                        "`.register_load_state_dict_post_hook`", OUTSIDE),
    "grad_fn prehook": ("def f(a):\n    a.grad_fn.register_prehook(print)\n    return a\n",
                        "`.register_prehook`", OUTSIDE),
    "Module.apply": ("def f(a):\n    torch.nn.Identity().apply(print)\n    return a\n", "`.apply`", ITERATION),
    # higher-order ops
    "while_loop": ("def f(a):\n    return torch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x), (0, a))\n",
                   "`torch.while_loop`", OUTSIDE),
    "cond": ("def f(a):\n    return torch.cond(a.sum() > 0, lambda x: x, lambda x: -x, (a,))\n", "`torch.cond`",
             OUTSIDE),
    "fork and wait": ("def f(a):\n    return torch.wait(torch.fork(torch.neg, a))\n", "`torch.fork`", OUTSIDE),
    "vmap chunk_size": ("def f(a):\n    return torch.vmap(torch.neg, chunk_size=1)(a)\n", "`chunk_size=`", ITERATION),
    "vmap options hidden": ("def f(a, **kw):\n    return torch.vmap(torch.neg, **kw)(a)\n", "`vmap(..., **options)`",
                            ITERATION),
    "rest of torch.func": ("def f(a):\n    return torch.func.grad(torch.sum)(a)\n", "`.func`", OUTSIDE),
    "import from torch.func": ("from torch.func import jacrev\n", "import of `torch.func`", OUTSIDE),
    # torch's own dispatch: __torch_function__, Tensor subclasses, the dispatcher
    "__torch_function__": ("class S:\n    @classmethod\n    def __torch_function__(cls, func, types, args=(), kw=None):\n"
                           "        return func(*args)\n", "`__torch_function__` in class `S`", OUTSIDE),
    "__torch_dispatch__": ("class S:\n    __torch_dispatch__ = None\n", "`__torch_dispatch__` in class `S`", OUTSIDE),
    "Tensor subclass": ("class S(torch.Tensor):\n    pass\n", "class `S` based on `torch.Tensor`", OUTSIDE),
    "Parameter subclass": ("class S(torch.nn.Parameter):\n    pass\n", "based on `torch.nn.Parameter`", OUTSIDE),
    "aliased Tensor base": ("T = torch.Tensor\nclass S(T):\n    pass\n", "class `S` based on `T`", OUTSIDE),
    "base from a call": ("class S(type(torch.ones(1))):\n    pass\n", "based on `type(torch.ones(1))`", OUTSIDE),
    "metaclass": ("class A(metaclass=type):\n    pass\n", "a metaclass for class `A`", OUTSIDE),
    "as_subclass": ("def f(a):\n    return a.as_subclass(torch.Tensor)\n", "`.as_subclass`", OUTSIDE),
    "handle_torch_function": ("x = F.handle_torch_function\n", "`F.handle_torch_function`", OUTSIDE),
    "DisableTorchFunction": ("def f(a):\n    with torch.DisableTorchFunction():\n        return a\n",
                             "`torch.DisableTorchFunction`", OUTSIDE),
    "dispatch key guard": ("g = torch.ExcludeDispatchKeyGuard(torch.DispatchKeySet(torch.DispatchKey.Python))\n",
                           "`torch.ExcludeDispatchKeyGuard`", OUTSIDE),
    "dispatch key through torch.types": ("k = torch.types.DispatchKey\n", "`torch.types.DispatchKey`", OUTSIDE),
    "JIT class": ("m = torch.ScriptModule\n", "`torch.ScriptModule`", OUTSIDE),
    "interpreter hooks": ("class P:\n    def __reduce_ex__(self, protocol):\n        return (print, ())\n"
                          "    def __del__(self):\n        pass\n", "`__reduce_ex__` in class `P`", OUTSIDE),
    # files and pickles
    "torch.load": ("def f(a):\n    return torch.load('x.pt')\n", "`torch.load`", OUTSIDE),
    "torch.save": ("def f(a):\n    torch.save(a, 'x.pt')\n    return a\n", "`torch.save`", OUTSIDE),
    "torch.from_file": ("def f(a):\n    return torch.from_file('x', size=3)\n", "`torch.from_file`", OUTSIDE),
    "storage from_file": ("def f(a):\n    return a.untyped_storage().from_file('x')\n", "`.from_file`", OUTSIDE),
    "share_memory_": ("def f(a):\n    return a.share_memory_()\n", "`.share_memory_`", OUTSIDE),
    "file reader": ("r = torch.PyTorchFileReader\n", "`torch.PyTorchFileReader`", OUTSIDE),
    "site's license printer": ("def f(a):\n    license()\n    return a\n", "`license`", OUTSIDE),
    # global settings
    "set_flush_denormal": ("torch.set_flush_denormal(True)\n", "`torch.set_flush_denormal`", OUTSIDE),
    "set_float32_matmul_precision": ("torch.set_float32_matmul_precision('medium')\n",
                                     "`torch.set_float32_matmul_precision`", OUTSIDE),
    # monkeypatching what the student did not define
    "torch.stack = f": ("def g(*a):\n    return a\ntorch.stack = g\n", "assignment to `torch.stack`", OUTSIDE),
    "torch.Tensor.add = f": ("torch.Tensor.add = lambda self, o: self\n", "assignment to `torch.Tensor.add`", OUTSIDE),
    "F.relu = ...": ("F.relu = torch.neg\n", "assignment to `F.relu`", OUTSIDE),
    "through an alias": ("m = torch.nn\nm.functional.relu = torch.neg\n", "assignment to `m.functional.relu`",
                         OUTSIDE),
    "type(x).add = f": ("def f(a):\n    type(a).add = torch.neg\n    return a\n", "assignment to `type(a).add`",
                        OUTSIDE),
    "del torch.stack": ("del torch.stack\n", "deletion of `torch.stack`", OUTSIDE),
    "augmented": ("math.pi += 1\n", "assignment to `math.pi`", OUTSIDE),
    # the allowlist's modules, exactly
    "einops tests": ("from einops.tests.run_tests import Popen\n", "import of `einops.tests.run_tests`", OUTSIDE),
    "einops other framework": ("import einops.layers.tensorflow\n", "import of `einops.layers.tensorflow`", OUTSIDE),
    "einops.asnumpy": ("def f(a):\n    return einops.asnumpy(a)\n", "`einops.asnumpy`", ITERATION),
    "math.prod over a tensor": ("def f(a):\n    return math.prod(a)\n", "`math.prod` over an iterable", ITERATION),
    "math.fsum over a tensor": ("def f(a):\n    return math.fsum(a)\n", "`math.fsum` over an iterable", ITERATION),
    "torch.onnx": ("def f(a):\n    return (torch,)[0].onnx\n", "`.onnx`", OUTSIDE),
    # an origin hidden in a container or a parameter: the name still tells
    "torch.load from a container": ("def f(a):\n    return (torch,)[0].load('x')\n", "`.load`", OUTSIDE),
    "torch.cond through a default": ("def f(a, t=torch):\n    return t.cond(a.sum() > 0, abs, abs, (a,))\n",
                                     "`.cond`", OUTSIDE),
    "get_type_hints from a container": ("def f(a):\n    return [typing][0].get_type_hints(f)\n",
                                        "`.get_type_hints`", OUTSIDE),
    "store through a container alias": ("t = (torch,)[0]\nt.stack = len\n", "assignment to `t.stack`", OUTSIDE),
    "store through a parameter": ("def f(a, m=F):\n    m.relu = abs\n    return a\n", "assignment to `m.relu`",
                                  OUTSIDE),
    # a module of the student's own
    "own module": ("import helpers\ndef f(a):\n    return helpers.outer(a)\n", "import of your own module `helpers`",
                   FORM),
    "own module reaching out": ("import helpers\ndef f(a):\n    return helpers.torch.sys\n", "`.sys`", OUTSIDE),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_is_a_finding_of_its_kind(name):
    source, what, kind = ATTACKS[name]
    found = findings(TI + source, own_modules={"helpers"})
    assert any(what in f.what and f.kind == kind for f in found), f"{name}: {found}"


def test_an_own_module_import_is_one_finding_not_an_outside_one():
    found = findings("import helpers\nfrom helpers import outer\n", own_modules={"helpers"})
    assert [(f.line, f.kind) for f in found] == [(1, FORM), (2, FORM)]
    assert [f.kind for f in findings("import helpers\n")] == [OUTSIDE]  # not the student's: a foreign module


HONEST = {
    "vmap": "def f(a):\n    return torch.vmap(lambda r: r[:, None] * r[None, :])(a)\n",
    "vmap in_dims": "def f(a, b):\n    return torch.vmap(torch.dot, in_dims=(0, None), chunk_size=None)(a, b)\n",
    "torch.func.vmap": "def f(a):\n    return torch.func.vmap(torch.outer)(a, a)\n",
    "from torch.func import vmap": "from torch.func import vmap\ndef f(a):\n    return vmap(torch.outer)(a, a)\n",
    "nn.Module subclass": "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                          "        self.scale = 2.0\n        self.mean = None\n    def forward(self, x):\n"
                          "        return x * self.scale\ndef f(a):\n    return M()(a)\n",
    "own base class": "class Base:\n    def run(self, x):\n        return x\nclass Child(Base):\n    pass\n",
    "typing constructs": "T = typing.TypeVar('T')\nclass Box(typing.Generic[T]):\n    pass\n"
                         "class Pair(typing.NamedTuple):\n    a: int\n    b: int\n"
                         "def f(x: 'torch.Tensor', y: typing.Optional[torch.Tensor] = None) -> 'torch.Tensor':\n"
                         "    return x\n",
    "exception class": "class ShapeError(ValueError):\n    pass\ndef f(a):\n    if a.dim() != 2:\n"
                       "        raise ShapeError('2-d please')\n    return a\n",
    "dtype conversions": "def f(a):\n    return a.type(torch.float64) + a.type(a.dtype) + a.to(torch.float64) + a.type()\n",
    "math over shapes": "def f(a):\n    return a.reshape(math.prod(a.shape)) * math.prod(a.shape[1:]) + math.sqrt(2)\n",
    "format strings": "def f(a):\n    msg = '{} rows, {:.2f} mean'.format(a.shape[0], 1.0)\n"
                      "    row = ('{:.3f} ' * a.shape[1]).format(*a.shape) + str.format('{}', 1)\n"
                      "    return a if msg and row else a\n",
    "store on own objects": "class Cfg:\n    pass\ncfg = Cfg()\ncfg.shift = 1.0\nCfg.default = 2\n"
                            "def f(a):\n    a.note = 'tensors take attributes'\n    return a + cfg.shift\n",
    "library classes": "def f(a):\n    eps = torch.finfo(a.dtype).eps\n    n = torch.Size([2, 3]).numel()\n"
                       "    g = torch.Generator()\n    return a + eps * n\n",
    "contexts": "@torch.no_grad()\ndef f(a):\n    with torch.inference_mode(), torch.enable_grad():\n        return a.clone()\n",
    "parameter instance": "w = torch.nn.Parameter(torch.ones(3))\ndef f(a):\n    return a * w\n",
    "einops": "from einops import rearrange, reduce, repeat, pack, einsum\nfrom einops.layers.torch import Rearrange\n"
              "def f(a):\n    return reduce(rearrange(a, 'b c -> c b'), 'c b -> c', 'max')\n",
    "isinstance of library classes": "def f(a):\n    assert isinstance(a, torch.Tensor) and a.dtype in (torch.float32,)\n"
                                     "    return a\n",
    "print options": "torch.set_printoptions(precision=3)\n",
    "attributes of own objects named like the library's": (
        "class Stats:\n    def __init__(self, x):\n        self.mean = x.mean(0)\n        self.size = 3\n"
        "    def load(self):\n        return self.mean\ns = Stats(torch.ones(2))\ns.std = 1.0\nStats.sum = 2\n"
        "def f(a, box):\n    a.note = 'mine'\n    return a + box.load()\n"),
    "a method named apply": "class Rule:\n    def apply(self, x):\n        return x * 2\ndef f(a):\n"
                            "    return Rule().apply(a)\n",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_code_has_no_finding(name):
    assert findings(TI + HONEST[name]) == []


# -- recursion.py and scopes.py: routes the binding walk used to miss ---------------------------------------
RECURSIVE = {
    "lambda bound by a tuple assignment": ("fill, N = (lambda n: fill(n - 1) if n else 0), 3\n", "recursion in `fill`"),
    "lambda stored into a dict item": ("OPS = {}\nOPS['f'] = lambda n: OPS['f'](n - 1) if n else 0\n",
                                       "recursion in `a stored function`"),
    "lambda stored into an attribute": ("class A:\n    def __init__(self):\n"
                                        "        self.f = lambda n: self.f(n - 1) if n else 0\n", "recursion in `.f`"),
    "def stored, read back by key": ("T = {}\ndef h(n):\n    return T['k'](n - 1) if n else 0\nT['k'] = h\n",
                                     "recursion in `h`"),
    "a method shared by name with another class": ("class A:\n    def run(self, n):\n        return self.run(n - 1) "
                                                   "if n else 0\nclass B:\n    def run(self, n):\n        return n\n",
                                                   "recursion in `run`"),
}
NOT_RECURSIVE = {
    "stored values and functions that read other slots": (
        "class M:\n    def __init__(self, w):\n        self.w = w\n        self.act = abs\n"
        "    def forward(self, x):\n        return self.act(x * self.w)\n"
        "CFG = {}\nCFG['scale'] = 2.0\nCFG['fn'] = lambda x: x * CFG['scale']\n"),
    "tuple assignments of plain values": "a, b = 1, 2\nm, n = abs, 3\nx = m(a) + n\n",
}


@pytest.mark.parametrize("name", sorted(RECURSIVE))
def test_recursion_through_stored_and_tuple_bound_functions_is_found(name):
    source, what = RECURSIVE[name]
    assert any(f.what == what and f.kind == ITERATION for f in findings(source)), findings(source)


@pytest.mark.parametrize("name", sorted(NOT_RECURSIVE))
def test_storing_values_is_not_recursion(name):
    assert findings(NOT_RECURSIVE[name]) == []


def test_tuple_bindings_resolve_element_by_element():
    found = findings("import torch\nt, n = torch, 3\ndef f(a):\n    return t.sys\n")
    assert any("(the module `sys`)" in f.what for f in found), found  # `t` is torch itself, not an unknown tuple


# -- F6: vmap is honest vectorization (torch.vmap, torch.func.vmap); the rest of torch.func stays outside --------
VMAP_BODY = "def batch_outer(a):\n    return torch.vmap(lambda r: r[:, None] * r[None, :])(a)\n"
VMAP_LOOP = ("def row(r):\n    return torch.stack([r * r[j] for j in range(r.shape[0])], 1)\n"
             "def batch_outer(a):\n    if a.shape[0] == 0 or a.shape[1] == 0:\n"
             "        return a[:, :, None] * a[:, None, :]\n    return torch.vmap(row)(a)\n")


def test_vmap_of_a_vectorized_body_is_vectorized_and_of_a_loop_is_not(broadcasting):
    honest = grade_submission(broadcasting, program(broadcasting, batch_outer=VMAP_BODY), seed=5,
                              only=["batch_outer"])["batch_outer"]
    assert honest["correct"].passed and honest["vectorized"].passed, {p: v.message for p, v in honest.items()}
    looped = grade_submission(broadcasting, program(broadcasting, batch_outer=VMAP_LOOP), seed=5,
                              only=["batch_outer"])["batch_outer"]
    assert looped["correct"].passed and not looped["vectorized"].passed
    assert "list comprehension" in looped["vectorized"].message
