"""The adversarial class, issue 18 A, F: code the checker never checked, and honest work that lost marks.

Each entry is a `Case` of tests/adversarial.py (an answer for `batch_outer`, the marks it deserves, extra cells
or tampering); tests/test_adversarial.py grades every case through nbgrader."""
from __future__ import annotations

from adversarial import CORRECT_ONLY, DONE, ELEMENT, FULL, LOOP, LOOPED_BUT_FAST, NOTHING, REF, Case

CASES: list = []

# -- A (B's part): the allowlist's callables that run code or strings where the checker cannot follow ----------
# Each answer is right, so it keeps "correct" (judged from the outputs the grader reads itself); code outside the
# checked subset costs "vectorized" and "fast" (CORRECT_ONLY), a higher-order call that only iterates costs
# "vectorized" alone (LOOPED_BUT_FAST) or "fast" as well when it is slow.
_OUTER = "a[:, :, None] * a[:, None, :]"
_N = "B * F * F"
CASES += [
    Case("typing_hints_loop", "the element loop in a string annotation, run by typing.get_type_hints",
         "import typing\ndef batch_outer(a):\n" + ELEMENT + "    def spec(x: '[element(k) for k in range(n)]'):\n"
         f"        pass\n    typing.get_type_hints(spec, globalns={{'element': element, 'n': {_N}}})\n" + DONE,
         CORRECT_ONLY),
    Case("typing_hints_import", "__import__ in a string annotation, run by typing.get_type_hints",
         "import typing\ndef batch_outer(a):\n    def spec(x: \"__import__('os').getpid()\"):\n        pass\n"
         f"    typing.get_type_hints(spec)\n    return {_OUTER}\n", CORRECT_ONLY),
    Case("class_hints_threading", "a class body's string annotation imports threading through get_type_hints",
         "import typing\nclass Spec:\n    x: \"__import__('threading').active_count()\"\n"
         f"def batch_outer(a):\n    typing.get_type_hints(Spec)\n    return {_OUTER}\n", CORRECT_ONLY),
    Case("forward_hook", "the result passes through a forward hook of an nn.Module",
         "def batch_outer(a):\n    m = torch.nn.Identity()\n    m.register_forward_hook(lambda mod, inp, out: out * 1)\n"
         f"    return m({_OUTER})\n", CORRECT_ONLY),
    Case("forward_pre_hook", "the input passes through a forward pre-hook",
         "def batch_outer(a):\n    m = torch.nn.Identity()\n    m.register_forward_pre_hook(lambda mod, inp: (inp[0] * 1,))\n"
         f"    return m({_OUTER})\n", CORRECT_ONLY),
    Case("module_apply", "Module.apply over a Sequential, vectorized work (iteration only: the timing stands)",
         "def batch_outer(a):\n    m = torch.nn.Sequential(torch.nn.Identity())\n    m.apply(lambda sub: None)\n"
         f"    return m({_OUTER})\n", LOOPED_BUT_FAST),
    # an output that is not a plain torch.Tensor is refused before anything reads it, on every call (B2)
    Case("torch_function_output", "returns a Tensor subclass whose __torch_function__ runs in the worker's encoding",
         "class Sly(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
         "        return super().__torch_function__(func, types, args, kwargs or {})\n"
         f"def batch_outer(a):\n    return ({_OUTER}).as_subclass(Sly)\n", NOTHING),
    Case("parameter_subclass", "builds the result as an nn.Parameter subclass",
         f"class P(torch.nn.Parameter):\n    pass\ndef batch_outer(a):\n    return P({_OUTER}, requires_grad=False).detach()\n",
         CORRECT_ONLY),
    Case("as_subclass", "casts the result with as_subclass", f"def batch_outer(a):\n    return ({_OUTER}).as_subclass("
         "torch.nn.Parameter).detach()\n", CORRECT_ONLY),
    Case("while_loop", "torch.while_loop (run through torch.compile)",
         "def batch_outer(a):\n    start = (torch.tensor(0), torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype))\n"
         "    _, out = torch.while_loop(lambda i, o: i < 1, lambda i, o: (i + 1, (a[:, :, None] * a[:, None, :])"
         ".contiguous()), start)\n    return out\n", CORRECT_ONLY),
    Case("torch_cond", "torch.cond (run through torch.compile)",
         "def batch_outer(a):\n    return torch.cond(a.numel() >= 0, lambda x: x[:, :, None] * x[:, None, :], "
         "lambda x: x[:, :, None] * x[:, None, :], (a,))\n", CORRECT_ONLY),
    Case("torch_save_load", "round-trips its input through torch.save and torch.load (a pickle)",
         "def batch_outer(a):\n    torch.save(a, '/tmp/vg_a.pt')\n    b = torch.load('/tmp/vg_a.pt')\n"
         "    return b[:, :, None] * b[:, None, :]\n", CORRECT_ONLY),
    Case("type_by_string", "Tensor.type with a string (it imports the module the string names)",
         f"def batch_outer(a):\n    return ({_OUTER}).type(a.type())\n", CORRECT_ONLY),
    Case("format_reads_attributes", "a format string that reads attributes", "def batch_outer(a):\n"
         f"    tag = '{{0.__class__.__name__}}'.format(a)\n    return {_OUTER} if tag else a\n", CORRECT_ONLY),
    Case("patch_einsum", "replaces torch.einsum inside its function, then calls it",
         "def batch_outer(a):\n    torch.einsum = lambda eq, x, y: x[:, :, None] * y[:, None, :]\n"
         "    return torch.einsum('bi,bj->bij', a, a)\n", CORRECT_ONLY),
    Case("disable_torch_function", "computes under torch.DisableTorchFunction (the dispatcher)",
         f"def batch_outer(a):\n    with torch.DisableTorchFunction():\n        return {_OUTER}\n", CORRECT_ONLY),
    Case("set_flush_denormal", "changes torch's global float settings inside the function",
         f"def batch_outer(a):\n    torch.set_flush_denormal(True)\n    return {_OUTER}\n", CORRECT_ONLY),
    Case("func_grad", "uses torch.func.grad (the rest of torch.func stays outside)",
         "def batch_outer(a):\n    g = torch.func.grad(lambda x: (x * x).sum() / 2)(a.double()).to(a.dtype)\n"
         "    return g[:, :, None] * a[:, None, :]\n", CORRECT_ONLY),
    Case("vmap_chunked", "vmap with chunk_size=1: the function runs once per row, in Python",
         f"def batch_outer(a):\n    if a.shape[0] == 0:\n        return {_OUTER}\n"
         "    return torch.vmap(lambda r: r[:, None] * r[None, :], chunk_size=1)(a)\n", CORRECT_ONLY),
    Case("vmap_of_a_loop", "vmap over a function that loops over the features",
         "def row(r):\n    return torch.stack([r * r[j] for j in range(r.shape[0])], 1)\n"
         f"def batch_outer(a):\n    if a.shape[0] == 0 or a.shape[1] == 0:\n        return {_OUTER}\n"
         "    return torch.vmap(row)(a)\n", CORRECT_ONLY),
    Case("einops_tests_popen", "imports Popen from einops.tests (einops is allowed module by module)",
         f"from einops.tests.run_tests import Popen\ndef batch_outer(a):\n    assert Popen\n    return {_OUTER}\n",
         CORRECT_ONLY),
    Case("stored_lambda_recursion", "recursion through a lambda stored in a dict item",
         "OPS = {}\nOPS['fill'] = lambda el, lo, hi: el(lo) if hi - lo == 1 else (hi > lo and (OPS['fill'](el, lo, "
         "(lo + hi) // 2), OPS['fill'](el, (lo + hi) // 2, hi)))\ndef batch_outer(a):\n" + ELEMENT
         + f"    OPS['fill'](element, 0, {_N})\n" + DONE, CORRECT_ONLY),
    Case("tuple_lambda_recursion", "recursion through a lambda bound by a tuple assignment",
         "fill, START = (lambda el, lo, hi: el(lo) if hi - lo == 1 else (hi > lo and (fill(el, lo, (lo + hi) // 2), "
         "fill(el, (lo + hi) // 2, hi)))), 0\ndef batch_outer(a):\n" + ELEMENT + f"    fill(element, START, {_N})\n"
         + DONE, CORRECT_ONLY),
]

