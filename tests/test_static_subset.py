"""The checked subset, both ways: every attack costs "vectorized", no honest habit does.

Each attack is a notebook (cells) whose exercise function `f` reaches something that must cost it
"vectorized" (issue 7, sections A and B; issue 8's iteration routes). Each honest notebook is correct,
vectorized code written the way students write it, and must produce no finding at all.
"""
import pytest

from graders.checks.static import Submission

IMPORTS = "import torch\nimport torch.nn.functional as F\n"

ATTACKS = {
    # B: code the function reaches in blocks, lambdas, walrus targets
    "helper in if": "if True:\n    def h(a):\n        return torch.stack([r for r in a])\ndef f(a):\n    return h(a)\n",
    "helper in try": "try:\n    def h(a):\n        for r in a:\n            pass\n        return a\nexcept Exception:\n"
                     "    pass\ndef f(a):\n    return h(a)\n",
    "helper in with": "with torch.no_grad():\n    def h(a):\n        return sum(a)\ndef f(a):\n    return h(a)\n",
    "helper in for": "for _ in range(10):\n    def h(a):\n        return a\ndef f(a):\n    return h(a)\n",
    "nested def loop": "def f(a):\n    def g(b):\n        while b.sum() > 0:\n            b = b - 1\n        return b\n"
                       "    return g(a)\n",
    "walrus lambda comprehension": "def f(a):\n    (g := lambda b: torch.stack([r * 2 for r in b]))\n    return g(a)\n",
    "module walrus lambda": "(g := lambda b: [r for r in b])\ndef f(a):\n    return torch.stack(g(a))\n",
    "default value loop": "def f(a, w=[i for i in range(30)]):\n    return a\n",
    "decorator loop": "def deco(fn):\n    def wrap(a):\n        for r in a:\n            pass\n        return fn(a)\n"
                      "    return wrap\n@deco\ndef f(a):\n    return a\n",
    "class body loop": "class Box:\n    table = [i * i for i in range(40)]\ndef f(a):\n    return a * Box.table[1]\n",
    "method loop via self": "class Box:\n    def run(self, a):\n        return [r for r in a]\n"
                            "def f(a):\n    return torch.stack(Box().run(a))\n",
    "module loop filling a global": "T = torch.zeros(30)\nfor i in range(30):\n    T[i] = i\ndef f(a):\n    return a + T\n",
    "generator": "def f(a):\n    yield a\n",
    # recursion through any call path
    "direct recursion": "def f(a):\n    return a if len(a) < 2 else f(a[1:])\n",
    "mutual recursion": "def f(a):\n    return g(a)\ndef g(a):\n    return f(a[1:]) if len(a) > 1 else a\n",
    "recursion via lambda": "g = lambda a, n: a if n == 0 else g(a * 2, n - 1)\ndef f(a):\n    return g(a, 3)\n",
    "recursion via tuple": "def f(a, n=3):\n    return a if n == 0 else (f,)[0](a, n - 1)\n",
    "recursion via alias": "def f(a, n=3):\n    h = f\n    return a if n == 0 else h(a, n - 1)\n",
    "recursion via nested def": "def f(a):\n    def g(b, n):\n        return b if n == 0 else g(b, n - 1)\n    return g(a, 3)\n",
    "recursion via class": "class Node:\n    def __init__(self, a):\n        self.kids = Node(a[1:]) if len(a) > 1 else None\n"
                           "def f(a):\n    return Node(a) and a\n",
    "recursion via self call": "class M(torch.nn.Module):\n    def forward(self, a):\n"
                               "        return a if len(a) < 2 else self(a[1:])\ndef f(a):\n    return M()(a)\n",
    "recursion via method": "class Box:\n    def run(self, a):\n        return a if len(a) < 2 else self.run(a[1:])\n"
                            "def f(a):\n    return Box().run(a)\n",
    "recursion via dict": "def f(a, n=3):\n    return a if n == 0 else {'k': f}['k'](a, n - 1)\n",
    # iteration builtins and element methods, however reached
    "map": "def f(a):\n    return torch.stack(list(map(lambda r: r * 2, a)))\n",
    "torch.builtins.map": "def f(a):\n    return torch.stack(list(torch.builtins.map(torch.exp, a)))\n",
    "typing.functools.reduce": "import typing\ndef f(a):\n    return typing.functools.reduce(torch.add, a)\n",
    "functools reduce": "from functools import reduce as r\ndef f(a):\n    return r(torch.add, a)\n",
    "list.sort key": "def f(a):\n    idx = [0, 1, 2]\n    list.sort(idx, key=lambda i: float(a[i]))\n    return a[idx]\n",
    ".sort key": "def f(a):\n    idx = [0, 1, 2]\n    idx.sort(key=lambda i: float(a[i]))\n    return a[idx]\n",
    "max key": "def f(a):\n    return max(range(a.shape[1]), key=lambda j: float(a[0, j]))\n",
    "min over tensor": "def f(a):\n    return min(a)\n",
    "sum": "def f(a):\n    return sum(a)\n",
    "sorted": "def f(a):\n    return torch.stack(sorted(a, key=float))\n",
    "zip enumerate": "def f(a):\n    return [i for i, _ in enumerate(zip(a, a))]\n",
    "next iter": "def f(a):\n    return next(iter(a))\n",
    "all": "def f(a):\n    return all(a > 0)\n",
    ".tolist": "def f(a):\n    return torch.tensor(a.tolist())\n",
    ".item": "def f(a):\n    return a[0].item()\n",
    ".apply_": "def f(a):\n    return a.apply_(lambda v: v * 2)\n",
    "list over __getitem__ class": "class Rows:\n    def __init__(self, a):\n        self.a = a\n"
                                   "    def __getitem__(self, i):\n        return self.a[i]\n"
                                   "def f(a):\n    return torch.stack(list(Rows(a)))\n",
    "__getitem__ lambda": "class Rows:\n    __getitem__ = lambda self, i: i\n"
                          "def f(a):\n    return torch.tensor(list(Rows())[:0])\n",
    "type with three arguments": "def f(a):\n    R = type('R', (), {'__len__': lambda s: 0})\n    return a\n",
    "__iter__ class": "class Rows:\n    def __iter__(self):\n        return self\n"
                      "def f(a):\n    return tuple(Rows())\n",
    # A: routes out of the subset (module-valued attributes, reflection, threads, tampering APIs)
    "torch.sys": "def f(a):\n    torch.sys.modules['__main__'].Worker.count = 1\n    return a\n",
    "torch.os": "def f(a):\n    torch.os.system('true')\n    return a\n",
    "torch.builtins.getattr": "def f(a):\n    return torch.builtins.getattr(torch, 'soft' + 'max')(a, 1)\n",
    "torch.threading": "def f(a):\n    t = torch.threading.Thread(target=print)\n    return a\n",
    "typing.sys": "import typing\ndef f(a):\n    return typing.sys.modules and a\n",
    "module alias": "m = torch\ndef f(a):\n    return m.sys.gettrace() or a\n",
    "module in a container": "def f(a):\n    return (torch,)[0].sys and a\n",
    "module from a call": "def m():\n    return torch.cuda\ndef f(a):\n    return m().traceback and a\n",
    "frame introspection": "def f(a):\n    e = ValueError()\n    return e.__traceback__ or a\n",
    "F.np": "def f(a):\n    return torch.from_dlpack(F.np.asarray(a))\n",
    "import threading": "import threading\ndef f(a):\n    threading.Thread(target=print).start()\n    return a\n",
    "import inside": "def f(a):\n    import os\n    return a\n",
    "from torch import multiprocessing": "from torch import multiprocessing\ndef f(a):\n    multiprocessing.Process(target=print)\n    return a\n",
    "from torch.utils": "from torch.utils.data import DataLoader\ndef f(a):\n    return next(iter(DataLoader(a)))\n",
    "getattr": "def f(a):\n    return getattr(torch, 'soft' + 'max')(a, 1)\n",
    "eval": "def f(a):\n    return eval('a')\n",
    "exec": "def f(a):\n    exec('b = 1')\n    return a\n",
    "__import__": "def f(a):\n    __import__('os')\n    return a\n",
    "globals": "def f(a):\n    globals()['x'] = 1\n    return a\n",
    "get_ipython": "def f(a):\n    get_ipython().run_cell('x = 1')\n    return a\n",
    "__builtins__": "def f(a):\n    return __builtins__ and a\n",
    "vars": "def f(a):\n    return vars(torch) and a\n",
    "open": "def f(a):\n    open('/tmp/x').read()\n    return a\n",
    "__class__": "def f(a):\n    return a.__class__.__mro__ and a\n",
    "private": "def f(a):\n    return torch._C and a\n",
    "set_num_threads": "def f(a):\n    torch.set_num_threads(4)\n    return a\n",
    "torch.library": "def f(a):\n    torch.library.Library('aten', 'IMPL')\n    return a\n",
    "torch.jit": "def f(a):\n    return torch.jit.script(lambda x: x)(a)\n",
    "torch.compile": "def f(a):\n    return torch.compile(torch.exp)(a)\n",
    "global": "N = 0\ndef f(a):\n    global N\n    N += 1\n    return a\n",
    # the exercise's function itself must be a plain top-level def
    "f in if": "if True:\n    def f(a):\n        return a\n",
    "f in try": "try:\n    def f(a):\n        return a\nexcept Exception:\n    pass\n",
    "f lambda": "f = lambda a: a\n",
    "f twice different ways": "f = lambda a: a\ndef f(a):\n    return a\n",
    "f async": "async def f(a):\n    return a\n",
    "f imported": "from torch import exp as f\n",
    "f missing": "def g(a):\n    return a\n",
}

