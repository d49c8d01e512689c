"""Regression answers for ``calibrate.py``: formulations whose verdict must hold on every seed.

Issue 29: a histogram-based ``confusion_matrix`` (its float bins miscount at the benchmark size) and an
integer-indexing ``patchify`` (about 3.5x the reference) must lose a part; a stacked-offsets
``nhwc_to_nchw_offsets`` (about 1.8x) must pass all three. ``check`` grades each, alone, in one run per seed.
"""
from __future__ import annotations

from dataclasses import dataclass

from graders.checks.submission import GradingRun, grade_submission
from graders.model.exercise import Assignment


@dataclass(frozen=True)
class Regression:
    """An answer (``source`` defines the exercise's function) and whether it must pass all three parts."""

    assignment: str
    exercise: str
    about: str
    source: str
    passes: bool


REGRESSIONS = (
    Regression("scatter", "confusion_matrix", "histc over flat indices", """\
def confusion_matrix(pred, target, num_classes):
    flat = (target * num_classes + pred).float()
    counts = torch.histc(flat, bins=num_classes * num_classes, min=0, max=num_classes * num_classes - 1)
    return counts.long().view(num_classes, num_classes)
""", passes=False),
    Regression("einops", "patchify", "integer-array indexing of the patches", """\
def patchify(images, p):
    B, C, H, W = images.shape
    b = torch.arange(B)[:, None, None, None, None, None]
    h = torch.arange(H // p)[:, None, None, None, None] * p + torch.arange(p)[:, None, None]
    w = torch.arange(W // p)[:, None, None, None] * p + torch.arange(p)[:, None]
    return images[b, torch.arange(C), h, w].reshape(B, (H // p) * (W // p), p * p * C)
""", passes=False),
    Regression("strides", "nhwc_to_nchw_offsets", "stacked index grids times the strides", """\
def nhwc_to_nchw_offsets(shape):
    N, H, W, C = shape
    grids = torch.stack(torch.meshgrid(torch.arange(N), torch.arange(C), torch.arange(H), torch.arange(W),
                                       indexing="ij"))
    return (grids * torch.tensor([H * W * C, 1, W * C, C])[:, None, None, None, None]).sum(0)
""", passes=True),
)


@dataclass(frozen=True)
class Outcome:
    regression: Regression
    seed: int
    failed: str | None  # the first part it failed, None when it passed all three
    factor: float | None  # its time over the reference's, as "fast" measured it

    @property
    def holds(self) -> bool:
        return (self.failed is None) == self.regression.passes


def check(assignment: Assignment, exercises: list[str] | None, seed: int) -> list[Outcome]:
    """Each regression of ``assignment`` (those of ``exercises`` when given), graded in one run of ``seed``."""
    chosen = [r for r in REGRESSIONS if r.assignment == assignment.name and (not exercises or r.exercise in exercises)]
    outcomes = []
    with GradingRun(seed) as run:
        for r in chosen:
            cells = [("preamble", assignment.preamble), (f"your `{r.exercise}` cell", r.source)]
            got = grade_submission(assignment, cells, only=[r.exercise], run=run)[r.exercise]
            failed = next((part for part, verdict in got.items() if not verdict.passed), None)
            outcomes.append(Outcome(r, seed, failed, got["fast"].figures.get("ref_factor")))
    return outcomes