# -- issue 18 A (helper A): the child runs exactly the checked code; F: honest habits keep their marks ---------
_SWAP = "K = 1; exec('def batch_outer(a):\\n    return a[:, :, None] * a[:, None, :]')\n"
_ZEROS_K = "def batch_outer(a):\n    return torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype) * K\n"
_FILL = ("fill = lambda a, lo, hi: a[lo:hi, :, None] * a[lo:hi, None, :] if hi - lo <= 1 else "
         "torch.cat([fill(a, lo, (lo + hi) // 2), fill(a, (lo + hi) // 2, hi)])\n")
_CALLS_FILL = ("def batch_outer(a):\n    return fill(a, 0, a.shape[0]) if a.shape[0] else "
               "a[:, :, None] * a[:, None, :]\n")
_SHIFTED = "def batch_outer(a):\n    return a[:, :, None] * (a[:, None, :] + SETTINGS['shift'])\n"
_OWN_DISPLAY = LOOP.replace("def batch_outer(a):", "def display(a):") + "def batch_outer(a):\n    return display(a)\n"
F_CASES = [
    Case("semicolon_exec_swap", "a wrong answer whose reached line also execs a right one after `;`",
         _ZEROS_K + _SWAP, NOTHING),
    Case("semicolon_scratch", "an unused numpy import and a print share the answer's import line", REF, FULL,
         extra=["import torch; import numpy as np; print(np.zeros(2))\n"]),
    Case("string_annotations", "string annotations that would exit the process if evaluated",
         "def batch_outer(a: \"__import__('os')._exit(3)\") -> \"__import__('os')._exit(4)\":\n"
         "    return a[:, :, None] * a[:, None, :]\n", FULL),
    Case("exec_in_an_annotation", "an annotation that execs a loop into the answer at definition time",
         "def batch_outer(a: exec('import builtins') or torch.Tensor):\n    return a[:, :, None] * a[:, None, :]\n",
         CORRECT_ONLY),
    # F1: display
    Case("display_in_the_answer", "display() and print() inside the answer", "def batch_outer(a):\n"
         "    out = a[:, :, None] * a[:, None, :]\n    display(out.shape)\n    print(out.dtype)\n    return out\n",
         FULL),
    Case("own_display_loop", "a `display` of its own that loops over the elements", _OWN_DISPLAY, CORRECT_ONLY),
    # F3, F4: reads are reads; changes through aliases are changes
    Case("reads_a_constant_in_scratch", "a scratch loop only reads the answer's table through methods",
         _SHIFTED, FULL, extra=["SETTINGS = {'shift': 0}\n",
                                "for k in SETTINGS.keys():\n    print(k, SETTINGS.get(k), len(SETTINGS))\n"]),
    Case("alias_change", "the answer's setting changed through an alias (`s = SETTINGS; s['shift'] = 0`)",
         _SHIFTED, FULL, extra=["SETTINGS = {'shift': 1}\n", "s = SETTINGS\ns['shift'] = 0\n"]),
    Case("alias_change_in_a_loop", "the answer's setting changed through an alias, in a module-level loop",
         _SHIFTED, LOOPED_BUT_FAST, extra=["SETTINGS = {'shift': 1}\n",
                                           "s = SETTINGS\nfor k in range(20):\n    s['shift'] = 0\n"]),
    # F5: recursion through a module-level lambda, graded with the whole notebook
    Case("module_lambda_recursion", "divide and conquer through a module-level lambda", _FILL + _CALLS_FILL,
         CORRECT_ONLY),
]
CASES += F_CASES
