"""State kept between calls (graders.checks.state): a memo costs "vectorized" and "fast"; honest code keeps both."""
import pytest

from graders.checks.finding import STATE
from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission, summarize

MEMO = ("CACHE = {}\ndef batch_outer(a):\n    key = tuple(a.shape)\n    if key not in CACHE:\n"
        "        CACHE[key] = a[:, :, None] * a[:, None, :]\n    return CACHE[key]\n")


def findings(source, name="f"):
    return Submission([("cell 1", "import torch\n"), ("cell 2", source)]).iteration_findings(name)


def state(source, name="f"):
    return [f for f in findings(source, name) if f.kind == STATE]


KEEPS_STATE = {
    "item of a module-level dict": "CACHE = {}\ndef f(a):\n    CACHE[a.shape[0]] = a * 2\n    return CACHE[a.shape[0]]\n",
    "setdefault": "CACHE = {}\ndef f(a):\n    return CACHE.setdefault(a.shape[0], a * 2)\n",
    "update": "CACHE = {}\ndef f(a):\n    CACHE.update({a.shape[0]: a * 2})\n    return a * 2\n",
    "append to a module-level list": "SEEN = []\ndef f(a):\n    SEEN.append(a * 2)\n    return SEEN[-1]\n",
    "add to a module-level set": "SEEN = set()\ndef f(a):\n    SEEN.add(a.shape[0])\n    return a\n",
    "in-place op on a module-level tensor": "W = torch.zeros(3)\ndef f(a):\n    W.add_(1)\n    return a + W\n",
    "out= a module-level tensor": "BUF = torch.zeros(3)\ndef f(a):\n    return torch.add(a, 1, out=BUF)\n",
    "through a local alias": "CACHE = {}\ndef f(a):\n    c = CACHE\n    c[0] = a * 2\n    return c[0]\n",
    "mutable default dict": "def f(a, _seen={}):\n    _seen[a.shape[0]] = a * 2\n    return _seen[a.shape[0]]\n",
    "mutable default list": "def f(a, _seen=[]):\n    _seen.append(a)\n    return a\n",
    "tensor default changed in place": "def f(a, acc=torch.zeros(3)):\n    acc.add_(a)\n    return acc\n",
    "closure's cell": "def make():\n    memo = {}\n    def g(a):\n        memo[0] = a * 2\n        return memo[0]\n"
                      "    return g\nh = make()\ndef f(a):\n    return h(a)\n",
    "memoizing decorator": "def memo(fn):\n    cache = {}\n    def wrap(a):\n        if 0 not in cache:\n"
                           "            cache[0] = fn(a)\n        return cache[0]\n    return wrap\n"
                           "@memo\ndef f(a):\n    return a * 2\n",
    "returned lambda's cell": "def make():\n    memo = {}\n    return lambda a: memo.setdefault(0, a * 2)\n"
                              "h = make()\ndef f(a):\n    return h(a)\n",
    "closure handed back by vmap": "def make():\n    memo = {}\n    def g(a):\n        memo[0] = a\n        return a * 2\n"
                                   "    return torch.vmap(g)\nh = make()\ndef f(a):\n    return h(a)\n",
    "closure stored in a module-level dict": "OPS = {}\ndef make():\n    memo = []\n    def g(a):\n        memo.append(a)\n"
                                             "        return a\n    OPS['g'] = g\n    return 0\nREADY = make()\n"
                                             "def f(a):\n    return OPS['g'](a) if READY == 0 else a\n",
    "function attribute": "def f(a):\n    f.cache = a * 2\n    return a * 2\n",
    "item of a function attribute": "def f(a):\n    f.cache[0] = a * 2\n    return f.cache[0]\nf.cache = {}\n",
    "helper's state": "CACHE = {}\ndef helper(a):\n    CACHE[0] = a * 2\n    return a * 2\ndef f(a):\n    return helper(a)\n",
    "class attribute": "class Memo:\n    store = {}\ndef f(a):\n    Memo.store[0] = a * 2\n    return Memo.store[0]\n",
    "global": "N = 0\ndef f(a):\n    global N\n    N += 1\n    return a\n",
    # issue 38: the red team's forms
    "augmented through a local alias": "_MEMO = {}\ndef f(a):\n    c = _MEMO\n    key = a.shape[0]\n"
                                       "    if key not in c:\n        c |= {key: a * 2}\n    return c[key]\n",
    "a helper that writes into its argument": "_MEMO = {}\ndef remember(store, key, out):\n    store[key] = out\n"
                                              "    return out\ndef f(a):\n    key = a.shape[0]\n"
                                              "    return _MEMO[key] if key in _MEMO else remember(_MEMO, key, a * 2)\n",
    "a helper that writes into its keyword argument": "_MEMO = {}\ndef remember(key, out, store=None):\n"
                                                      "    store[key] = out\n    return out\ndef f(a):\n"
                                                      "    return remember(0, a * 2, store=_MEMO)\n",
    "own method on a default instance": "class Memo:\n    def __init__(self):\n        self.d = {}\n"
                                        "    def get(self, key, make):\n        if key not in self.d:\n"
                                        "            self.d[key] = make()\n        return self.d[key]\n"
                                        "def f(a, _m=Memo()):\n    return _m.get(a.shape[0], lambda: a * 2)\n",
    "own method on a module-level instance": "class Counter:\n    def __init__(self):\n        self.n = 0\n"
                                             "    def tick(self):\n        self.n += 1\n        return self.n\n"
                                             "C = Counter()\ndef f(a):\n    C.tick()\n    return a\n",
    "an instance made by a factory": "class Memo:\n    def __init__(self):\n        self.d = {}\n"
                                     "    def put(self, k, v):\n        self.d[k] = v\n        return v\n"
                                     "def make():\n    return Memo()\nM = make()\ndef f(a):\n    return M.put(0, a * 2)\n",
    "a module-level instance whose __call__ keeps it": "class Memo:\n    def __init__(self):\n        self.d = {}\n"
                                                       "    def __call__(self, a):\n        self.d[0] = a * 2\n"
                                                       "        return self.d[0]\nM = Memo()\ndef f(a):\n"
                                                       "    return M(a)\n",
}


