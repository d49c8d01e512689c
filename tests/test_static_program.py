"""program_for: the slice of the notebook an exercise's function reaches, at the student's line numbers."""
import torch

from graders.checks.static import Submission

NOTEBOOK = [
    ("setup", "import torch\nimport numpy as np\nimport torch.nn.functional as F\n%matplotlib inline\n"),
    ("scratch", "!pip install einops\nx = np.zeros(3)\nprint(x)\nfor i in range(3):\n    print(i)\n"),
    ("data", "SCALE = torch.ones(3)\nSCALE[0] = 2\nprint(SCALE)\nUNUSED = np.ones(2)\n\n"
             "def helper(a):\n    return a * SCALE\n"),
    ("broken", "def g(a:\n    return a\n"),
    ("answer", "@torch.no_grad()\ndef f(x: torch.Tensor) -> torch.Tensor:\n    '''Doc.'''\n"
               "    y = helper(x)\n    print(y)\n    return F.relu(y)\nout = f(torch.ones(3))\n"
               "%timeit f(torch.ones(3))\n"),
    ("bash", "%%bash\necho def f\n"),
]


def program(function="f", cells=NOTEBOOK):
    return dict(Submission(cells).program_for(function))


def test_only_reached_statements_in_notebook_order_at_their_lines():
    prog = Submission(NOTEBOOK).program_for("f")
    assert [label for label, _ in prog] == ["setup", "data", "answer"]
    src = dict(prog)
    assert src["setup"].split("\n")[:3] == ["import torch", "", "import torch.nn.functional as F"]
    data = src["data"].split("\n")
    assert data[:2] == ["SCALE = torch.ones(3)", "SCALE[0] = 2"]  # the in-place change runs before the call
    assert data[2:5] == ["", "", ""] and data[5] == "def helper(a):"  # print and UNUSED left out, lines kept
    answer = src["answer"].split("\n")
    assert answer[0] == "@torch.no_grad()" and answer[1].startswith("def f(")
    assert "out = f" not in src["answer"] and "timeit" not in src["answer"]


def test_program_runs_and_tracebacks_point_at_the_student_line():
    namespace = {}
    for label, src in Submission(NOTEBOOK).program_for("f"):
        exec(compile(src, label, "exec"), namespace)
    assert torch.equal(namespace["f"](torch.ones(3)), torch.tensor([2.0, 1.0, 1.0]))
    assert "np" not in namespace and "x" not in namespace and "UNUSED" not in namespace
    cells = [("answer", "import torch\n\n\ndef f(a):\n    return a.missing()\n")]
    namespace = {}
    for label, src in Submission(cells).program_for("f"):
        exec(compile(src, label, "exec"), namespace)
    try:
        namespace["f"](torch.ones(1))
    except AttributeError as e:
        tb = e.__traceback__
        while tb.tb_next:
            tb = tb.tb_next
        assert (tb.tb_frame.f_code.co_filename, tb.tb_lineno) == ("answer", 5)
    else:
        raise AssertionError("no error")


def test_another_cells_syntax_error_costs_nothing_own_is_reported():
    sub = Submission(NOTEBOOK)
    assert sub.problems_for("f") == [] and sub.iteration_findings("f") == []
    found = sub.iteration_findings("g")
    assert [(f.cell, f.line, f.what) for f in found] == [("broken", 1, "syntax error")]


def test_a_broken_cell_that_defines_a_needed_helper_is_reported():
    cells = [("helpers", "def h(a):\n    return a +\n"), ("answer", "def f(a):\n    return h(a)\n")]
    assert [f.cell for f in Submission(cells).iteration_findings("f")] == ["helpers"]


def test_magic_and_shell_lines_inside_a_needed_cell_are_left_out():
    cells = [("answer", "import torch\n!pip install einops\ndef f(a):\n    return a * torch.pi\n%time f(torch.ones(2))\n"
                        "r = !ls\nf?\n")]
    src = dict(Submission(cells).program_for("f"))["answer"]
    assert src.split("\n")[:4] == ["import torch", "", "def f(a):", "    return a * torch.pi"]
    assert "pip" not in src and "ls" not in src


def test_time_cell_magic_body_is_python():
    cells = [("answer", "%%time\nimport torch\ndef f(a):\n    return torch.exp(a)\n")]
    assert dict(Submission(cells).program_for("f"))["answer"].split("\n")[1:3] == ["import torch", "def f(a):"]


def test_last_definition_wins_and_rebinding_chains_are_kept():
    cells = [("draft", "import torch\ndef f(a):\n    return [r for r in a]\n"),
             ("consts", "W = torch.ones(2)\nW = W * 3\nW.mul_(2)\nV = 5\n"),
             ("final", "def f(a):\n    return a * W\n")]
    prog = dict(Submission(cells).program_for("f"))
    assert "draft" in prog and "return [r" not in prog["draft"]  # only the import of the draft cell
    assert prog["consts"].split("\n")[:4] == ["W = torch.ones(2)", "W = W * 3", "W.mul_(2)", ""]


def test_conditional_helpers_keep_every_binding_that_may_be_in_force():
    cells = [("c", "def h(a):\n    return a\nif True:\n    def h(a):\n        return -a\ndef f(a):\n    return h(a)\n")]
    src = dict(Submission(cells).program_for("f"))["c"]
    assert src.startswith("def h(a):\n    return a\nif True:")


def test_module_level_code_that_is_not_reached_is_left_out():
    cells = [("c", "import torch\ndef f(a):\n    x = 1\n    return torch.exp(a) + x\nx = torch.ones(3) * 2\n"
                   "print(f(x))\n")]
    assert dict(Submission(cells).program_for("f"))["c"] == ("import torch\ndef f(a):\n    x = 1\n"
                                                            "    return torch.exp(a) + x\n")


def test_names_read_at_definition_time_resolve_to_earlier_bindings():
    cells = [("c", "D = 2\ndef f(a, d=D):\n    return a * d\nD = 3\n")]
    assert dict(Submission(cells).program_for("f"))["c"] == "D = 2\ndef f(a, d=D):\n    return a * d\n"
