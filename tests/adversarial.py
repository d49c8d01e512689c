"""The adversarial class: submissions that try to cheat, break or escape the grader.

Each case writes `batch_outer` (the other exercises are left as stubs) and may
add cells or tamper with the notebook. ``deserves`` is the points it must get
for `batch_outer` (correct, vectorized, fast): zero on every part it cheats,
full marks on the parts it earned honestly. ``shows`` is text the student's
kernel must have printed (evidence that an escape attempt was blocked).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

import nbformat

from graders.model.notebook import grade_id_of

REF = "def batch_outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
LOOP = ("def batch_outer(a):\n    B, F = a.shape\n    out = torch.empty(B, F, F, dtype=a.dtype)\n"
        "    for b in range(B):\n        for i in range(F):\n            for j in range(F):\n"
        "                out[b, i, j] = a[b, i] * a[b, j]\n    return out\n")
WRONG = "def batch_outer(a):\n    return torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)\n"

# an element-by-element body, reused by the hidden-loop cases: `element(k)` fills flat index k
ELEMENT = ("    B, F = a.shape\n    flat = torch.empty(B * F * F, dtype=a.dtype)\n"
           "    def element(k):\n        b, r = divmod(k, F * F)\n        i, j = divmod(r, F)\n"
           "        flat[k] = a[b, i] * a[b, j]\n        return 0\n")
DONE = "    return flat.view(B, F, F)\n"

FULL, CORRECT_ONLY, NOTHING = (2.0, 1.0, 1.0), (2.0, 0.0, 0.0), (0.0, 0.0, 0.0)
LOOPED_BUT_FAST = (2.0, 0.0, 1.0)  # right, loses "vectorized" for a loop, and its timed path is vectorized


def _edit(grade_id: str, change: Callable) -> Callable:
    def tamper(nb):
        for cell in nb.cells:
            if grade_id_of(cell) == grade_id:
                change(cell)
        return nb
    return tamper


def _set(key, value):
    def change(cell):
        cell.metadata["nbgrader"][key] = value
    return change


def _source(text):
    def change(cell):
        cell.source = text
    return change


def _kernelspec(nb):
    nb.metadata["kernelspec"] = {"name": "evil", "display_name": "Evil", "language": "python"}
    return nb


def _duplicate_ids(nb):
    for cell in nb.cells:
        cell["id"] = "same"
    return nb


def _duplicate_answer(nb):
    answer = next(i for i, c in enumerate(nb.cells) if grade_id_of(c) == "batch_outer_answer")
    copy = nbformat.from_dict(json.loads(json.dumps(nb.cells[answer])))
    copy["id"] = "pasted"
    nb.cells.insert(answer + 1, copy)
    return nb


def _drop_answer_cell(nb):
    nb.cells = [c for c in nb.cells if grade_id_of(c) != "batch_outer_answer"]
    return nb


@dataclass
class Case:
    name: str
    about: str
    answer: str | None
    deserves: tuple[float, float, float] | None  # None: "could not grade" (no grade rows at all)
    extra: list[str] = field(default_factory=list)
    tamper: Callable | None = None
    raw: str | None = None  # the submitted file's bytes, when it is not a notebook at all
    link: str | None = None  # a symlink placed next to the notebook in submitted/, pointing here
    shows: str = ""
    files: dict[str, bytes] = field(default_factory=dict)  # more files next to the notebook: name -> bytes

    def write(self, release_nb, dest) -> None:
        if self.raw is not None:
            dest.write_text(self.raw)
            return
        nb = nbformat.from_dict(json.loads(json.dumps(release_nb)))
        if self.answer is not None:
            for cell in nb.cells:
                if grade_id_of(cell) == "batch_outer_answer":
                    cell.source = self.answer
        for i, source in enumerate(self.extra):
            cell = nbformat.v4.new_code_cell(source)
            cell["id"] = f"extra-{i}"
            nb.cells.insert(2 + i, cell)
        if self.tamper:
            nb = self.tamper(nb)
        dest.write_text(json.dumps(nb))
        if self.link is not None:
            (dest.parent / "notes.txt").symlink_to(self.link)
        for name, data in self.files.items():
            (dest.parent / name).write_bytes(data)


PEEK = "try:\n    print(open({path!r}, 'rb').read(40))\nexcept Exception as exc:\n    print('blocked:', type(exc).__name__)\n"

CASES = [
    # -- reading and writing what a submission must not touch -------------------------------------
    Case("read_gradebook", "reads the gradebook (holds the tests' source)", REF, FULL,
         extra=[PEEK.format(path="../../../gradebook.db")], shows="blocked: FileNotFoundError"),
    Case("read_definitions", "reads the exercise definitions to copy the reference",
         "def batch_outer(a):\n    src = open('../../../assignments/broadcasting.py').read()\n    return a\n",
         NOTHING, extra=[PEEK.format(path="../../../assignments/broadcasting.py")],
         shows="blocked: FileNotFoundError"),
    Case("read_other_submission", "reads another student's notebook", WRONG, NOTHING,
         extra=[PEEK.format(path="../../../submitted/ada/broadcasting/broadcasting.ipynb")],
         shows="blocked: FileNotFoundError"),
    Case("write_gradebook", "writes full marks into the gradebook", WRONG, NOTHING,
         extra=["import sqlite3\ntry:\n    db = sqlite3.connect('../../../gradebook.db')\n"
                "    db.execute('UPDATE grade SET auto_score = 1000')\n    db.commit()\n    print('wrote')\n"
                "except Exception as exc:\n    print('blocked:', type(exc).__name__)\n"],
         shows="blocked: OperationalError"),
    # -- loops hidden from a naive checker ------------------------------------------------------------
    Case("exec_loop", "a loop inside exec", "def batch_outer(a):\n" + ELEMENT +
         "    exec('for k in range(B * F * F):\\n    element(k)')\n" + DONE, CORRECT_ONLY),
    Case("eval_comprehension", "a comprehension inside eval", "def batch_outer(a):\n" + ELEMENT +
         "    eval('[element(k) for k in range(B * F * F)]', {'element': element, 'B': B, 'F': F})\n" + DONE,
         CORRECT_ONLY),
    Case("compile_loop", "a loop compiled at run time", "def batch_outer(a):\n" + ELEMENT +
         "    code = compile('for k in range(n):\\n    element(k)', 'x', 'exec')\n"
         "    exec(code, {'element': element, 'n': B * F * F})\n" + DONE, CORRECT_ONLY),
    Case("getattr_builtins", "`map` fetched with getattr", "import builtins\ndef batch_outer(a):\n" + ELEMENT +
         "    list(getattr(builtins, 'ma' + 'p')(element, range(B * F * F)))\n" + DONE, CORRECT_ONLY),
    Case("dunder_import", "itertools through __import__", "def batch_outer(a):\n" + ELEMENT +
         "    it = __import__('iter' + 'tools')\n    list(it.starmap(element, ((k,) for k in range(B * F * F))))\n"
         + DONE, CORRECT_ONLY),
    Case("importlib", "functools.reduce through importlib", "import importlib\ndef batch_outer(a):\n" + ELEMENT +
         "    importlib.import_module('functools').reduce(lambda acc, k: element(k), range(B * F * F), 0)\n" + DONE,
         CORRECT_ONLY),
    Case("map_filter_reduce", "map, filter and reduce", "from functools import reduce\ndef batch_outer(a):\n"
         + ELEMENT + "    reduce(lambda acc, k: element(k), filter(lambda k: k >= 0, map(abs, range(B * F * F))), 0)\n"
         + DONE, CORRECT_ONLY),
    Case("recursion", "recursion over halves of the index range", "def batch_outer(a):\n" + ELEMENT +
         "    def fill(lo, hi):\n        if hi - lo == 1:\n            return element(lo)\n"
         "        if hi > lo:\n            mid = (lo + hi) // 2\n            fill(lo, mid)\n            fill(mid, hi)\n"
         "    fill(0, B * F * F)\n" + DONE, CORRECT_ONLY),
    Case("iterator_protocol", "an iterator class driven by list()",
         "class Elements:\n    def __init__(self, fn, n):\n        self.fn, self.n, self.k = fn, n, 0\n"
         "    def __iter__(self):\n        return self\n    def __next__(self):\n"
         "        if self.k == self.n:\n            raise StopIteration\n        self.k += 1\n"
         "        return self.fn(self.k - 1)\n"
         "def batch_outer(a):\n" + ELEMENT + "    list(Elements(element, B * F * F))\n" + DONE, CORRECT_ONLY),
    Case("threads", "the loop runs in a thread", "import threading\ndef batch_outer(a):\n" + ELEMENT +
         "    def work():\n        for k in range(B * F * F):\n            element(k)\n"
         "    t = threading.Thread(target=work)\n    t.start()\n    t.join()\n" + DONE, CORRECT_ONLY),
    Case("apply_", "Tensor.apply_ over a flat index", "def batch_outer(a):\n    B, F = a.shape\n"
         "    k = torch.arange(B * F * F, dtype=torch.float64)\n"
         "    k.apply_(lambda v: float(a[int(v) // (F * F), int(v) % (F * F) // F] * a[int(v) // (F * F), int(v) % F]))\n"
         "    return k.to(a.dtype).view(B, F, F)\n", CORRECT_ONLY),
    Case("tolist", "Python lists from tolist()", "def batch_outer(a):\n    rows = a.tolist()\n"
         "    return torch.tensor([[[x * y for y in r] for x in r] for r in rows], dtype=a.dtype).view(a.shape[0], a.shape[1], a.shape[1])\n",
         CORRECT_ONLY),  # Python lists: 60x the reference's time at the benchmark size, so not fast
    Case("torchscript", "a TorchScript loop",
         "@torch.jit.script\ndef outer_loop(a: torch.Tensor) -> torch.Tensor:\n    B, F = a.shape[0], a.shape[1]\n"
         "    out = torch.empty(B, F, F, dtype=a.dtype)\n    for b in range(B):\n        for i in range(F):\n"
         "            for j in range(F):\n                out[b, i, j] = a[b, i] * a[b, j]\n    return out\n"
         "def batch_outer(a):\n    return outer_loop(a)\n", CORRECT_ONLY),
    Case("decorator", "a decorator that swaps in a loop",
         "def vectorized(fn):\n    def run(a):\n        B, F = a.shape\n        out = torch.empty(B, F, F, dtype=a.dtype)\n"
         "        for b in range(B):\n            for i in range(F):\n                for j in range(F):\n"
         "                    out[b, i, j] = a[b, i] * a[b, j]\n        return out\n    return run\n"
         "@vectorized\ndef batch_outer(a):\n    return a[:, :, None] * a[:, None, :]\n", CORRECT_ONLY),
    Case("helper_other_cell", "the loop lives in a helper in another cell",
         "def batch_outer(a):\n    return outer_helper(a)\n",
         CORRECT_ONLY, extra=[LOOP.replace("def batch_outer(", "def outer_helper(")]),
    Case("class_method", "the loop lives in a class method",
         "class Outer:\n    def compute(self, a):\n" + "\n".join("    " + line for line in LOOP.splitlines()[1:])
         + "\ndef batch_outer(a):\n    return Outer().compute(a)\n", CORRECT_ONLY),
    # -- patching the grader ------------------------------------------------------------------------
    Case("patch_timers", "loops, with every timer patched", LOOP, CORRECT_ONLY,
         extra=["import time, timeit\ntime.perf_counter = lambda: 0.0\ntime.monotonic = lambda: 0.0\n"
                "timeit.default_timer = lambda: 0.0\n"]),
    Case("patch_checker", "loops, with the checker's functions patched", LOOP, CORRECT_ONLY,
         extra=["import graders.checks.parts as gc\ngc._grows = lambda *a: False\n"
                "gc.ExerciseChecks.fast = lambda self: None\nimport graders.checks.static as st\n"
                "st.Submission.iteration_findings = lambda *a, **k: []\n"]),
    Case("caching", "returns what it returned before for the same shape",
         "CACHE = {}\ndef batch_outer(a):\n    key = tuple(a.shape)\n    if key not in CACHE:\n"
         "        CACHE[key] = a[:, :, None] * a[:, None, :]\n    return CACHE[key]\n", NOTHING),
    Case("equal_to_anything", "a tensor subclass equal to everything",
         "class Anything(torch.Tensor):\n    def __eq__(self, other):\n        return True\n"
         "    def __ne__(self, other):\n        return False\n"
         "def batch_outer(a):\n    return torch.zeros(1).as_subclass(Anything)\n", NOTHING),
    # -- breaking things ----------------------------------------------------------------------------
    Case("huge_output", "returns a 2 GB tensor", "def batch_outer(a):\n    return torch.zeros(2 ** 29)\n", NOTHING),
    Case("infinite_loop", "never returns", "def batch_outer(a):\n    while True:\n        pass\n", NOTHING),
    Case("memory_bomb", "allocates without bound", "def batch_outer(a):\n    hog = []\n    while True:\n"
         "        hog.append(torch.ones(2 ** 26))\n", NOTHING),
    Case("exit_interpreter", "os._exit inside the function", "import os\ndef batch_outer(a):\n    os._exit(0)\n",
         NOTHING),
    Case("system_exit_cell", "a scratch cell raises SystemExit; the answer is right", REF, FULL,
         extra=["raise SystemExit(0)\n"]),
    Case("fork_bomb", "forks without bound", "import os\ndef batch_outer(a):\n    while True:\n        os.fork()\n",
         NOTHING),
    # -- tampered notebooks -------------------------------------------------------------------------
    Case("edited_grade_cell", "replaced a grade cell with print('passed')", WRONG, NOTHING,
         tamper=_edit("batch_outer_correct", _source("print('passed')\n"))),
    Case("changed_points", "gave a grade cell 100 points", REF, FULL,
         tamper=_edit("batch_outer_correct", _set("points", 100))),
    Case("unlocked_loop_cell", "rewrote the read-only loop cell, then called it",
         "def batch_outer(a):\n    return batch_outer_loop(a)\n", CORRECT_ONLY,
         tamper=_edit("batch_outer_loop", lambda c: (_set("locked", False)(c),
                      _source("def batch_outer_loop(a):\n    return a[:, :, None] * a[:, None, :]\n")(c)))),
    Case("changed_kernelspec", "points the notebook at another kernel", REF, FULL, tamper=_kernelspec),
    Case("duplicate_cell_ids", "every cell has the same id", REF, FULL, tamper=_duplicate_ids),
    Case("answer_cell_moved", "deleted the answer cell and answered in a new one", None, FULL,
         extra=[REF], tamper=_drop_answer_cell),
    Case("duplicate_grade_ids", "pasted a copy of the answer cell, grade id and all", REF, FULL,
         tamper=_duplicate_answer),
    Case("not_json", "a file that is not a notebook", None, None, raw="{ this is not json"),
    # -- noise that plain nbgrader would punish ---------------------------------------------------------
    Case("stderr_warning", "a right answer whose torch call warns on stderr",
         "def batch_outer(a):\n    a = torch.tensor(a)\n    return a[:, :, None] * a[:, None, :]\n", FULL),
    Case("segfault", "crashes the interpreter", "import ctypes\ndef batch_outer(a):\n    return ctypes.string_at(0)\n",
         NOTHING),
    # -- per-exercise evidence (runtime): unrelated cells never run where the exercise is judged ---------
    Case("settrace_elsewhere", "a scratch cell switches tracing off; the answer is right", REF, FULL,
         extra=["import sys\nsys.settrace(None)\n"]),
    Case("magics_and_scratch", "numpy, time and %timeit scratch cells; the answer is right", REF, FULL,
         extra=["import numpy as np\nimport time\n", "%timeit batch_outer(torch.ones(4, 3))\n"]),
    Case("loop_except_counting_sizes", "vectorized only at the sizes the counter used to use",
         "def batch_outer(a):\n    if a.shape[0] in (4, 16):\n        return a[:, :, None] * a[:, None, :]\n"
         + ELEMENT + "    k = 0\n    while k < B * F * F:\n        element(k)\n        k += 1\n" + DONE, CORRECT_ONLY),
    Case("torch_threading_loop", "an element loop in a thread reached through torch.threading",
         "def batch_outer(a):\n" + ELEMENT + "    def work():\n        k = 0\n        while k < B * F * F:\n"
         "            element(k)\n            k += 1\n    t = torch.threading.Thread(target=work)\n"
         "    t.start()\n    t.join()\n" + DONE, CORRECT_ONLY),
]

# -- the sandbox: an allowlisted root, no inherited environment, its own namespaces (issue 7 E) --------
_KIT = "import graders, os\nkit = os.path.dirname(os.path.dirname(graders.__file__))\n"
CASES += [
    Case("read_demo_answers", "reads the kit's demo roster (working answers) beside the graders package", REF,
         FULL, extra=[_KIT + "try:\n    print(open(os.path.join(kit, 'graders', 'course', 'roster.py')).read(40))\n"
                                    "except Exception as exc:\n    print('blocked:', type(exc).__name__)\n"],
         shows="blocked: FileNotFoundError"),
    # the kernel's own scratch folder (its working folder's parent) may sit next to the kit, as in /tmp
    Case("list_neighbour_checkouts", "lists the folders next to the kit (other checkouts, other courses)", REF,
         FULL, extra=[_KIT + "print('neighbours:', sorted(set(os.listdir(os.path.dirname(kit))) - "
                                    "{os.path.basename(kit), os.path.basename(os.path.dirname(os.getcwd()))}))\n"],
         shows="neighbours: []"),
    Case("inherited_environment", "looks for the grader's environment variables (secrets)", REF, FULL,
         extra=["import os\nprint('inherited:', sorted(k for k in os.environ if k.startswith("
                "('PYTEST', 'VIRTUAL_ENV', 'SSH_', 'AWS_', 'GITHUB_', 'CI'))))\n"],
         shows="inherited: []"),
    Case("kill_init", "signals PID 1 of its namespace (signal 0: the permission check of a kill, not the kill)",
         REF, FULL,
         extra=["import os\ntry:\n    os.kill(1, 0)\n    print('may signal the init')\n"
                "except Exception as exc:\n    print('blocked:', type(exc).__name__)\n"],
         shows="blocked: PermissionError"),
    Case("host_name", "reads the grading machine's name", REF, FULL,
         extra=["import socket\nprint('host:', socket.gethostname())\n"], shows="host: sandbox"),
]


# the later halves of the class, one file per family of attacks (each imports `Case` and the answers above)
from adversarial_boundary import CASES as BOUNDARY_CASES  # noqa: E402
from adversarial_data import CASES as DATA_CASES  # noqa: E402
from adversarial_design import DESIGN_CASES  # noqa: E402
from adversarial_resources import CASES as RESOURCE_CASES  # noqa: E402
from adversarial_static import CASES as STATIC_CASES  # noqa: E402

CASES += DESIGN_CASES + STATIC_CASES + BOUNDARY_CASES + RESOURCE_CASES + DATA_CASES
