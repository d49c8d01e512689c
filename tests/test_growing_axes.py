"""Every axis a student can loop over grows at the benchmark size (issue 38, docs/calibration.md): every axis of
every tensor argument, every size argument (`num_classes`, `groups`, `output_size`) and every entry of a shape
argument is long (at least ``LONGER`` times its shortest length) in some timed calls, unless the exercise's meaning
fixes it (``FIXED``), and the exercise lists a half loop per axis (``AXES``), so ``vecgrade validate``
(tests/test_validate.py, e2e) and ``benchmarks/calibrate.py`` time a loop over each. Before, only the batch of an
image grew: a loop over its channels or rows passed "fast"; the classes of `one_hot`, the coordinates of
`pairwise_sq_dists`, the channels and taps of `conv2d_indexing`, the groups of `channel_shuffle`, the feature map of
`roi_align`, the patch and block sizes of `patchify` and `space_to_depth` and all but one axis of `permute_flat`'s
shape were fixed."""
import pytest
import torch

from graders.model.exercise import load_course

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")
DRAWS = 64  # calls drawn: each of up to five axes is the long one in about a fifth of them
LONGER = 16

# the half loops per exercise, one per axis a student can loop over, in the order of `half_loops`
AXES = {
    ("einops", "batched_bilinear"): ("b", "o", "i", "j"),
    ("einops", "patchify"): ("b", "c", "rows of a patch", "rows of patches", "columns of patches"),
    ("einops", "space_to_depth"): ("b", "c", "rows of a block", "output rows", "output columns"),
    ("einops", "channel_shuffle"): ("b", "c", "groups", "channels of a group", "rows", "columns"),
    ("einops", "max_pool_2x2"): ("b", "c", "output rows", "output columns"),
    ("broadcasting", "pairwise_sq_dists"): ("n", "m", "d"),
    ("indexing", "conv2d_indexing"): ("output rows", "output columns", "input channels", "output channels",
                                      "kernel taps"),
    ("indexing", "one_hot"): ("n", "classes"),
    ("strides", "permute_flat"): ("result's last axis", "result's first axis", "result's second axis"),
    ("detection", "roi_align"): ("boxes", "output rows", "output columns", "channels", "feature rows",
                                 "feature columns"),
}
# (argument, axis) pairs fixed by the exercise's meaning (docs/calibration.md): a loop over them is fixed-size work
FIXED = {
    ("detection", "roi_align"): {(1, 1)},  # a box's four coordinates
    ("strides", "permute_flat"): {(0, 0),  # the buffer: its length is the shape's product, one loop over it the
                                  # element loop (caught as such)
                                  (2, 0), (2, 1), (2, 2)},  # perm: a permutation of the three axes
}


def exercise(key):
    return COURSE[key[0]].exercise(key[1])


def lengths(args: tuple) -> dict[tuple[int, int], int]:
    """Per (argument, axis): its length in one call. A tensor's axes, an int argument (axis 0), a shape's entries."""
    out: dict[tuple[int, int], int] = {}
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            out |= {(i, d): a.shape[d] for d in range(a.dim())}
        elif isinstance(a, int) and not isinstance(a, bool):
            out[(i, 0)] = a
        elif isinstance(a, (tuple, list)) and all(isinstance(s, int) for s in a):
            out |= {(i, d): s for d, s in enumerate(a)}
    return out


def drawn(ex, seed: int) -> list[dict[tuple[int, int], int]]:
    gen = torch.Generator().manual_seed(seed)
    return [lengths(ex.sized(gen, ex.bench_size)) for _ in range(DRAWS)]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("key", list(AXES), ids=lambda key: key[1])
def test_every_axis_is_long_in_some_timed_calls(key, seed):
    calls = drawn(exercise(key), seed)
    short = [axis for axis in calls[0] if axis not in FIXED.get(key, set())
             and max(c[axis] for c in calls) < LONGER * max(1, min(c[axis] for c in calls))]
    assert not short, (key, short)


@pytest.mark.parametrize("key", list(FIXED), ids=lambda key: key[1])
def test_the_fixed_axes_are_fixed_or_follow_the_others(key):
    """What FIXED exempts is fixed by meaning (its length never varies), or is the buffer of a shape."""
    calls = drawn(exercise(key), 0)
    for axis in FIXED[key] - {(0, 0)}:
        assert len({c[axis] for c in calls}) == 1 or key[1] == "permute_flat", (key, axis)


@pytest.mark.parametrize("key", list(AXES), ids=lambda key: key[1])
def test_a_half_loop_for_every_axis(key):
    ex = exercise(key)
    assert len(ex.half_loops) == len(AXES[key]), [fn.__name__ for fn in ex.half_loops]
    assert all(fn.__name__.startswith(f"{ex.name}_half_loop") for fn in ex.half_loops)
    assert len({fn.__name__ for fn in ex.half_loops}) == len(ex.half_loops)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("key", list(AXES), ids=lambda key: key[1])
def test_the_half_loops_and_alternatives_are_right_on_the_benchmark_draws(key, seed):
    """The half loops and the honest alternatives compute the reference's result on the long-axis draws (so the
    timing compares equal work; their speed is benchmarks/calibrate.py's), one draw per long axis at least."""
    ex = exercise(key)
    gen = torch.Generator().manual_seed(seed)
    seen: set[tuple] = set()
    for _ in range(DRAWS):
        args = ex.sized(gen, ex.bench_size)
        longest = max(((axis, n) for axis, n in lengths(args).items() if axis not in FIXED.get(key, set())),
                      key=lambda kv: kv[1])[0]
        if longest in seen:
            continue
        seen.add(longest)
        want = ex.reference(*args)
        for fn in (*ex.alternatives, *ex.half_loops):
            got = fn(*args)
            assert got.shape == want.shape and torch.allclose(got.double(), want.double(), atol=1e-4), fn.__name__
    assert len(seen) >= 2


@pytest.mark.parametrize("key", list(AXES), ids=lambda key: key[1])
def test_the_self_checks_two_sizes_make_the_same_axis_long(key):
    """The self-check counts the work at two sizes (graders.student.selfcheck): both make the same axis long, so
    it compares one shape growing, as the grader's count does, not one axis long against another."""
    import io

    from graders.course.build import render_inputs
    ex = exercise(key)
    data = torch.load(io.BytesIO(render_inputs(COURSE[key[0]])), weights_only=False)[ex.name]
    small, large = (lengths(args) for args in data["args"])
    grown = {axis for axis in small if axis not in FIXED.get(key, set()) and large[axis] > small[axis]}
    assert grown and all(large[a] >= small[a] for a in small), (small, large)  # no axis long at one size only
