"""The AST half of "vectorized": every rule fires on code that breaks it and stays quiet on code that does not."""
import pytest

from graders.checks.static import Submission, summarize

VECTORIZED = "import torch\ndef f(a):\n    return a[:, :, None] * a[:, None, :]\n"


def findings(source, name="f", forbidden=()):
    return Submission([("cell 1", source)]).iteration_findings(name, forbidden)


def whats(source, **kw):
    return {f.what for f in findings(source, **kw)}


def test_vectorized_code_has_no_findings():
    assert findings(VECTORIZED) == []


@pytest.mark.parametrize("body, what", [
    ("    for i in range(a.shape[0]):\n        a = a + 1\n    return a", "`for` loop"),
    ("    while a.sum() > 0:\n        a = a - 1\n    return a", "`while` loop"),
    ("    return torch.stack([r * 2 for r in a])", "list comprehension"),
    ("    return torch.stack(tuple(r * 2 for r in a))", "generator expression"),
    ("    return {i: i for i in a}", "dict comprehension"),
    ("    return torch.stack(list(map(lambda r: r * 2, a)))", "`map`"),
    ("    return list(filter(None, a))", "`filter`"),
    ("    return list(zip(a, a))", "`zip`"),
    ("    return sum(a)", "`sum`"),
    ("    return sorted(a)", "`sorted`"),
    ("    return torch.tensor(a.tolist())", "`.tolist`"),
    ("    return a[0].item()", "`.item`"),
    ("    return torch.from_numpy(a.numpy())", "`.numpy`"),
    ("    return a.apply_(lambda v: v * 2)", "`.apply_`"),
    ("    yield a", "`yield`"),
])
def test_each_iteration_construct_is_flagged_with_its_line(body, what):
    found = findings(f"def f(a):\n{body}\n")
    assert what in {f.what for f in found}
    assert all(f.line >= 2 for f in found)


def test_message_names_cell_line_and_hint():
    found = Submission([("your `f` cell", "def f(a):\n    for i in a:\n        pass\n")]).iteration_findings(
        "f", loop_hint="build the (N, M) result with broadcasting instead")
    assert summarize(found) == ("your `f` cell, line 2: `for` loop; "
                                "build the (N, M) result with broadcasting instead")


def test_helpers_in_other_cells_lambdas_and_classes_are_reached():
    cells = [("cell 1", "def helper(a):\n    for r in a:\n        pass\n    return a\n"),
             ("cell 2", "class Box:\n    def run(self, a):\n        return [r for r in a]\n"),
             ("cell 3", "g = lambda a: helper(a)\ndef f(a):\n    return Box().run(g(a))\n")]
    found = Submission(cells).iteration_findings("f")
    assert {(f.cell, f.what) for f in found} == {("cell 1", "`for` loop"), ("cell 2", "list comprehension")}


def test_decorators_are_reached():
    src = "def deco(fn):\n    def wrap(a):\n        for r in a:\n            pass\n        return fn(a)\n    return wrap\n" \
          "@deco\ndef f(a):\n    return a\n"
    assert "`for` loop" in whats(src)


def test_unreachable_loops_are_not_charged_to_the_function():
    src = VECTORIZED + "def scratch(a):\n    for r in a:\n        print(r)\n"
    assert findings(src) == []


def test_recursion_direct_and_mutual():
    assert "recursion in `f`" in whats("def f(a):\n    return f(a[1:]) if len(a) else a\n")
    mutual = "def f(a):\n    return g(a)\ndef g(a):\n    return f(a) if len(a) > 1 else a\n"
    assert "recursion in `f`" in whats(mutual)


def test_forbidden_names_attributes_and_imports():
    assert "`softmax`" in whats("def f(x):\n    return torch.softmax(x, 1)\n", forbidden=("softmax",))
    assert "`softmax`" in whats("from torch.nn.functional import softmax as s\ndef f(x):\n    return s(x, 1)\n",
                                forbidden=("softmax",))
    assert "`max_pool2d`" in whats("def f(x):\n    return F.max_pool2d(x, 2)\n", forbidden=("max_pool*",))
    assert whats("def f(x):\n    return torch.exp(x)\n", forbidden=("softmax",)) == set()


def test_library_functions_named_like_builtins_are_allowed():
    src = "from einops import reduce\ndef f(x):\n    return reduce(x, 'b c -> b', 'max')\n"
    assert findings(src) == []


TAMPERING = [
    ("import os\n", "import of `os`"),
    ("import sys\n", "import of `sys`"),
    ("from torch.utils._python_dispatch import TorchDispatchMode\n", "import of `torch.utils._python_dispatch`"),
    ("x = getattr(torch, 'exp')\n", "`getattr`"),
    ("exec('1')\n", "`exec`"),
    ("x = torch.__dict__\n", "`.__dict__`"),
    ("x = torch._C\n", "`._C`"),
    ("torch.set_num_threads(2)\n", "`.set_num_threads`"),
    ("get_ipython().set_custom_exc((Exception,), None)\n", "`get_ipython`"),
    ("%timeit 1\n", "`get_ipython`"),
]


@pytest.mark.parametrize("src, what", [c for c in TAMPERING if not c[0].startswith("%")])
def test_tampering_reached_by_the_function_fails_it(src, what):
    body = "".join("    " + line + "\n" for line in src.splitlines())
    found = Submission([("cell 1", "import torch\ndef f(a):\n" + body + "    return a\n")]).iteration_findings("f")
    assert what in {f.what for f in found}


@pytest.mark.parametrize("src, what", TAMPERING)
def test_tampering_the_function_does_not_reach_costs_nothing(src, what):
    cells = [("cell 1", "import torch\n" + src), ("cell 2", "import torch\n" + VECTORIZED)]
    assert Submission(cells).iteration_findings("f") == []


def test_plain_course_code_has_no_finding():
    src = "import torch\nimport math\nimport torch.nn.functional as F\nfrom einops import rearrange\n" + VECTORIZED
    assert Submission([("cell 1", src)]).iteration_findings("f") == []


def test_tampering_inside_the_function_fails_it():
    assert "import of `sys`" in whats("def f(a):\n    import sys\n    return a\n")


def test_syntax_errors_are_reported():
    found = Submission([("cell 1", "def f(a):\n    return (\n")]).iteration_findings("f")
    assert "syntax error" in [f.what for f in found]


def test_parameters_named_like_builtins_are_not_the_builtins():
    assert findings("def f(x, reduce='sum'):\n    return x.sum() if reduce == 'sum' else x\n") == []
    assert "`sum`" in whats("def f(x, reduce='sum'):\n    return sum(x)\n")