# the rule each attack must trip (a finding of another kind would hide a gap)
EXPECTED = {
    '.apply_': '`.apply_`',
    '.item': '`.item`',
    '.sort key': '`.sort(key=...)`',
    '.tolist': '`.tolist`',
    'F.np': '(the module `numpy`)',
    '__class__': '`.__class__`',
    '__import__': '`__import__`',
    '__iter__ class': '`__iter__` in class',
    'all': '`all`',
    'class body loop': 'list comprehension',
    'decorator loop': '`for` loop',
    'default value loop': 'list comprehension',
    'direct recursion': 'recursion in `f`',
    'eval': '`eval`',
    'exec': '`exec`',
    'f async': '`async def`',
    'f imported': 'is imported',
    'f in if': 'inside an `if` block',
    'f in try': 'inside a `try` block',
    'f lambda': 'bound by an assignment',
    'f missing': 'is not defined',
    'f twice different ways': 'defined twice in different ways',
    'from torch import multiprocessing': 'import of `multiprocessing`',
    'from torch.utils': 'import of `torch.utils.data`',
    'functools reduce': 'import of `functools`',
    'generator': '`yield`',
    'getattr': '`getattr`',
    'global': '`global`',
    'globals': '`globals`',
    'helper in for': '`for` loop',
    'helper in if': 'list comprehension',
    'helper in try': '`for` loop',
    'helper in with': '`sum`',
    'import inside': 'import of `os`',
    'import threading': 'import of `threading`',
    'list over __getitem__ class': '`__getitem__` in class',
    'list.sort key': '`list.sort`',
    'map': '`map`',
    'max key': '`max(..., key=...)`',
    'method loop via self': 'list comprehension',
    'min over tensor': '`min` over one iterable',
    'module alias': '(the module `sys`)',
    'module in a container': '`.sys`',
    'module loop filling a global': '`for` loop',
    'module walrus lambda': 'list comprehension',
    'mutual recursion': 'recursion in `f`',
    'nested def loop': '`while` loop',
    'next iter': '`next`',
    'open': '`open`',
    'private': '`._C`',
    'recursion via alias': 'recursion in `f`',
    'recursion via dict': 'recursion in `f`',
    'recursion via class': 'recursion in `Node`',
    'recursion via self call': 'recursion in `forward`',
    'recursion via method': 'recursion in `run`',
    'recursion via lambda': 'recursion in `g`',
    'recursion via nested def': 'recursion in `g`',
    'recursion via tuple': 'recursion in `f`',
    'set_num_threads': '`.set_num_threads`',
    'sorted': '`sorted`',
    'sum': '`sum`',
    'torch.builtins.getattr': '(the module `builtins`)',
    'torch.builtins.map': '`torch.builtins.map`',
    'torch.compile': '`.compile`',
    'torch.jit': '(the module `torch.jit`)',
    'torch.library': '(the module `torch.library`)',
    'torch.os': '(the module `os`)',
    'torch.sys': '(the module `sys`)',
    'torch.threading': '(the module `threading`)',
    'typing.functools.reduce': '`typing.functools.reduce`',
    'typing.sys': '(the module `sys`)',
    'vars': '`vars`',
    'module from a call': '`.traceback`',
    'frame introspection': '`.__traceback__`',
    '__getitem__ lambda': '`__getitem__` in class',
    'type with three arguments': '`type(name, bases, dict)`',
    'get_ipython': '`get_ipython`',
    '__builtins__': '`__builtins__`',
    'walrus lambda comprehension': 'list comprehension',
    'zip enumerate': '`zip`',
}

