"""The libraries of the checked subset, resolved in the real modules.

A name in the student's code that resolves into one of these libraries (``F.softmax`` after ``import
torch.nn.functional as F``) is looked up in the real module, so a module-valued step outside the
allowlist (``torch.sys``, ``typing.functools``) is seen for what it is, whatever it is called locally.
"""
from __future__ import annotations

import functools
import importlib
import sys
import types

LIBRARY_ROOTS = ("torch", "einops", "math", "typing")
ALLOWED_IMPORT_ROOTS = LIBRARY_ROOTS + ("__future__",)
# einops by module, not by prefix: `einops.tests` (subprocess, pickle) and the other frameworks' layers are out
ALLOWED_MODULES = {
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg", "torch.special", "torch.fft",
    "torch.types", "math", "typing", "__future__",
    "einops", "einops.einops", "einops.packing", "einops.parsing", "einops.layers", "einops.layers.torch",
}
# names imported from a module that is itself outside the subset (the rest of `torch.func` stays outside;
# `display` from IPython.display is bound to the grading child's discard, as the bare name is: graders.sandbox.worker)
ALLOWED_FROM = {"torch.func": {"vmap"}, "IPython.display": {"display"}}
SUBSET = "torch, torch.nn, torch.nn.functional, torch.linalg, torch.special, torch.fft, einops, math and typing"
# on an object whose origin is unknown (a call's result, a container item) these names lead out of the
# subset: standard modules that torch's own modules hold as attributes, and frame/code introspection
ESCAPE_NAMES = {
    "subprocess", "shutil", "socket", "ctypes", "pickle", "marshal", "importlib", "inspect", "traceback", "gc",
    "weakref", "signal", "tempfile", "pathlib", "linecache", "dis", "concurrent", "queue", "asyncio", "mmap",
    "resource", "posix", "threading", "multiprocessing", "builtins", "sys", "os", "atexit", "pkgutil", "runpy",
    "site", "contextvars", "copyreg", "functools", "itertools", "operator", "glob", "platform", "unittest",
    "f_globals", "f_locals", "f_back", "f_builtins", "f_code", "gi_frame", "gi_code", "cr_frame", "ag_frame",
    "tb_frame", "tb_next", "co_code", "co_consts",
}


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()  # what a name resolves to when it is not a library object the checker can find


def allowed_module(name: str) -> bool:
    return name in ALLOWED_MODULES


@functools.lru_cache(maxsize=None)
def library_object(qual: str):
    """The real object ``qual`` names (``torch.nn.functional.softmax``), or UNKNOWN."""
    root, *rest = qual.split(".")
    if root not in LIBRARY_ROOTS:
        return UNKNOWN
    try:
        obj = importlib.import_module(root)
        for i, part in enumerate(rest):
            if not hasattr(obj, part) and isinstance(obj, types.ModuleType) and not part.startswith("_"):
                importlib.import_module(".".join([root, *rest[: i + 1]]))  # a submodule not imported yet
            obj = getattr(obj, part)
    except Exception:  # an attribute that does not exist fails at run time, not here
        return UNKNOWN
    return obj


@functools.lru_cache(maxsize=1)
def foreign_module_names() -> frozenset[str]:
    """Attribute names under which an allowed module exposes a module outside the subset (sys, os,
    builtins, threading, functools ...): flagged on ANY object, so an alias cannot hide them.
    Tensor methods of the same name (``cuda``, ``cpu`` ...) are left to the resolved checks.

    Computed once, from the allowed modules' own namespaces after importing them all, so the answer
    does not depend on what happened to be imported before the first check."""
    import torch  # noqa: PLC0415  (lazy: the grader's static half imports torch only when it checks)
    for mod in sorted(ALLOWED_MODULES - {"__future__"}):
        importlib.import_module(mod)
    foreign: set[str] = set()
    allowed: set[str] = set()
    for mod in sorted(ALLOWED_MODULES - {"__future__"}):
        m = sys.modules[mod]
        for n in dir(m):
            v = getattr(m, n, None)
            if isinstance(v, types.ModuleType):
                (allowed if allowed_module(v.__name__) else foreign).add(n)
    foreign |= set(getattr(torch, "_lazy_modules", ()))  # torch's modules loaded on first use (`torch.onnx`)
    return frozenset((foreign - allowed - set(dir(torch.Tensor)) - set(dir(torch.nn.Module))) | ESCAPE_NAMES)
