"""A simulated class for the ``broadcasting`` assignment: who wrote what, and what each deserves.

The demo and the end-to-end tests submit these notebooks through nbgrader
and compare the gradebook with ``deserves``: fractions of each part's points
(1 = full marks, 0 = none), by exercise, in the order correct, vectorized, fast.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import nbformat

from graders.model.exercise import Assignment
from graders.model.notebook import answer_id

WRONG = {
    "batch_outer": "def batch_outer(a):\n    return a[:, None, :] * a[:, None, :]\n",
    "pairwise_sq_dists": "def pairwise_sq_dists(x, y):\n    return (x[:, None, :] - y[None, :, :]).sum(-1) ** 2\n",
    "standardize_columns": "def standardize_columns(x, eps=1e-5):\n    return (x - x.mean(0)) / (x.std(0) + eps)\n",
    "softmax_rows": "def softmax_rows(x):\n    e = x.exp()\n    return e / e.sum(1, keepdim=True)\n",
}

ALTERNATIVE = {  # correct, vectorized, written differently from the reference
    "batch_outer": "def batch_outer(a):\n    return torch.einsum('bi,bj->bij', a, a)\n",
    "pairwise_sq_dists": ("def pairwise_sq_dists(x, y):\n"
                          "    return (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * x @ y.T\n"),
    "standardize_columns": ("def standardize_columns(x, eps=1e-5):\n"
                            "    centred = x - x.mean(0)\n"
                            "    return centred / (centred.pow(2).mean(0).sqrt() + eps)\n"),
    "softmax_rows": "def softmax_rows(x):\n    return torch.softmax(x, dim=1)\n",  # forbidden call
}

HANG = "def {name}({params}):\n    while True:\n        pass\n"

CHEAT_CELL = '''\
import sys, time, types
import torch
print("All tests passed!")
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)
time.perf_counter = lambda: 0.0
torch.allclose = lambda *args, **kwargs: True
sys.modules["graders"] = types.ModuleType("graders")

class Anything(torch.Tensor):
    def __eq__(self, other):
        return True
    __ne__ = lambda self, other: False
'''


def _params(signature: str) -> str:
    return signature[signature.index("(") + 1: signature.rindex(")")]


def loop_answer(ex) -> str:
    return re.sub(rf"\bdef {ex.loop_name}\(", f"def {ex.name}(", ex.loop_source())


@dataclass
class Persona:
    student: str
    about: str
    answers: Callable[[object], str | None]  # exercise -> answer cell source, None = leave the stub
    deserves: Callable[[str], tuple[float, float, float]]
    extra_cells: list[str] = field(default_factory=list)
    drop_grade_cells: bool = False

    def notebook(self, release_nb: nbformat.NotebookNode, assignment: Assignment) -> nbformat.NotebookNode:
        nb = nbformat.from_dict(release_nb)
        for ex in assignment.exercises:
            answer = self.answers(ex)
            if answer is None:
                continue
            for cell in nb.cells:
                if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer_id(ex.name):
                    cell.source = answer
        if self.drop_grade_cells:
            nb.cells = [c for c in nb.cells if not c.get("metadata", {}).get("nbgrader", {}).get("grade")
                        or c.metadata["nbgrader"].get("solution")]
        for i, source in enumerate(self.extra_cells):
            cell = nbformat.v4.new_code_cell(source)
            cell["id"] = f"extra-{i}"
            nb.cells.insert(2, cell)
        return nb


FULL, CORRECT_ONLY, NOTHING = (1.0, 1.0, 1.0), (1.0, 0.0, 0.0), (0.0, 0.0, 0.0)


def roster() -> list[Persona]:
    return [
        Persona("ada", "vectorized answers", lambda ex: ex.reference_source(), lambda name: FULL),
        Persona("bob", "kept the loops", loop_answer, lambda name: CORRECT_ONLY),
        Persona("cy", "vectorized but wrong", lambda ex: WRONG[ex.name], lambda name: NOTHING),
        Persona("dee", "partly right: two vectorized, one loop, one untouched",
                lambda ex: {"batch_outer": ex.reference_source(), "softmax_rows": ex.reference_source(),
                            "pairwise_sq_dists": loop_answer(ex)}.get(ex.name),
                lambda name: {"pairwise_sq_dists": CORRECT_ONLY, "standardize_columns": NOTHING}.get(name, FULL)),
        Persona("eve", "an infinite loop in pairwise_sq_dists",
                lambda ex: (HANG.format(name=ex.name, params=_params(ex.signature))
                            if ex.name == "pairwise_sq_dists" else ex.reference_source()),
                lambda name: NOTHING if name == "pairwise_sq_dists" else FULL),
        Persona("fay", "a cheat: wrong answers, a tensor that equals anything, patched timers, fake passes",
                lambda ex: f"def {ex.name}({_params(ex.signature)}):\n    return Anything(torch.zeros(1))\n",
                lambda name: NOTHING, extra_cells=[CHEAT_CELL]),
        Persona("gus", "submitted the release notebook untouched", lambda ex: None, lambda name: NOTHING),
        Persona("hal", "other correct formulations, one using a forbidden softmax",
                lambda ex: ALTERNATIVE[ex.name],
                lambda name: (1.0, 0.0, 1.0) if name == "softmax_rows" else FULL),
        Persona("ivy", "vectorized answers, but deleted every grade cell", lambda ex: ex.reference_source(),
                lambda name: FULL, drop_grade_cells=True),
    ]