FORBIDDEN_ATTACKS = {
    "torch.softmax": "def f(x):\n    return torch.softmax(x, 1)\n",
    "F.softmax": "def f(x):\n    return F.softmax(x, 1)\n",
    "method softmax": "def f(x):\n    return x.softmax(1)\n",
    "renamed import": "from torch import softmax as s\ndef f(x):\n    return s(x, 1)\n",
    "alias by assignment": "sm = torch.nn.functional.softmax\ndef f(x):\n    return sm(x, 1)\n",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_costs_vectorized(name):
    found = Submission([("cell 1", IMPORTS), ("cell 2", ATTACKS[name])]).iteration_findings("f")
    assert any(EXPECTED[name] in f.what for f in found), f"{name}: {found}"


def test_every_attack_names_its_rule():
    assert set(EXPECTED) == set(ATTACKS) and len(ATTACKS) >= 40


@pytest.mark.parametrize("name", sorted(FORBIDDEN_ATTACKS))
def test_forbidden_function_is_found_under_any_name(name):
    sub = Submission([("cell 1", IMPORTS), ("cell 2", FORBIDDEN_ATTACKS[name])])
    assert "`softmax`" in {f.what for f in sub.iteration_findings("f", forbidden=("*softmax*",))}
    assert sub.iteration_findings("f") == []  # not forbidden in another exercise: nothing else is wrong


HONEST = {
    "type hints and docstring": "from typing import Optional, Tuple\n"
                                "def f(x: torch.Tensor, w: Optional[torch.Tensor] = None) -> torch.Tensor:\n"
                                "    '''Scale the rows.'''\n    return x * 2\n",
    "future annotations": "from __future__ import annotations\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
                          "    return x\n",
    "print and f-string": "def f(x):\n    print(f'shape {tuple(x.shape)} {x.dtype}')\n    return x + 1\n",
    "assert": "def f(x):\n    assert x.dim() == 2, 'expected a matrix'\n    return x.T\n",
    "functional": "def f(x):\n    return F.relu(x) + torch.nn.functional.gelu(x)\n",
    "einops rearrange": "from einops import rearrange\ndef f(x):\n    return rearrange(x, 'b c -> c b')\n",
    "einops reduce": "from einops import reduce\ndef f(x):\n    return reduce(x, 'b c -> b', 'max')\n",
    "einops layers": "from einops.layers.torch import Rearrange\ndef f(x):\n    return Rearrange('b c -> c b')(x)\n",
    "shape work": "def f(x):\n    n = x.dim()\n    b, c = x.shape\n    return x.permute(*range(n)).reshape(tuple(x.shape)).view(b, c)\n",
    "min max of ints": "def f(x):\n    k = min(3, x.shape[1])\n    m = max(x.shape)\n    return x[:, :k] * m\n",
    "len isinstance": "def f(x):\n    if not isinstance(x, torch.Tensor):\n        raise TypeError('x')\n"
                      "    return x[: len(x) // 2]\n",
    "nn.Module": "from torch import nn\nclass Scale(nn.Module):\n    def __init__(self, s):\n"
                 "        super(Scale, self).__init__()\n        assert isinstance(self, Scale)\n        self.s = s\n    def forward(self, x):\n        return x * self.s\n"
                 "def f(x):\n    return Scale(2.0)(x)\n",
    "parameter named sum": "def f(x, sum=True, reduce='mean'):\n    return x.sum(1) if sum and reduce == 'mean' else x\n",
    "local named map": "def f(x):\n    map = x * 2\n    return map\n",
    "own helper named softmax": "def softmax(x):\n    e = torch.exp(x - x.amax(1, keepdim=True))\n"
                                "    return e / e.sum(1, keepdim=True)\ndef f(x):\n    return softmax(x)\n",
    "math": "import math\ndef f(x):\n    return x / math.sqrt(x.shape[-1]) + math.pi\n",
    "no_grad decorator": "@torch.no_grad()\ndef f(x):\n    return x.clone()\n",
    "module constant": "EPS = 1e-6\ndef f(x):\n    return x / (x.norm() + EPS)\n",
    "tensor methods named like builtins": "def f(x):\n    return x.max(dim=1).values + x.sum() + x.min() + x.abs()\n",
    "tensor sort": "def f(x):\n    return torch.sort(x, dim=1).values + x.sort(dim=1).values\n",
    "softmax when allowed": "def f(x):\n    return x.softmax(1)\n",
    "shared helper cell": "def _center(x):\n    return x - x.mean(0)\n",
    "draft then final": "def f(x):\n    return torch.stack([r for r in x])\ndef f(x):\n    return x.clone()\n",
    "test call after the def": "def f(x):\n    return x * 2\nxs = [torch.ones(2, 2) for _ in range(3)]\n"
                               "print([f(x) for x in xs])\nf(xs[0]).sum()\n",
    "keyword only and star args": "def f(x, *dims, scale: float = 1.0, **kw):\n    return x.sum(dim=dims or None) * scale\n",
    "topk indexing": "def f(x):\n    idx = x.topk(2, dim=1).indices\n    return torch.gather(x, 1, idx)\n",
}

SCRATCH = [
    ("scratch numpy", "import numpy as np\nimport time\nprint(np.zeros(3))\nt0 = time.time()\n"),
    ("plots", "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n"),
    ("pip", "!pip install einops\n"),
    ("timeit", "%timeit f(torch.ones(3, 3))\n"),
    ("time cell", "%%time\nfor i in range(10):\n    f(torch.ones(3, 3))\n"),
    ("broken other", "def g(x:\n    return [\n"),
    ("experiment", "import threading\nfor k in range(100):\n    y = torch.ones(k).tolist()\n"),
]


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_code_has_no_finding(name):
    source = HONEST[name]
    if name == "shared helper cell":  # a private helper in its own cell, used by two answers
        cells = [("cell 1", IMPORTS), ("helpers", source), ("answer f", "def f(x):\n    return _center(x) * 2\n"),
                 ("answer g", "def g(x):\n    return _center(x).abs()\n")]
    else:
        cells = [("cell 1", IMPORTS), ("answer", source)]
    sub = Submission(cells + SCRATCH)
    assert sub.iteration_findings("f", forbidden=("*softmax*",) if "softmax" in name and "allowed" not in name
                                  else ()) == []


def test_scratch_cells_alone_cost_nothing():
    cells = [("cell 1", IMPORTS)] + SCRATCH + [("answer", "def f(x):\n    return x * 2\n")]
    assert Submission(cells).iteration_findings("f") == []


@pytest.mark.parametrize("cell, line, what", [
    ("cell 2", 3, "`for` loop"),
    ("cell 2", 2, "`.tolist`"),
])
def test_findings_point_at_the_cell_line(cell, line, what):
    src = "def f(a):\n    b = a.tolist()\n    for r in b:\n        pass\n    return a\n"
    found = Submission([("cell 1", IMPORTS), ("cell 2", src)]).iteration_findings("f")
    assert (cell, line, what) in {(f.cell, f.line, f.what) for f in found}


def test_loop_hint_is_the_exercise_own():
    found = Submission([("c", "def f(a):\n    for r in a:\n        pass\n")]).iteration_findings(
        "f", loop_hint="build the (N, M) result with broadcasting")
    assert [f.why for f in found] == ["build the (N, M) result with broadcasting"]


def test_fail_closed_message_says_what_to_write():
    found = Submission([("answer", "f = lambda a: a\n")]).iteration_findings("f")
    assert [(f.cell, f.line) for f in found] == [("answer", 1)]
    assert "not a `def`" in found[0].what and "def f(...)" in found[0].why
