"""Fixed-size iteration (graders.checks.fixed): a loop whose number of steps cannot grow with the input costs
nothing; one over anything that can grow still costs "vectorized"."""
import pytest

from graders.checks.finding import ITERATION
from graders.checks.fixed import MAX_FIXED_ITEMS
from graders.checks.static import Submission


def findings(source, name="f"):
    return Submission([("cell 1", "import math\nimport torch\n"), ("cell 2", source)]).iteration_findings(name)


FIXED = {
    "comprehension over a literal range": "def f(b):\n    return torch.stack([b[:, k] for k in range(4)])\n",
    "range with a start and a step": "def f(b):\n    return torch.stack([b[:, k] for k in range(1, 9, 2)])\n",
    f"range of {MAX_FIXED_ITEMS}": f"def f(b):\n    for k in range({MAX_FIXED_ITEMS}):\n        b = b + k\n    return b\n",
    "nested loops over 2x2 offsets": "def f(x):\n    m = x[:, ::2, ::2]\n    for di in range(2):\n        for dj in range(2):\n"
                                     "            m = torch.maximum(m, x[:, di::2, dj::2])\n    return m\n",
    "tuple of offset pairs": "def f(a):\n    s = a * 0\n    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):\n"
                             "        s = s + a.roll((dy, dx), (0, 1))\n    return s\n",
    "module-level tuple of pairs": "PAIRS = ((0, 0), (0, 1), (1, 0), (1, 1))\ndef f(a):\n"
                                   "    return sum(a.roll(p, (0, 1)) for p in PAIRS)\n",
    "local list of offsets": "def f(a):\n    offsets = [(0, 1), (1, 0)]\n    return torch.stack([a.roll(o, (0, 1)) for o in offsets])\n",
    "zip over 4 constant pairs": "def f(a):\n    for p, q in zip((0, 1, 2, 3), (1, 2, 3, 4), strict=True):\n"
                                 "        a = a + p * q\n    return a\n",
    "math.prod of a shape slice": "def f(x):\n    shape = x.shape\n    return x.reshape(shape[0], math.prod(shape[1:]))\n",
    "math.prod of x.shape": "def f(x):\n    return x.reshape(math.prod(x.shape))\n",
    "map int over the shape": "def f(x):\n    return x.new_zeros(tuple(map(int, x.shape)))\n",
    "list of the shape": "def f(x):\n    return x.reshape(list(x.shape))\n",
    "tolist of the shape": "def f(x):\n    return x.new_zeros(x.shape.tolist())\n",
    "range over ndim": "def f(x):\n    for d in range(x.ndim):\n        x = x.flip(d)\n    return x\n",
    "range over dim() minus one": "def f(x):\n    for d in range(1, x.dim() - 1):\n        x = x.flip(d)\n    return x\n",
    "range over len of the shape": "def f(x):\n    return [x.size(d) for d in range(len(x.shape))]\n",
    "zip of shape and stride": "def f(x):\n    return x.storage_offset() + sum(s * (n - 1) for n, s in zip(x.shape, x.stride()))\n",
    "enumerate the size()": "def f(x):\n    out = x\n    for i, n in enumerate(x.size()):\n        out = out.narrow(i, 0, n)\n    return out\n",
    "max over the shape": "def f(x):\n    return x.reshape(max(x.shape), -1)\n",
    "a helper it reaches": "def dims(x):\n    return [x.shape[d] for d in range(x.dim())]\ndef f(x):\n    return x.reshape(dims(x))\n",
}


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_size_iteration_costs_nothing(name):
    assert findings(FIXED[name]) == []