@pytest.mark.parametrize("name", sorted(KEEPS_STATE))
def test_a_function_that_keeps_state_between_calls_is_a_state_finding(name):
    found = state(KEEPS_STATE[name])
    assert found and all(f.what.startswith("keeps state between calls") for f in found), findings(KEEPS_STATE[name])
    assert summarize(found[:1]).endswith("; compute the result on every call")


@pytest.mark.parametrize("name", sorted(KEEPS_STATE))
def test_state_costs_fast_too(name):
    assert Submission([("cell 1", "import torch\n"), ("cell 2", KEEPS_STATE[name])]).outside_findings("f")


HONEST = {
    "a module-level constant table read": "OFFSETS = torch.tensor([1.0, 2.0, 3.0])\ndef f(a):\n    return a + OFFSETS\n",
    "a module-level dict read": "MODES = {'a': 1}\ndef f(a):\n    return a * MODES.get('a', 0) + len(MODES)\n",
    "no_grad decorator": "@torch.no_grad()\ndef f(a):\n    return a * 2\n",
    "local dicts and lists": "def f(a):\n    parts = []\n    seen = {}\n    seen['x'] = a * 2\n    parts.append(seen['x'])\n"
                             "    parts[0] = parts[0] + 1\n    return parts[0]\n",
    "a local tensor filled in place": "def f(a):\n    out = torch.empty_like(a)\n    out[:] = a * 2\n    out.add_(1)\n    return out\n",
    "self in an nn.Module's __init__": "class Scale(torch.nn.Module):\n    def __init__(self, k):\n        super().__init__()\n"
                                       "        self.k = k\n        self.register_buffer('w', torch.ones(1))\n"
                                       "    def forward(self, a):\n        return a * self.k * self.w\n"
                                       "def f(a):\n    return Scale(2)(a)\n",
    "a module-level statement changing a table": "W = torch.zeros(3)\nW[0] = 1\nW.add_(1)\ndef f(a):\n    return a + W\n",
    "in place on its own argument": "def f(a):\n    a.mul_(2)\n    a[a < 0] = 0\n    return a\n",
    "out= None by default": "def f(a, out=None):\n    return torch.add(a, 1, out=out)\n",
    "constant defaults": "def f(a, scale=2.0, dims=(0, 1), mode='sum'):\n    return a * scale\n",
    "a nested helper only called": "def f(a):\n    parts = []\n    def add(v):\n        parts.append(v)\n    add(a * 2)\n"
                                   "    return parts[0]\n",
    "a nested helper passed to a helper": "def apply(g, v):\n    return g(v)\ndef f(a):\n    parts = []\n"
                                          "    def add(v):\n        parts.append(v)\n        return v\n"
                                          "    apply(add, a * 2)\n    return parts[0]\n",
    "a clone of a table changed": "W = torch.zeros(3)\ndef f(a):\n    w = W.clone()\n    w[0] = 1\n    return a + w\n",
    "an augmented local": "def f(a):\n    out = torch.zeros_like(a)\n    out += a\n    total = 0\n    total += 1\n"
                          "    parts = []\n    parts += [out]\n    return parts[0] * total\n",
    "a helper that fills a local": "def fill(out, a):\n    out[:] = a * 2\n    return out\ndef f(a):\n"
                                   "    return fill(torch.empty_like(a), a)\n",
    "a helper that fills a local by name": "def fill(out, a):\n    out[:] = a * 2\ndef f(a):\n"
                                           "    out = torch.empty_like(a)\n    fill(out, a)\n    return out\n",
    "own method changing a local instance": "class Acc:\n    def __init__(self):\n        self.parts = []\n"
                                            "    def add(self, v):\n        self.parts.append(v)\n"
                                            "def f(a):\n    acc = Acc()\n    acc.add(a * 2)\n    return acc.parts[0]\n",
    "a constant table read through a helper": "TABLE = torch.arange(4)\ndef pick(t, i):\n    return t[i]\n"
                                              "def f(a):\n    return a + pick(TABLE, 1)\n",
    "an nn.Module built per call": "class Scale(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                                   "    def forward(self, a):\n        self.last = a\n        return a * 2\n"
                                   "def f(a):\n    return Scale()(a)\n",
    "module-level constants": "SCALE = 2.0\nDIMS = (0, 1)\ndef f(a):\n    return a * SCALE\n",
    "a dict's get beside a class whose get keeps": "class Memo:\n    def __init__(self):\n        self.d = {}\n"
                                                   "    def get(self, k, v):\n        self.d[k] = v\n        return v\n"
                                                   "MODES = {'a': 2}\ndef f(a):\n    return a * MODES.get('a', 1)\n",
    "a module-level lambda beside a class whose __call__ keeps": "class Memo:\n    def __init__(self):\n"
                                                                 "        self.d = {}\n    def __call__(self, a):\n"
                                                                 "        self.d[0] = a\n        return a\n"
                                                                 "double = lambda t: t * 2\ndef f(a):\n"
                                                                 "    return double(a)\n",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_code_keeps_no_state(name):
    assert findings(HONEST[name]) == []


def test_the_memo_cheat_fails_fast_before_anything_is_timed(broadcasting):
    """The memo once got "fast: passed ... 0.0x the reference's time": now its finding fails "fast" at once."""
    submission = Submission([("cell 1", "import torch\n"), ("answer", MEMO)])
    checks = ExerciseChecks(broadcasting.exercise("batch_outer"), None, None, submission)  # nothing is run
    verdict = checks.fast()
    assert not verdict.passed and "keeps state between calls" in verdict.message, verdict.message
    assert "answer, line 5" in verdict.message


def test_the_honest_answer_has_no_finding_that_costs_fast():
    honest = MEMO.replace("    key = tuple(a.shape)\n    if key not in CACHE:\n        CACHE[key] = ", "    return ") \
        .split("\n    return CACHE")[0] + "\n"
    submission = Submission([("cell 1", "import torch\n"), ("answer", honest.replace("CACHE = {}\n", ""))])
    assert submission.outside_findings("batch_outer") == [] and submission.iteration_findings("batch_outer") == []
