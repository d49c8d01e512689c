"""Issue 18 (A2, F3, F4, F5), the program slice: what an exercise's program holds is the code the checker checks,
statement by statement; reads are not changes, changes through aliases are; the slice does not depend on the
order names are met. Each rule both ways."""
import json
import subprocess
import sys

import pytest

from graders.checks.static import Submission

from tests.testkit import ROOT


def program(cells, function="f") -> str:
    return "".join(source for _, source in Submission(cells).program_for(function))


def findings(cells, function="f") -> list[str]:
    return [f.what for f in Submission(cells).iteration_findings(function)]


# -- A2: the program is the chosen statements' own source ----------------------------------------------
def test_a_second_statement_on_a_chosen_line_is_left_out():
    cells = [("c", "import torch; import os; os.system('true')\nK = 2; torch.Tensor.add = None\n"
                   "def f(a):\n    return torch.exp(a) * K\n")]
    lines = dict(Submission(cells).program_for("f"))["c"].split("\n")
    assert lines[:4] == ["import torch", "K = 2", "def f(a):", "    return torch.exp(a) * K"]
    assert findings(cells) == []  # what was left out costs nothing
    both = [("c", "import torch\nK = 2; L = 3\ndef f(a):\n    return a * K * L\n")]
    assert dict(Submission(both).program_for("f"))["c"].split("\n")[1] == "K = 2; L = 3"  # both chosen: both kept


def test_a_chosen_statement_that_shares_a_line_with_a_loop_keeps_only_itself():
    cells = [("c", "T = [0, 1]; [print(t) for t in T]\ndef f(a):\n    return a + T[0]\n")]
    assert "print" not in program(cells) and findings(cells) == []
    looping = [("c", "T = [0, 1]; T.extend([t for t in range(30)])\ndef f(a):\n    return a + T[0]\n")]
    assert "list comprehension" in findings(looping)  # a change of T on the same line is chosen, and checked


# -- F3: reading a constant through a method is not a change -------------------------------------------
READS = ["for k in MODES.keys():\n    print(k)\n", "for v in OFFSETS.tolist():\n    print(v)\n",
         "for i in range(len(OFFSETS)):\n    print(OFFSETS[i], MODES.get('a'), MODES.items())\n",
         "print(sorted(MODES.values()), OFFSETS.sum().item(), OFFSETS.clone().add_(1))\n"]
CHANGES = ["for i in range(20):\n    OFFSETS[i] = 0.0\n", "for k in range(20):\n    MODES.update(a=k)\n",
           "for i in range(20):\n    OFFSETS.add_(1)\n", "for k in range(20):\n    MODES['a'] += 1\n",
           "for i in range(20):\n    torch.nn.init.zeros_(OFFSETS)\n", "for i in range(20):\n    torch.add(OFFSETS, 1, out=OFFSETS)\n",
           "for k in range(20):\n    setattr(BOX, 'a', k)\n", "for i in range(20):\n    BOX.bump()\n"]
TABLES = ("import torch\nMODES = {'a': 1}\nOFFSETS = torch.zeros(3)\nclass Box:\n    a = 0\n"
          "    def bump(self):\n        self.a += 1\nBOX = Box()\n")
USES = "def f(x):\n    return x + OFFSETS[0] + MODES['a'] + BOX.a\n"


@pytest.mark.parametrize("scratch", READS)
def test_a_scratch_cell_that_only_reads_is_not_part_of_the_program(scratch):
    cells = [("tables", TABLES), ("answer", USES), ("scratch", scratch)]
    assert "scratch" not in dict(Submission(cells).program_for("f")) and findings(cells) == []


@pytest.mark.parametrize("scratch", CHANGES)
def test_a_scratch_cell_that_changes_a_value_in_place_is(scratch):
    cells = [("tables", TABLES), ("answer", USES), ("scratch", scratch)]
    assert "scratch" in dict(Submission(cells).program_for("f")) and "`for` loop" in findings(cells)


