"""Simulated students for ``vecgrade demo``: what each wrote, and what each deserves.

Only the machinery lives in the package. The classes themselves -- and the
wrong or alternative answers they submit -- live beside the definitions, in
``demo/<assignment>.py`` at the kit's root, so no working answer ships in a
wheel. Each such module defines ``roster(assignment) -> list[Persona]``,
usually ``standard_class(assignment, WRONG)`` plus students of its own.

``deserves(exercise_name)`` gives fractions of each part's points, in the
order correct, vectorized, fast (1 = full marks, 0 = none).
"""
from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat

from graders.model.exercise import Assignment, Exercise
from graders.model.notebook import answer_id, grade_id_of, is_locked_test

Deserved = tuple[float, float, float]
FULL: Deserved = (1.0, 1.0, 1.0)
CORRECT_ONLY: Deserved = (1.0, 0.0, 0.0)
NOTHING: Deserved = (0.0, 0.0, 0.0)

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


def params(ex: Exercise) -> str:
    """The parameter list of the exercise's signature, as written there."""
    return str(inspect.signature(ex.reference))[1:-1]


def loop_answer(ex: Exercise) -> str:
    """The loop version renamed to the exercise: what a student who changed nothing would hand in."""
    return re.sub(rf"\bdef {ex.loop_name}\(", f"def {ex.name}(", ex.loop_source())


def hang_answer(ex: Exercise) -> str:
    return HANG.format(name=ex.name, params=params(ex))


def anything_answer(ex: Exercise) -> str:
    return f"def {ex.name}({params(ex)}):\n    return Anything(torch.zeros(1))\n"


@dataclass
class Persona:
    student: str
    about: str
    answers: Callable[[Exercise], str | None]  # exercise -> answer cell source, None = leave the stub
    deserves: Callable[[str], Deserved]
    extra_cells: list[str] = field(default_factory=list)
    drop_grade_cells: bool = False

    def notebook(self, release_nb: nbformat.NotebookNode, assignment: Assignment) -> nbformat.NotebookNode:
        nb = nbformat.from_dict(release_nb)
        for ex in assignment.exercises:
            answer = self.answers(ex)
            if answer is None:
                continue
            for cell in nb.cells:
                if grade_id_of(cell) == answer_id(ex.name):
                    cell.source = answer
        if self.drop_grade_cells:
            nb.cells = [c for c in nb.cells if not is_locked_test(c)]
        for i, source in enumerate(self.extra_cells):
            cell = nbformat.v4.new_code_cell(source)
            cell["id"] = f"extra-{i}"
            nb.cells.insert(2, cell)
        return nb


def standard_class(assignment: Assignment, wrong: dict[str, str]) -> list[Persona]:
    """The students every assignment's demo has; ``wrong`` holds one plausible wrong answer per exercise."""
    names = [ex.name for ex in assignment.exercises]
    missing = sorted(set(names) - set(wrong))
    if missing:
        raise ValueError(f"the demo class of {assignment.name} has no wrong answer for {', '.join(missing)}")
    first, second, third = names[0], names[1], names[2]
    partly = {first: "reference", second: "loop"}

    def partial(ex: Exercise) -> str | None:
        kind = partly.get(ex.name, "reference" if ex.name != third else None)
        return {"reference": ex.reference_source(), "loop": loop_answer(ex), None: None}[kind]

    return [
        Persona("ada", "vectorized answers", lambda ex: ex.reference_source(), lambda name: FULL),
        Persona("bob", "kept the loops", loop_answer, lambda name: CORRECT_ONLY),
        Persona("cy", "vectorized but wrong", lambda ex: wrong[ex.name], lambda name: NOTHING),
        Persona("dee", f"partly right: {second} kept as a loop, {third} untouched", partial,
                lambda name: {second: CORRECT_ONLY, third: NOTHING}.get(name, FULL)),
        Persona("eve", f"an infinite loop in {second}",
                lambda ex: hang_answer(ex) if ex.name == second else ex.reference_source(),
                lambda name: NOTHING if name == second else FULL),
        Persona("fay", "a cheat: wrong answers, a tensor that equals anything, patched timers, fake passes",
                anything_answer, lambda name: NOTHING, extra_cells=[CHEAT_CELL]),
        Persona("gus", "submitted the release notebook untouched", lambda ex: None, lambda name: NOTHING),
        Persona("ivy", "vectorized answers, but deleted every grade cell", lambda ex: ex.reference_source(),
                lambda name: FULL, drop_grade_cells=True),
    ]


def demo_module(kit_root: Path, assignment_name: str):
    """``demo/<assignment>.py`` of the kit, imported by path (``demo`` is not an installed package)."""
    path = Path(kit_root) / "demo" / f"{assignment_name}.py"
    if not path.exists():
        raise FileNotFoundError(f"no demo class for {assignment_name!r}: write {path} (see CONTRIBUTING.md)")
    mod_name = f"vecgrade_demo.{assignment_name}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


def load_roster(kit_root: Path, assignment: Assignment) -> list[Persona]:
    return demo_module(kit_root, assignment.name).roster(assignment)
