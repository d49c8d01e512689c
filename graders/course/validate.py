"""Check a course's definitions against themselves before students see them.

For every exercise: the reference must pass all three parts, the loop version
must fail "vectorized" (it is the thing students replace), and the stub must
fail "correct". The reference's measured speedup is reported beside the
threshold, so thresholds can be calibrated on the grading machine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from graders.checks.parts import Verdict
from graders.model.exercise import Assignment, Exercise
from graders.checks.submission import GradingRun, grade_submission


def reference_program(assignment: Assignment) -> list[tuple[str, str]]:
    return [("preamble", assignment.preamble)] + [
        (f"your `{ex.name}` cell", ex.reference_source()) for ex in assignment.exercises]


def loop_program(assignment: Assignment) -> list[tuple[str, str]]:
    """The loop versions, each renamed to the exercise's name: what a student who changed nothing would submit."""
    return [("preamble", assignment.preamble)] + [
        (f"your `{ex.name}` cell", re.sub(rf"\bdef {ex.loop_name}\(", f"def {ex.name}(", ex.loop_source()))
        for ex in assignment.exercises]


def stub_program(assignment: Assignment) -> list[tuple[str, str]]:
    return [("preamble", assignment.preamble)] + [
        (f"your `{ex.name}` cell", f"{ex.signature}\n    raise NotImplementedError()\n")
        for ex in assignment.exercises]


@dataclass
class Row:
    assignment: str
    exercise: Exercise
    reference: dict[str, Verdict]
    loop: dict[str, Verdict]
    stub: dict[str, Verdict]

    @property
    def problems(self) -> list[str]:
        out = [f"reference fails {p}: {v.message}" for p, v in self.reference.items() if not v.passed]
        if self.loop["vectorized"].passed:
            out.append("the loop version passes vectorized")
        if not self.loop["correct"].passed:
            out.append(f"the loop version fails correct: {self.loop['correct'].message}")
        if self.stub["correct"].passed:
            out.append("the stub passes correct")
        return out

    @property
    def speedup(self) -> float | None:
        return self.reference["fast"].figures.get("speedup")


def validate_assignment(assignment: Assignment, seed: int = 0, only: list[str] | None = None) -> list[Row]:
    with GradingRun(seed) as run:  # one run: one reference worker, the loop timed once
        runs = {kind: grade_submission(assignment, program(assignment), only=only, run=run)
                for kind, program in (("reference", reference_program), ("loop", loop_program),
                                      ("stub", stub_program))}
    return [Row(assignment.name, ex, runs["reference"][ex.name], runs["loop"][ex.name], runs["stub"][ex.name])
            for ex in assignment.exercises if only is None or ex.name in only]