# -- F4: a change through an alias is a change of the original ------------------------------------------
ALIASED = [  # (an alias, a change through it, what the answer reads)
    ("s = SETTINGS\n", "s['shift'] = 0.0\n", "SETTINGS['shift']"),
    ("w = W.view(-1)\n", "w[0] = 5.0\n", "W[0]"),
    ("row = T[0]\n", "row.fill_(0.0)\n", "T[0]"),
    ("row = T[0]\nr = row\n", "r += 1\n", "T[0]"),  # transitively; `+=` on a tensor is in place
    ("pass\n", "for row in T:\n    row.mul_(2)\n", "T[0]"),
    ("a, b = T.unbind()\n", "b.zero_()\n", "T[0]"),
    ("v = W\n", "W[1] = 2.0\n", "v[0]"),  # the other way: a change of the base is a change of its alias
]
BASES = "import torch\nSETTINGS = {'shift': 1.0}\nW = torch.ones(4)\nT = torch.ones(2, 3)\n"


@pytest.mark.parametrize("alias, change, read", ALIASED)
def test_a_change_through_an_alias_is_in_the_program(alias, change, read):
    cells = [("bases", BASES), ("alias", alias), ("answer", f"def f(x):\n    return x + {read}\n"),
             ("change", change)]
    assert "change" in dict(Submission(cells).program_for("f"))
    unrelated = [("bases", BASES), ("alias", alias), ("answer", "def f(x):\n    return x + 1\n"), ("change", change)]
    assert "change" not in dict(Submission(unrelated).program_for("f"))


def test_an_honest_alias_change_is_computed_as_the_kernel_did():
    cells = [("bases", BASES), ("answer", "def f(x):\n    return x + SETTINGS['shift']\n"),
             ("alias", "s = SETTINGS\ns['shift'] = 0.0\n")]
    namespace: dict = {}
    for label, source in Submission(cells).program_for("f"):
        exec(compile(source, label, "exec"), namespace)
    assert namespace["f"](1.0) == 1.0


def test_names_bound_to_constants_share_nothing():
    cells = [("c", "import torch\nN = 3\nn = N\n"), ("answer", "def f(x):\n    return x * N\n"),
             ("scratch", "for i in range(40):\n    n += i\n")]
    assert "scratch" not in dict(Submission(cells).program_for("f")) and findings(cells) == []
    mutable = [("c", "import torch\nN = [3]\nn = N\n"), ("answer", "def f(x):\n    return x * N[0]\n"),
               ("scratch", "for i in range(40):\n    n += [i]\n")]
    assert "scratch" in dict(Submission(mutable).program_for("f"))


def test_a_function_of_ones_own_that_changes_its_argument_changes_it():
    defs = "import torch\nW = torch.ones(3)\ndef normalize(t):\n    t /= t.norm()\ndef show(t):\n    print(t.sum())\n"
    cells = [("defs", defs), ("answer", "def f(x):\n    return x * W\n"), ("setup", "normalize(W)\n"),
             ("scratch", "show(W)\n")]
    prog = dict(Submission(cells).program_for("f"))
    assert "setup" in prog and "scratch" not in prog


# -- F5: the slice is a closure: the order names are met in (set order, hash seed) changes nothing ----------
PROBE = ("import json, sys\nfrom graders.checks.static import Submission\ncells = json.loads(sys.argv[1])\n"
         "s = Submission([tuple(c) for c in cells])\n"
         "print(json.dumps([s.program_for('f'), [f.what for f in s.iteration_findings('f')]]))\n")
TWO_NAMES = [("c", "import torch\nOPS, N = {}, 3\nW, V = torch.ones(2), torch.ones(2)\n"),
             ("set", "OPS['scale'] = 2.0\nV.mul_(3)\n"),
             ("answer", "def f(x):\n    return x * OPS['scale'] * N * W * V\n")]


def test_the_program_does_not_depend_on_the_hash_seed():
    outs = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        run = subprocess.run([sys.executable, "-c", PROBE, json.dumps(TWO_NAMES)], capture_output=True, text=True,
                             cwd=ROOT, env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}, check=True)
        outs.add(run.stdout)
    assert len(outs) == 1
    prog, found = json.loads(outs.pop())
    assert "OPS['scale'] = 2.0" in dict(prog)["set"] and "V.mul_(3)" in dict(prog)["set"] and found == []
