"""The adversarial class, second half: attacks on the grading design of issue 7 (forged reports,
code the AST check missed, counter tricks, hung sockets and floods, leaks), and messy honest controls.
``tests/adversarial.py`` holds the first half and the ``Case`` record."""
from __future__ import annotations

from typing import Callable

from adversarial import (
    CORRECT_ONLY,
    DONE,
    ELEMENT,
    FULL,
    LOOP,
    LOOPED_BUT_FAST,
    NOTHING,
    PEEK,
    REF,
    Case,
    _edit,
    _source,
)


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

DESIGN_CASES: list = [
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
         "    left.map_(right, lambda x, y: x * y)\n    return left.to(a.dtype)\n", NOTHING),  # observed: no mark at all
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
         "    return torch.tensor(out, dtype=a.dtype).view(a.shape[0], a.shape[1], a.shape[1])\n", CORRECT_ONLY,
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
    Case("spin_on_large_inputs", "never returns on benchmark-sized inputs: \"correct\" times out on its case at "
         "the benchmark size, and gates the rest",
         "def batch_outer(a):\n    while a.shape[0] > 20:\n        pass\n    return a[:, :, None] * a[:, None, :]\n",
         NOTHING),
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
