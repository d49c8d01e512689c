"""Check a course's definitions against themselves before students see them.

For every exercise, each of these is graded as a student's submission would be:

- the reference must pass all three parts;
- each of its ``alternatives`` (at least two other correct vectorized formulations) must
  pass all three parts: the tolerances and speed bars must admit every standard answer;
- the loop version must pass "correct" and fail "vectorized" (it is what students replace);
- each of its ``half_loops`` (one per axis that grows with the benchmark size: a loop over
  that axis, vectorized inside) must pass "correct" and fail "vectorized" and "fast": "fast"
  means vectorized-class speed, whichever growing axis is looped over;
- a Python-list version must fail "vectorized" and "fast";
- the stub must fail "correct".

The measured speedups and factors (each half loop's among them) are reported beside the thresholds, so that
thresholds can be calibrated on the grading machine.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

from graders.checks.submission import GradingRun, grade_submission
from graders.checks.vocabulary import Verdict
from graders.model.exercise import Assignment, Exercise

MIN_ALTERNATIVES = 2
Program = list[tuple[str, str]]


def _cell(ex: Exercise, source: str) -> tuple[str, str]:
    return (f"your `{ex.name}` cell", source)


def reference_program(assignment: Assignment) -> Program:
    return [("preamble", assignment.preamble)] + [_cell(ex, ex.reference_source()) for ex in assignment.exercises]


def loop_program(assignment: Assignment) -> Program:
    """The loop versions, each renamed to the exercise's name: what a student who changed nothing would submit."""
    return [("preamble", assignment.preamble)] + [
        _cell(ex, re.sub(rf"\bdef {ex.loop_name}\(", f"def {ex.name}(", ex.loop_source()))
        for ex in assignment.exercises]


def stub_program(assignment: Assignment) -> Program:
    return [("preamble", assignment.preamble)] + [
        _cell(ex, f"{ex.signature}\n    raise NotImplementedError()\n") for ex in assignment.exercises]


def alternative_program(assignment: Assignment, k: int) -> Program:
    """Each exercise's ``k``-th alternative as its answer (exercises with fewer are left out)."""
    return [("preamble", assignment.preamble)] + [
        _cell(ex, ex.source_as(ex.alternatives[k])) for ex in assignment.exercises if len(ex.alternatives) > k]


def half_loop_program(assignment: Assignment, k: int) -> Program:
    """Each exercise's ``k``-th half loop as its answer (exercises with fewer are left out)."""
    return [("preamble", assignment.preamble)] + [
        _cell(ex, ex.source_as(ex.half_loops[k])) for ex in assignment.exercises if len(ex.half_loops) > k]


def python_list_source(ex: Exercise) -> str:
    """A Python-list version of ``ex``: the exercise's own if it has one, else one derived from the reference.

    The derived version does the least any list-based answer must do: it takes every element of
    every input tensor and of the result through ``.tolist()`` and a comprehension, and leaves
    the arithmetic to the reference. A real list-based answer does at least this much Python-level
    work, so if this version fails "fast", so does every list-based answer.
    """
    if ex.python_list is not None:
        return ex.source_as(ex.python_list)
    helper = f"_vectorized_{ex.name}"
    result = "args[0].copy_(result)" if ex.in_place else "result"
    return ex.source_as(ex.reference, helper) + f"""

def {ex.name}(*args, **kwargs):
    elements = [[v for v in a.reshape(-1).tolist()] for a in args if isinstance(a, torch.Tensor)]
    out = {helper}(*args, **kwargs)
    values = [v for v in out.reshape(-1).tolist()]
    result = torch.tensor(values, dtype=out.dtype).reshape(out.shape)
    return {result}
"""


def python_list_program(assignment: Assignment) -> Program:
    return [("preamble", assignment.preamble)] + [_cell(ex, python_list_source(ex)) for ex in assignment.exercises]


