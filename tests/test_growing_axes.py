"""Every axis a student can loop over grows at the benchmark size (issue 38, docs/calibration.md): for the einops
assignment, every axis of every tensor argument is long (``bench_size`` times its length elsewhere) in some timed
calls, and the exercise lists a half loop per axis, so ``vecgrade validate`` (tests/test_validate.py, e2e) times a
loop over each. Before, only the batch of an image grew: a loop over its channels or rows passed "fast"."""
import pytest
import torch

from graders.model.exercise import load_assignment

from tests.testkit import ROOT

EINOPS = load_assignment(ROOT / "assignments" / "einops.py")
DRAWS = 64  # calls drawn: each of four axes is the long one in about a quarter of them


def longest(ex, n: int) -> list[list[int]]:
    """Per tensor argument, the longest length of each axis over ``DRAWS`` calls at size ``n``."""
    gen = torch.Generator().manual_seed(0)
    calls = [ex.sized(gen, n) for _ in range(DRAWS)]
    tensors = [i for i, a in enumerate(calls[0]) if isinstance(a, torch.Tensor)]
    return [[max(call[i].shape[d] for call in calls) for d in range(calls[0][i].dim())] for i in tensors]


def shortest(ex, n: int) -> list[list[int]]:
    gen = torch.Generator().manual_seed(0)
    calls = [ex.sized(gen, n) for _ in range(DRAWS)]
    tensors = [i for i, a in enumerate(calls[0]) if isinstance(a, torch.Tensor)]
    return [[min(call[i].shape[d] for call in calls) for d in range(calls[0][i].dim())] for i in tensors]


@pytest.mark.parametrize("ex", EINOPS.exercises, ids=lambda ex: ex.name)
def test_every_axis_of_every_input_is_long_in_some_timed_calls(ex):
    for axes, short in zip(longest(ex, ex.bench_size), shortest(ex, ex.bench_size), strict=True):
        assert all(long >= 16 * s for long, s in zip(axes, short, strict=True)), (ex.name, axes, short)


@pytest.mark.parametrize("ex", EINOPS.exercises, ids=lambda ex: ex.name)
def test_a_half_loop_for_every_axis(ex):
    """One half loop per axis of the exercise's data (the four of an image or of a bilinear form), each named
    `<exercise>_half_loop_<axis>` but the first (the batch)."""
    assert len(ex.half_loops) == 4, [fn.__name__ for fn in ex.half_loops]
    assert all(fn.__name__.startswith(f"{ex.name}_half_loop") for fn in ex.half_loops)
