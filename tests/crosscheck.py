"""What every ``test_crosscheck_<assignment>.py`` needs, written once.

The cross-checks compare each reference with torch built-ins (or a plain
independent version) on hundreds of random inputs, the loop versions on fewer,
and inspect the hidden cases. They all reach the definitions the same way and
need the same non-contiguous copies of a tensor as the hidden cases use.
"""
from __future__ import annotations

import torch

from graders.checks.submission import grade_submission
from graders.model import inputs
from graders.model.exercise import Assignment, load_assignment

from tests.testkit import ROOT

LAYOUTS = inputs.LAYOUTS


class Definitions:
    """One assignment's definitions, as the cross-checks read them."""

    def __init__(self, assignment_name: str):
        self.assignment: Assignment = load_assignment(ROOT / "assignments" / f"{assignment_name}.py")

    def ref(self, name):
        return self.assignment.exercise(name).reference

    def loop(self, name):
        return self.assignment.exercise(name).loop

    def hidden_cases(self, name, seed=0):
        return list(self.assignment.exercise(name).hidden(torch.Generator().manual_seed(seed)))

    def grade(self, answers: dict[str, str], seed=0):
        """Verdicts for a submission made of ``answers`` (exercise name -> cell source), other exercises absent."""
        cells = [("preamble", self.assignment.preamble)]
        cells += [(f"your `{name}` cell", source) for name, source in answers.items()]
        return grade_submission(self.assignment, cells, seed=seed, only=list(answers))


def lay_out(t: torch.Tensor, how: str) -> torch.Tensor:
    """The same values as ``t``, stored as ``how`` says: the layouts of the hidden cases (graders.model.inputs),
    plus ``channels_last`` for 4-D tensors."""
    if how == "channels_last":
        return t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t
    return inputs.lay_out(t, how)


def draw(gen: torch.Generator, low: int, high: int) -> int:
    """A Python int in [low, high), drawn from ``gen``."""
    return int(torch.randint(low, high, (1,), generator=gen))
