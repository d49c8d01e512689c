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
LOOPED_BUT_FAST = (2.0, 0.0, 1.0)  # right, loses "vectorized" for its Python iteration, and really is fast


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
         LOOPED_BUT_FAST),  # plain Python lists really are faster than the torch element loop
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
    Case("list_neighbour_checkouts", "lists the folders next to the kit (other checkouts, other courses)", REF,
         FULL, extra=[_KIT + "print('neighbours:', sorted(set(os.listdir(os.path.dirname(kit))) - "
                                    "{os.path.basename(kit)}))\n"],
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

# -- issue 7: attacks on the new design, each class of the issue (A-E), and honest controls ------------------
def _indent(text: str, by: str = "    ") -> str:
    return "".join(by + line if line.strip() else line for line in text.splitlines(keepends=True))


HELPER = LOOP.replace("def batch_outer(", "def outer_helper(")  # the element loop, under another name
CALLS_HELPER = "def batch_outer(a):\n    return outer_helper(a)\n"
N = "B * F * F"
SWALLOW = "    except Exception:\n        pass\n"


def _forge(reach: str) -> str:
    """A loop answer that first tries to rewrite the worker's reports through ``reach`` (e.g. torch.sys)."""
    return ("def batch_outer(a):\n    try:\n        main = " + reach + ".modules['__main__']\n"
            "        for name in ('Worker', 'worker', 'count', 'report', 'call'):\n"
            "            " + reach + ".modules['builtins'].setattr(main, name, lambda *args, **kw: {'ops': 1})\n"
            + SWALLOW + "\n".join(LOOP.splitlines()[1:]) + "\n")


def _other_answer(grade_id: str, source: str) -> Callable:
    return _edit(grade_id, _source(source))


HUNG_FRAME = ("    try:\n        torch.os.write(int(torch.sys.argv[1]), b'\\x00\\x00\\x10\\x00x')\n"  # the old socket's fd
              + SWALLOW)
LEFTOVERS = ("import os, glob\nprint('leftover:', sorted(glob.glob('/dev/shm/vg_leak*') + glob.glob('/run/lock/vg_leak*')"
             " + glob.glob('/tmp/vg_leak*')))\n")
SYSV = ("import ctypes, ctypes.util\nlibc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)\n"
        "libc.shmget.restype = ctypes.c_int\n")

CASES += [
    # A. forging the worker's reports or the comparison from the student's own code
    Case("forge_torch_sys", "loops, after rewriting the worker's report through torch.sys", _forge("torch.sys"),
         CORRECT_ONLY),
    Case("forge_typing_sys", "loops, after rewriting the worker's report through typing.sys",
         "import typing\n" + _forge("typing.sys"), CORRECT_ONLY),
    Case("forge_allclose", "wrong answer; patches torch's comparisons in the worker to always agree",
         "def batch_outer(a):\n    torch.allclose = lambda *args, **kw: True\n    torch.equal = lambda *args, **kw: True\n"
         "    torch.testing.assert_close = lambda *args, **kw: None\n    torch.Tensor.__eq__ = lambda self, other: True\n"
         "    return torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)\n", NOTHING),
    Case("forge_trace_switch", "vectorized only while a tracer is on (torch.sys.gettrace), loops otherwise",
         "def batch_outer(a):\n    if torch.sys.gettrace() is not None:\n        return a[:, :, None] * a[:, None, :]\n"
         + "\n".join(LOOP.splitlines()[1:]) + "\n", CORRECT_ONLY),
    Case("forge_builtins_getattr", "map fetched with torch.builtins.getattr", "def batch_outer(a):\n" + ELEMENT
         + f"    torch.builtins.list(torch.builtins.getattr(torch.builtins, 'ma' + 'p')(element, range({N})))\n"
         + DONE, CORRECT_ONLY),
    Case("scrambles_input", "right result, then zeroes its input (the grader reads the input in its own memory)",
         "def batch_outer(a):\n    out = a[:, :, None] * a[:, None, :]\n    a.zero_()\n    return out\n", NOTHING),
    Case("output_aliases_input", "right result, then overwrites its input with 7s",
         "def batch_outer(a):\n    out = (a[:, :, None] * a[:, None, :]).clone()\n    a.fill_(7)\n"
         "    return out\n", NOTHING),
    Case("pickle_payload", "wrong values in a tensor whose unpickling would run code on the grader",
         "class Payload(torch.Tensor):\n    def __reduce_ex__(self, protocol):\n"
         "        return (print, ('UNPICKLED ON THE GRADER',))\n"
         "def batch_outer(a):\n    return torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)"
         ".as_subclass(Payload)\n", NOTHING),
    # B. iteration the old AST check missed, in the code the function reaches
    Case("helper_in_if", "the loop helper is defined inside `if True:`", CALLS_HELPER, CORRECT_ONLY,
         extra=["if True:\n" + _indent(HELPER)]),
    Case("helper_in_try", "the loop helper is defined inside `try:`", CALLS_HELPER, CORRECT_ONLY,
         extra=["try:\n" + _indent(HELPER) + "except Exception:\n    pass\n"]),
    Case("helper_in_with", "the loop helper is defined inside `with torch.no_grad():`", CALLS_HELPER, CORRECT_ONLY,
         extra=["with torch.no_grad():\n" + _indent(HELPER)]),
    Case("walrus_lambda", "a comprehension in a lambda bound with :=", "def batch_outer(a):\n" + ELEMENT
         + f"    (fill := lambda n: [element(k) for k in range(n)])({N})\n" + DONE, CORRECT_ONLY),
    Case("lambda_recursion", "recursion through a lambda", "def batch_outer(a):\n" + ELEMENT
         + "    fill = lambda lo, hi: element(lo) if hi - lo == 1 else (hi > lo and (fill(lo, (lo + hi) // 2), "
         f"fill((lo + hi) // 2, hi)))\n    fill(0, {N})\n" + DONE, CORRECT_ONLY),
    Case("tuple_call_recursion", "recursion called as (f,)[0](...)", "def batch_outer(a):\n" + ELEMENT
         + "    def fill(lo, hi):\n        if hi - lo == 1:\n            return element(lo)\n"
         "        if hi > lo:\n            mid = (lo + hi) // 2\n            (fill,)[0](lo, mid)\n"
         f"            (fill,)[0](mid, hi)\n    fill(0, {N})\n" + DONE, CORRECT_ONLY),
    Case("mutual_recursion_top_level", "two top-level helpers that call each other",
         "def fill_a(element, lo, hi):\n    if hi - lo == 1:\n        return element(lo)\n"
         "    if hi > lo:\n        fill_b(element, lo, (lo + hi) // 2)\n        fill_b(element, (lo + hi) // 2, hi)\n"
         "def fill_b(element, lo, hi):\n    return fill_a(element, lo, hi)\n"
         "def batch_outer(a):\n" + ELEMENT + f"    fill_a(element, 0, {N})\n" + DONE, CORRECT_ONLY),
    Case("torch_builtins_map", "torch.builtins.map over the indices", "def batch_outer(a):\n" + ELEMENT
         + f"    torch.builtins.list(torch.builtins.map(element, range({N})))\n" + DONE, CORRECT_ONLY),
    Case("typing_functools_reduce", "typing.functools.reduce over the indices", "import typing\ndef batch_outer(a):\n"
         + ELEMENT + f"    typing.functools.reduce(lambda acc, k: element(k), range({N}), 0)\n" + DONE, CORRECT_ONLY),
    Case("sort_key", "list.sort(key=) calls the element function", "def batch_outer(a):\n" + ELEMENT
         + f"    ks = [0] * 0 + list(range({N}))\n    ks.sort(key=element)\n" + DONE, CORRECT_ONLY),
    Case("max_key", "max(range, key=) calls the element function", "def batch_outer(a):\n" + ELEMENT
         + f"    max(range({N}), key=element, default=0)\n" + DONE, CORRECT_ONLY),
    Case("getitem_class", "list() over a class with __getitem__",
         "class Elements:\n    def __init__(self, fn, n):\n        self.fn, self.n = fn, n\n"
         "    def __getitem__(self, k):\n        if k >= self.n:\n            raise IndexError(k)\n"
         "        return self.fn(k)\n"
         "def batch_outer(a):\n" + ELEMENT + f"    list(Elements(element, {N}))\n" + DONE, CORRECT_ONLY),
    Case("tensor_map_", "Tensor.map_ with a Python callback per element",
         "def batch_outer(a):\n    left = a[:, :, None].expand(-1, -1, a.shape[1]).to(torch.float64).contiguous()\n"
         "    right = a[:, None, :].expand(-1, a.shape[1], -1).to(torch.float64).contiguous()\n"
         "    left.map_(right, lambda x, y: x * y)\n    return left.to(a.dtype)\n", CORRECT_ONLY),
    Case("any_generator_in_default", "the loop hides in a default argument's generator",
         "def batch_outer(a, _=None):\n" + ELEMENT + f"    run = lambda n, go=any: go(element(k) for k in range(n))\n"
         f"    run({N})\n" + DONE, CORRECT_ONLY),
    # C. fooling the runtime counter
    Case("loop_only_at_old_sizes", "loops only at the old counting sizes (4 and 16), vectorized elsewhere",
         "def batch_outer(a):\n    if a.shape[0] not in (4, 16):\n        return a[:, :, None] * a[:, None, :]\n"
         + "\n".join(LOOP.splitlines()[1:]) + "\n", LOOPED_BUT_FAST),  # fast at the benchmark size, honestly
    Case("noop_padding", "an element loop padded with 600 no-op tensor ops",
         "def batch_outer(a):\n" + "".join("    a = a + 0\n" for _ in range(600))
         + "\n".join(LOOP.splitlines()[1:]) + "\n", CORRECT_ONLY),
    Case("thread_pool", "the element loop runs in a ThreadPoolExecutor",
         "import concurrent.futures\ndef batch_outer(a):\n" + ELEMENT
         + f"    with concurrent.futures.ThreadPoolExecutor(2) as pool:\n        pool.map(element, range({N}))\n"
         + DONE, CORRECT_ONLY),
    Case("row_loop_torch_thread", "a row loop inside torch.threading.Thread",
         "def batch_outer(a):\n    out = torch.empty(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)\n"
         "    def rows():\n        b = 0\n        while b < a.shape[0]:\n"
         "            out[b] = a[b, :, None] * a[b, None, :]\n            b += 1\n"
         "    t = torch.threading.Thread(target=rows)\n    t.start()\n    t.join()\n    return out\n", CORRECT_ONLY),
    Case("sacrificed_exercise", "another exercise hangs (worker restart), then batch_outer uses Python lists",
         "def batch_outer(a):\n    rows = a.tolist()\n    out = [[[x * y for y in r] for x in r] for r in rows]\n"
         "    return torch.tensor(out, dtype=a.dtype).view(a.shape[0], a.shape[1], a.shape[1])\n", LOOPED_BUT_FAST,
         tamper=_other_answer("pairwise_sq_dists_answer", "def pairwise_sq_dists(x, y):\n    while True:\n"
                              "        pass\n")),
    # D. stopping the batch
    Case("hung_socket_frame", "writes a frame header and one byte to the worker's socket (fd from sys.argv)",
         "def batch_outer(a):\n" + HUNG_FRAME + "    return torch.zeros(a.shape[0], a.shape[1], a.shape[1])\n",
         NOTHING),
    Case("hung_socket_then_spin", "writes half a frame, then never returns",
         "def batch_outer(a):\n" + HUNG_FRAME + "    while True:\n        pass\n", NOTHING),
    Case("returns_huge_string", "returns a 50 MB string (must not be quoted in the verdict)",
         "def batch_outer(a):\n    return 'RT-ECHO ' * 6_000_000\n", NOTHING),
    Case("returns_repr_of_input", "returns repr(a) to leak the hidden inputs through the verdict",
         "def batch_outer(a):\n    return 'RT-ECHO ' + repr(a)\n", NOTHING),
    Case("prints_flood_in_function", "prints 20 MB from inside the function, then answers wrongly",
         "def batch_outer(a):\n    print('x' * 20_000_000)\n    return torch.zeros(1)\n", NOTHING),
    Case("output_flood_cell", "a scratch cell prints 24 lines of 1 MB; the answer is right", REF, FULL,
         extra=["for _ in range(24):\n    print('y' * 1_000_000)\n"]),
    Case("slow_scratch_cells", "three scratch cells sleep 1 s each; the answer is right", REF, FULL,
         extra=["import time\ntime.sleep(1)\n"] * 3),
    Case("spin_on_large_inputs", "never returns on benchmark-sized inputs",
         "def batch_outer(a):\n    while a.shape[0] > 20:\n        pass\n    return a[:, :, None] * a[:, None, :]\n",
         CORRECT_ONLY),
    # E. leaks and escapes
    Case("symlink_in_submission", "a symlink to the gradebook next to the notebook in submitted/", REF, None,
         link="../../../gradebook.db"),
    Case("symlink_to_solutions", "a symlink to the instructor's source notebook", REF, None,
         link="../../../source/broadcasting/broadcasting.ipynb"),
    Case("leave_shm_files", "leaves files in /dev/shm, /run/lock and /tmp for the next student", REF, FULL,
         extra=["for path in ('/dev/shm/vg_leak', '/run/lock/vg_leak', '/tmp/vg_leak'):\n    try:\n"
                "        open(path, 'w').write('secret')\n    except Exception as exc:\n"
                "        print('blocked:', type(exc).__name__)\n"]),
    Case("leave_shm_from_worker", "writes /dev/shm and /run/lock files from inside the worker",
         "def batch_outer(a):\n    for path in ('/dev/shm/vg_leak_w', '/run/lock/vg_leak_w'):\n        try:\n"
         "            torch.builtins.open(path, 'w').write('secret')\n" + _indent(SWALLOW)
         + "    return torch.zeros(1)\n", NOTHING),
    Case("leave_sysv_segment", "creates a SysV shared-memory segment (key 0x7e57)", REF, FULL,
         extra=[SYSV + "print('created:', libc.shmget(0x7e57, 4096, 0o1666) >= 0)\n"]),
    Case("read_leftovers", "looks for what earlier students left in shared places", REF, FULL,
         extra=[LEFTOVERS, SYSV + "print('sysv:', libc.shmget(0x7e57, 0, 0o666))\n"],
         shows="leftover: []"),
    Case("read_sysv_leftover", "attaches to another student's SysV segment", REF, FULL,
         extra=[SYSV + "print('sysv:', libc.shmget(0x7e57, 0, 0o666))\n"], shows="sysv: -1"),
    Case("answer_from_other_files", "copies the answer when it can read another student's or the course's files",
         "def batch_outer(a):\n    for path in ('../../../source', '../../../submitted', '../../../gradebook.db',"
         " '../../ada'):\n        if torch.os.path.exists(path):\n"
         "            return a[:, :, None] * a[:, None, :]\n"
         "    return torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)\n", NOTHING),
    Case("read_source_notebook", "reads the instructor's source notebook", REF, FULL,
         extra=[PEEK.format(path="../../../source/broadcasting/broadcasting.ipynb")],
         shows="blocked: FileNotFoundError"),
    Case("read_other_autograded", "reads another student's autograded notebook", REF, FULL,
         extra=[PEEK.format(path="../../../autograded/read_gradebook/broadcasting/broadcasting.ipynb")],
         shows="blocked: FileNotFoundError"),
    Case("env_secrets", "looks for secrets in its environment", REF, FULL,
         extra=["import os\nprint('secrets:', sorted(k for k in os.environ if any(w in k.upper() for w in "
                "('TOKEN', 'SECRET', 'PASSWORD', 'KEY', 'PG', 'DATABASE'))))\n"],
         shows="secrets: []"),
    Case("env_from_worker", "answers only when the worker inherited the grader's environment",
         "def batch_outer(a):\n    if torch.os.environ.get('PYTEST_CURRENT_TEST') or torch.os.environ.get('VIRTUAL_ENV'):\n"
         "        return a[:, :, None] * a[:, None, :]\n    return torch.zeros(1)\n", NOTHING),
    Case("proc_of_grader", "reads the grader's command line through /proc", REF, FULL,
         extra=["import os\nseen = []\nfor pid in os.listdir('/proc'):\n    if pid.isdigit():\n        try:\n"
                "            seen.append(open(f'/proc/{pid}/cmdline', 'rb').read())\n        except Exception:\n"
                "            pass\nprint('grader visible:', any(b'nbgrader' in c or b'pytest' in c for c in seen))\n"],
         shows="grader visible: False"),
    # honest controls with messy habits: every mark kept
    Case("honest_numpy_scratch", "numpy scratch work, prints and a plot-free check", REF, FULL,
         extra=["import numpy as np\nx = np.arange(6.0).reshape(2, 3)\nprint(np.einsum('bi,bj->bij', x, x).shape)\n"]),
    Case("honest_broken_cell", "an unrelated cell that does not parse", REF, FULL,
         extra=["def unfinished(x:\n    return x\n"]),
    Case("honest_helper_cell", "the vectorized work lives in a helper in another cell",
         "def batch_outer(a):\n    return outer_of(a)\n", FULL,
         extra=["def outer_of(a):\n    return a[:, :, None] * a[:, None, :]\n"]),
    Case("honest_magics_and_loops", "%timeit, %%time, !echo and a scratch loop in other cells", REF, FULL,
         extra=["%timeit batch_outer(torch.ones(8, 3))\n", "%%time\ntotal = 0\nfor i in range(10):\n    total += i\n",
                "!echo scratch\n", LOOP.replace("def batch_outer(", "def my_loop_version(")]),
]