GROWING = {
    "range over a parameter": ("def f(x, n):\n    for i in range(n):\n        x = x + 1\n    return x\n", "`for` loop"),
    "range over shape[0]": ("def f(x):\n    for i in range(x.shape[0]):\n        x = x + 1\n    return x\n", "`for` loop"),
    "range over size(0)": ("def f(x):\n    return torch.stack([x[i] for i in range(x.size(0))])\n", "list comprehension"),
    "rows of a tensor": ("def f(x):\n    return torch.stack([row * 2 for row in x])\n", "list comprehension"),
    "range over len(x)": ("def f(x):\n    for i in range(len(x)):\n        x = x + 1\n    return x\n", "`for` loop"),
    f"a literal range of {MAX_FIXED_ITEMS + 1}": (f"def f(x):\n    for i in range({MAX_FIXED_ITEMS + 1}):\n"
                                                  "        x = x + 1\n    return x\n", "`for` loop"),
    "a literal tuple too long": ("def f(x):\n    for k in (" + ", ".join(map(str, range(MAX_FIXED_ITEMS + 1)))
                                 + "):\n        x = x + k\n    return x\n", "`for` loop"),
    "a fixed loop around a growing one": ("def f(x):\n    return [[r for r in x] for k in range(2)]\n",
                                          "list comprehension"),
    "zip with a tensor": ("def f(x):\n    return list(zip(range(4), x))\n", "`zip`"),
    "map over a tensor": ("def f(x):\n    return list(map(float, x))\n", "`map`"),
    "sum over the rows": ("def f(x):\n    return sum(x)\n", "`sum`"),
    "math.prod over a tensor": ("def f(x):\n    return math.prod(x)\n", "`math.prod` over an iterable"),
    "tolist of a tensor": ("def f(x):\n    return torch.tensor(x.tolist())\n", "`.tolist`"),
    "a name unpacked from a pair": ("def f(x):\n    rows, pair = x, (1, 2)\n    for r in rows:\n        pass\n    return x\n",
                                    "`for` loop"),
    "a list that grows": ("P = [(0, 0)]\ndef f(x):\n    for r in x:\n        P.append(r)\n"
                          "    return [p for p in P]\n", "list comprehension"),
    "a list built at run time": ("def f(x):\n    idx = list(range(x.shape[0]))\n    return [x[i] for i in idx]\n",
                                 "list comprehension"),
    "shape of the student's own object": ("class Box:\n    def __init__(self, x):\n        self.shape = x\n"
                                          "    def rows(self):\n        return [r for r in self.shape]\n"
                                          "def f(x):\n    return torch.stack(Box(x).rows())\n", "list comprehension"),
    "shape of an object passed in": ("class Box:\n    def __init__(self, x):\n        self.shape = x\n"
                                     "def rows(b):\n    return [r for r in b.shape]\n"
                                     "def f(x):\n    return torch.stack(rows(Box(x)))\n", "list comprehension"),
    "size method of a class": ("class Box:\n    def __init__(self, x):\n        self.x = x\n"
                               "    def size(self):\n        return self.x\n"
                               "def f(x):\n    return torch.stack([r for r in Box(x).size()])\n", "list comprehension"),
    "a function's shape attribute": ("def g():\n    pass\ng.shape = range(100)\n"
                                     "def f(x):\n    return [x + i for i in g.shape]\n", "list comprehension"),
    "while": ("def f(x):\n    while x.sum() > 0:\n        x = x - 1\n    return x\n", "`while` loop"),
}


@pytest.mark.parametrize("name", sorted(GROWING))
def test_iteration_that_can_grow_with_the_input_still_costs_vectorized(name):
    source, what = GROWING[name]
    found = findings(source)
    assert any(f.what == what and f.kind == ITERATION for f in found), found


def test_the_same_rule_holds_in_module_level_code_it_reaches():
    fixed = "T = torch.zeros(4)\nfor i in range(4):\n    T[i] = i\ndef f(a):\n    return a + T\n"
    growing = "T = torch.zeros(40)\nfor i in range(40):\n    T[i] = i\ndef f(a):\n    return a + T\n"
    assert findings(fixed) == []
    assert [f.what for f in findings(growing)] == ["`for` loop"]
