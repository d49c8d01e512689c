"""The runtime half of the self-check, in the student's kernel: work counted at two sizes, and a speed estimate.

The grader counts ATen ops (a ``TorchDispatchMode``) and Python lines of the
student's code at two input sizes; work that grows with the size means
Python-level iteration is still running. The same count runs here on inputs
that ``vecgrade build`` wrote next to the notebook (``<assignment>.inputs.pt``:
random arguments at two sizes, never a hidden case). The timing is a rough
estimate on this machine at a small size; only the grader decides "fast".
"""
from __future__ import annotations

import linecache
import sys
import time
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def inputs_path(assignment: str) -> Path:
    return Path(f"{assignment}.inputs.pt")


def load_inputs(assignment: str) -> dict | None:
    """{exercise: {"sizes": (n1, n2), "args": [args at n1, args at n2]}}, or None when the file is not here."""
    path = inputs_path(assignment)
    if not path.exists():
        return None
    return torch.load(path, weights_only=True)


def _clone(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _is_cell_code(filename: str) -> bool:
    """Code the student typed: IPython keeps each cell's source in linecache with no file time."""
    if filename.startswith("<") and not filename.startswith("<frozen"):
        return True
    entry = linecache.cache.get(filename)
    return entry is not None and len(entry) == 4 and entry[1] is None


def count_work(fn, args) -> dict:
    """ATen ops by name and Python lines of cell code run by one call of ``fn`` (after a warm-up call)."""
    ops: dict[str, int] = {}
    lines = [0]

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            key = str(func.overloadpacket.__name__)
            ops[key] = ops.get(key, 0) + 1
            return func(*args, **(kwargs or {}))

    def tracer(frame, event, arg):
        if not _is_cell_code(frame.f_code.co_filename):
            return None
        if event == "line":
            lines[0] += 1
        return tracer

    fn(*_clone(args))
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        with Counter():
            fn(*_clone(args))
    finally:
        sys.settrace(previous)
    return {"ops": ops, "lines": lines[0]}


def best_time(fn, args, budget: float = 0.5, reps: int = 5) -> float:
    """The fastest of a few calls, stopping early once ``budget`` seconds are spent."""
    best, spent = float("inf"), 0.0
    for _ in range(reps):
        a = _clone(args)
        start = time.perf_counter()
        fn(*a)
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
        if spent > budget:
            break
    return best


