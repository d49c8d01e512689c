"""The exercise model: what an instructor writes in ``assignments/<name>.py``.

An assignment module defines ``ASSIGNMENT = Assignment(...)``. Everything the
notebook, the grader and the validator need comes from here, so the
definitions are the single source of truth.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import torch

from graders.checks.static import LOOP_HINT

PARTS = ("correct", "vectorized", "fast")


@dataclass(frozen=True)
class Case:
    """One call of the function under test: a label for messages, and its arguments."""

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Example:
    """A visible example: code that sets up the arguments, and the call to check.

    ``setup`` is shown verbatim in the notebook; ``call`` is an expression in
    the exercise's function. The expected output is computed from the
    reference at build time and written into the notebook as a literal.
    """

    setup: str
    call: str
    note: str = ""


@dataclass(frozen=True)
class Points:
    correct: float = 2.0
    vectorized: float = 1.0
    fast: float = 1.0

    def of(self, part: str) -> float:
        return getattr(self, part)


@dataclass(frozen=True)
class Exercise:
    """One function to vectorize.

    - ``reference`` is the instructor's solution; its ``def`` line must equal ``signature``.
    - ``loop`` is the loop version handed to students (named ``<name>_loop``).
    - ``hidden(gen)`` yields ``Case``s: random inputs and edge cases, seeded per run.
    - ``sized(gen, n)`` returns the arguments at size ``n``: used to count ops at
      ``count_sizes`` and to time at ``bench_size``.
    """

    name: str
    signature: str
    task: str
    reference: Callable
    loop: Callable
    hidden: Callable[[torch.Generator], Iterable[Case]]
    sized: Callable[[torch.Generator, int], tuple]
    examples: Sequence[Example]
    hints: Sequence[str] = ()
    loop_hint: str = LOOP_HINT
    rtol: float = 1e-5
    atol: float = 1e-6
    forbidden: Sequence[str] = ()
    forbidden_ops: Sequence[str] = ()
    count_sizes: tuple[int, int] = (4, 16)
    bench_size: int = 64
    speedup: float = 10.0
    ref_factor: float = 3.0
    max_ops: int = 300  # absolute bounds on one counted call, next to the growth test
    max_lines: int = 200
    points: Points = Points()
    in_place: bool = False
    must_be_view: bool = False

    @property
    def loop_name(self) -> str:
        return f"{self.name}_loop"

    def grade_id(self, part: str) -> str:
        return f"{self.name}_{part}"

    def reference_source(self) -> str:
        return textwrap.dedent(inspect.getsource(self.reference))

    def loop_source(self) -> str:
        return textwrap.dedent(inspect.getsource(self.loop))

    def reference_body(self) -> str:
        """The reference's body (everything after its ``def`` line): what goes between the solution markers."""
        src = self.reference_source().splitlines()
        start = next(i for i, line in enumerate(src) if line.startswith("def "))
        return "\n".join(src[start + 1:])


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    lesson: str
    exercises: Sequence[Exercise]
    preamble: str = "import torch"
    order: int = 0

    def exercise(self, name: str) -> Exercise:
        for ex in self.exercises:
            if ex.name == name:
                return ex
        raise KeyError(f"assignment {self.name!r} has no exercise {name!r}")

    def part_of(self, grade_id: str) -> tuple[Exercise, str] | None:
        """Map an nbgrader grade_id back to (exercise, part), or None."""
        for ex in self.exercises:
            for part in PARTS:
                if grade_id == ex.grade_id(part):
                    return ex, part
        return None


def load_assignment(path: Path) -> Assignment:
    """Import one definition module by path (``assignments`` is not an installed package)."""
    path = Path(path)
    mod_name = f"vecgrade_assignments.{path.stem}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    assignment = getattr(module, "ASSIGNMENT", None)
    if not isinstance(assignment, Assignment):
        raise ValueError(f"{path} defines no ASSIGNMENT = Assignment(...)")
    if assignment.name != path.stem:
        raise ValueError(f"{path}: ASSIGNMENT.name is {assignment.name!r}, expected {path.stem!r}")
    return assignment


def load_course(assignments_dir: Path) -> dict[str, Assignment]:
    """All assignments of a course, by name, in file order."""
    files = sorted(p for p in Path(assignments_dir).glob("*.py") if not p.name.startswith("_"))
    loaded = sorted(map(load_assignment, files), key=lambda a: (a.order, a.name))
    return {a.name: a for a in loaded}