@dataclass
class Row:
    assignment: str
    exercise: Exercise
    reference: dict[str, Verdict]
    loop: dict[str, Verdict]
    stub: dict[str, Verdict]
    alternatives: list[dict[str, Verdict]]
    half_loops: list[dict[str, Verdict]]
    python_list: dict[str, Verdict]

    @property
    def problems(self) -> list[str]:
        """What is wrong with the definitions or their benchmark sizes: these make ``validate`` fail.

        "Fast" must mean vectorized-class speed, so a half loop or a list version that passes it is a
        problem of ``bench_size`` (the looped axis too short to cost what a loop costs), and an
        alternative that fails it is a problem of ``ref_factor`` or of the reference itself."""
        ex = self.exercise
        out = [f"reference fails {p}: {v.message}" for p, v in self.reference.items() if not v.passed]
        for fn, verdicts in zip(ex.alternatives, self.alternatives, strict=True):
            out += [f"alternative `{fn.__name__}` fails {p}: {verdicts[p].message}"
                    for p in ("correct", "vectorized", "fast") if not verdicts[p].passed]
        if len(ex.alternatives) < MIN_ALTERNATIVES:
            out.append(f"{len(ex.alternatives)} alternatives, at least {MIN_ALTERNATIVES} needed")
        if self.loop["vectorized"].passed:
            out.append("the loop version passes vectorized")
        if not self.loop["correct"].passed:
            out.append(f"the loop version fails correct: {self.loop['correct'].message}")
        if not ex.half_loops:
            out.append("no half_loop (nor half_loops)")
        for fn, verdicts in zip(ex.half_loops, self.half_loops, strict=True):
            if not verdicts["correct"].passed:
                out.append(f"the half loop `{fn.__name__}` fails correct: {verdicts['correct'].message}")
            out += [f"the half loop `{fn.__name__}` passes {p}: {verdicts[p].message}"
                    for p in ("vectorized", "fast") if verdicts[p].passed]
        out += [f"the Python-list version passes {p}: {self.python_list[p].message}"
                for p in ("vectorized", "fast") if self.python_list[p].passed]
        if self.stub["correct"].passed:
            out.append("the stub passes correct")
        return out

    @property
    def speedup(self) -> float | None:
        return self.reference["fast"].figures.get("speedup")

    @property
    def half_loop_factors(self) -> list[float | None]:
        """How many times slower than the reference each half loop ran (None where it was not timed:
        stopped early as far slower, or not correct), in the order of ``half_loops``."""
        return [verdicts["fast"].figures.get("ref_factor") for verdicts in self.half_loops]

    @property
    def half_loop_factor(self) -> float | None:
        """The lowest of the half loops' factors: the one closest to passing "fast"."""
        return min((f for f in self.half_loop_factors if f is not None), default=None)

    @property
    def half_loop(self) -> dict[str, Verdict] | None:
        """The verdicts of the half loop that comes closest to passing: one that passes "fast" or
        "vectorized" if any does, else the one with the lowest factor (None without half loops)."""
        def leniency(verdicts: dict[str, Verdict]) -> tuple:
            factor = verdicts["fast"].figures.get("ref_factor")
            return (verdicts["fast"].passed, verdicts["vectorized"].passed, -(factor or float("inf")))
        return max(self.half_loops, key=leniency, default=None)

    @property
    def python_list_factor(self) -> float | None:
        return self.python_list["fast"].figures.get("ref_factor")


def validate_assignment(assignment: Assignment, seed: int = 0, only: list[str] | None = None,
                        progress: Callable[[str], None] | None = None) -> list[Row]:
    """Grade each program of the loop class (reference, loop, stub, list version, each half loop, each alternative)
    on the chosen exercises; ``progress`` gets one line as each program's grading finishes (minutes apart at
    most: a program is one grading per exercise), saying what was graded and how many of how many."""
    exercises = [ex for ex in assignment.exercises if only is None or ex.name in only]
    halves = max((len(ex.half_loops) for ex in exercises), default=0)
    alts = max((len(ex.alternatives) for ex in exercises), default=0)
    total, done, start = 4 + halves + alts, 0, time.perf_counter()

    def grade(what: str, program: Program, chosen: list[Exercise]) -> dict[str, dict[str, Verdict]]:
        nonlocal done
        graded = grade_submission(assignment, program, only=[ex.name for ex in chosen], run=run) if chosen else {}
        done += 1
        if progress is not None:
            progress(f"{assignment.name}: {what} graded on {len(chosen)} exercise(s), {done} of {total} "
                     f"({time.perf_counter() - start:.0f} s)")
        return graded

    with GradingRun(seed) as run:  # one run: one reference worker, the loop timed once
        reference, loop, stub, python_list = (grade(what, program(assignment), exercises) for what, program in (
            ("the reference", reference_program), ("the loop version", loop_program), ("the stub", stub_program),
            ("the Python-list version", python_list_program)))
        half_loops = [grade(f"half loop {k + 1}", half_loop_program(assignment, k),
                            [ex for ex in exercises if len(ex.half_loops) > k]) for k in range(halves)]
        alternatives = [grade(f"alternative {k + 1}", alternative_program(assignment, k),
                              [ex for ex in exercises if len(ex.alternatives) > k]) for k in range(alts)]
    return [Row(assignment.name, ex, reference[ex.name], loop[ex.name], stub[ex.name],
                [alternatives[k][ex.name] for k in range(len(ex.alternatives))],
                [half_loops[k][ex.name] for k in range(len(ex.half_loops))], python_list[ex.name])
            for ex in exercises]
