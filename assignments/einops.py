"""Assignment 5: einsum and einops.

Each exercise below is complete: task text, loop version, reference,
visible examples, hidden cases, tolerances, speed thresholds and points.
``vecgrade build`` turns this file into ``source/einops/einops.ipynb``.

This module is loaded by path as ``vecgrade_assignments.einops``, so the
``import einops`` below imports the real library, not this file.
"""
import einops
import torch
from einops import rearrange, reduce  # noqa: F401 - names of the preamble, used by students

from graders.model.exercise import Assignment, Case, Example, Exercise, load_lesson, load_variants
from graders.model.inputs import one_long_axis, rand, randint

V = load_variants(__file__)

PREAMBLE = "import torch\nimport einops\nfrom einops import rearrange, reduce"

LESSON = load_lesson(__file__)


def _one_long_axis(gen, n, base=(2, 2, 4, 4)):
    """The sizes ``[B, C, H, W]`` of one timed image batch: ``base`` with one axis, drawn for every call, ``n``
    times longer (graders.model.inputs.one_long_axis)."""
    return one_long_axis(gen, n, base)


def _blocks_inputs(gen, n):
    """One timed call of ``patchify`` or ``space_to_depth``: an image batch ``[2, 2, 4, 4]`` with blocks of 2, and
    one of five axes, drawn for every call, ``n`` times longer (``_one_long_axis``) or, in the fifth, one block of
    ``p = n`` on a ``[1, 1, p, p]`` batch (as many elements): a loop over a block's rows (or columns) then runs
    ``n`` times there, where with blocks of 2 it ran twice (with blocks of ``n / 2`` on ``[2, 2, p, p]`` such a
    loop read only 3.1-3.5x the reference)."""
    if int(torch.randint(5, (1,), generator=gen)) < 4:
        return rand(gen, *_one_long_axis(gen, n)), 2
    p = max(2, n)
    return rand(gen, 1, 1, p, p), p


def _shuffle_inputs(gen, n):
    """One timed call of ``channel_shuffle``: ``x [2, 4, 2, 2]`` and ``groups = 2``, with one of five axes, drawn
    for every call, ``n`` times longer: the batch, the groups (``C`` longer, ``groups = C / 2``), the channels in
    a group (``C`` longer, ``groups = 2``), the rows or the columns. A loop over the groups or over the channels
    of a group (as well as over the batch, all channels, rows or columns) then runs ``n`` times more often in a
    fifth of the calls, while every call copies the same number of elements."""
    sizes, groups = [2, 4, 2, 2], 2
    axis = int(torch.randint(5, (1,), generator=gen))
    if axis == 0:
        sizes[0] *= n
    elif axis in (1, 2):
        sizes[1] *= n
        groups = sizes[1] // 2 if axis == 1 else 2
    else:
        sizes[axis - 1] *= n
    return rand(gen, *sizes), groups


# ------------------------------------------------------------------------- batched_bilinear

def batched_bilinear_loop(x, W, y):
    B, I = x.shape
    O, _, J = W.shape
    out = torch.zeros(B, O, dtype=x.dtype)
    for b in range(B):
        for o in range(O):
            total = torch.zeros((), dtype=x.dtype)
            for i in range(I):
                for j in range(J):
                    total = total + x[b, i] * W[o, i, j] * y[b, j]
            out[b, o] = total
    return out


def batched_bilinear(x, W, y):
    return torch.einsum("bi,oij,bj->bo", x, W, y)


def batched_bilinear_hidden(gen):
    for B, I, J, O in [(1, 1, 1, 1), (2, 3, 4, 5), (5, 4, 3, 2), (7, 6, 6, 3), (3, 1, 5, 2),
                       (4, 5, 1, 3), (6, 5, 7, 1), (16, 12, 10, 8)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} B={B}, I={I}, J={J}, O={O}",
                       (rand(gen, B, I, dtype=dtype), rand(gen, O, I, J, dtype=dtype), rand(gen, B, J, dtype=dtype)))
    yield Case("B = 0", (rand(gen, 0, 3), rand(gen, 2, 3, 4), rand(gen, 0, 4)))
    yield Case("transposed inputs", (rand(gen, 5, 4, layout="transposed"), rand(gen, 3, 4, 6, layout="transposed"),
                                     rand(gen, 5, 6, layout="transposed")))
    yield Case("sliced inputs", (rand(gen, 6, 3, layout="sliced"), rand(gen, 4, 3, 5, layout="sliced"),
                                 rand(gen, 6, 5, layout="sliced")))
    yield Case("transposed float64 weights", (rand(gen, 4, 5, dtype=torch.float64),
                                              rand(gen, 2, 5, 3, dtype=torch.float64, layout="transposed"),
                                              rand(gen, 4, 3, dtype=torch.float64, layout="sliced")))


def _bilinear_inputs(gen, B, I, J, O):  # noqa: E741 - the task's names
    return rand(gen, B, I), rand(gen, O, I, J), rand(gen, B, J)


BATCHED_BILINEAR = Exercise(
    task="""\
Given a batch of vectors `x` of shape `[B, I]`, a batch of vectors `y` of shape
`[B, J]` and a stack of `O` matrices `W` of shape `[O, I, J]`, return the `[B, O]`
tensor of bilinear forms: `out[b, o] = sum_i sum_j x[b, i] * W[o, i, j] * y[b, j]`.
(This is what a bilinear layer computes, without the bias.) `B` may be 0.""",
    hints=("Name every index of the loop: `b, o, i, j`. Which of them survive into the result?",
           "`torch.einsum` takes one group of letters per operand; letters missing after `->` are summed."),
    reference=batched_bilinear,
    alternatives=(V.batched_bilinear_matmul, V.batched_bilinear_broadcast),
    half_loops=(V.batched_bilinear_half_loop, V.batched_bilinear_half_loop_o, V.batched_bilinear_half_loop_i,
                V.batched_bilinear_half_loop_j),
    python_list=V.batched_bilinear_lists,
    loop=batched_bilinear_loop,
    hidden=batched_bilinear_hidden,
    # one of B, I, J, O long per call (issue 38): with all four growing at once a loop over i or j (a matrix
    # product inside) cost about what the reference does, and with I = J = 8 fixed it was not timed at all
    sized=lambda gen, n: _bilinear_inputs(gen, *_one_long_axis(gen, n, (4, 4, 4, 4))),
    examples=(
        Example("x = torch.tensor([[1., 2.]])\nW = torch.tensor([[[1., 0., 0.], [0., 1., 0.]], "
                "[[0., 0., 1.], [1., 1., 1.]]])\ny = torch.tensor([[3., 4., 5.]])",
                "batched_bilinear(x, W, y)"),
        Example("x = torch.arange(6.).view(2, 3)\nW = torch.ones(4, 3, 2)\ny = torch.tensor([[1., -1.], [2., 0.5]])",
                "batched_bilinear(x, W, y)"),
    ),
    # a sum of I * J products: summation order changes the last digits, in proportion to the products' sizes
    terms=lambda x, W, y: torch.einsum("bi,oij,bj->bo", x.double().abs(), W.double().abs(), y.double().abs()),
    rtol=1e-4,
    loop_hint="name the axes and let `torch.einsum` do the multiplying and summing instead",
    bench_size=32,
    speedup=20,
)


# --------------------------------------------------------------------------------- patchify

def patchify_loop(images, p):
    B, C, H, W = images.shape
    nh, nw = H // p, W // p
    out = torch.empty(B, nh * nw, p * p * C, dtype=images.dtype)
    for b in range(B):
        for h in range(nh):
            for w in range(nw):
                for p1 in range(p):
                    for p2 in range(p):
                        for c in range(C):
                            out[b, h * nw + w, (p1 * p + p2) * C + c] = images[b, c, h * p + p1, w * p + p2]
    return out


def patchify(images, p):
    B, C, H, W = images.shape
    blocks = images.reshape(B, C, H // p, p, W // p, p)   # b c h p1 w p2
    tokens = blocks.permute(0, 2, 4, 3, 5, 1)               # b h w p1 p2 c
    return tokens.reshape(B, (H // p) * (W // p), p * p * C)


def patchify_hidden(gen):
    for B, C, H, W, p in [(2, 3, 4, 4, 2), (1, 1, 6, 6, 3), (3, 2, 8, 8, 4), (2, 3, 6, 6, 2)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} [{B}, {C}, {H}, {W}], p={p}", (rand(gen, B, C, H, W, dtype=dtype), p))
    yield Case("p = 1", (rand(gen, 2, 3, 3, 5), 1))
    yield Case("p = H = W (one patch per image)", (rand(gen, 2, 3, 4, 4), 4))
    yield Case("p = H = W, float64", (rand(gen, 1, 2, 5, 5, dtype=torch.float64), 5))
    yield Case("non-square image, H < W", (rand(gen, 2, 3, 6, 9), 3))
    yield Case("non-square image, H > W", (rand(gen, 1, 4, 8, 4, dtype=torch.float64), 2))
    yield Case("non-square image, one row of patches", (rand(gen, 2, 2, 3, 12), 3))
    yield Case("int64 image", (randint(gen, -50, 50, 2, 3, 4, 6), 2))
    yield Case("int64 image, p = 1", (randint(gen, -50, 50, 1, 2, 2, 3), 1))
    yield Case("B = 0", (rand(gen, 0, 3, 4, 4), 2))
    yield Case("transposed image (non-contiguous)", (rand(gen, 2, 3, 6, 4, layout="transposed"), 2))
    yield Case("sliced image (non-contiguous)", (rand(gen, 2, 3, 4, 8, layout="sliced"), 4))
    yield Case("channels-last image (non-contiguous)",
               (rand(gen, 2, 6, 6, 3).permute(0, 3, 1, 2), 3))


PATCHIFY = Exercise(
    task="""\
Cut each image of `images` (shape `[B, C, H, W]`, `H` and `W` divisible by `p`)
into non-overlapping `p x p` patches, the way a Vision Transformer makes its
tokens. Return shape `[B, (H/p) * (W/p), p * p * C]`: the patches in row-major
order of the patch grid, and in each patch the pixels in row-major order with
the channels innermost. In einops notation this is
`'b c (h p1) (w p2) -> b (h w) (p1 p2 c)'` with `p1 = p2 = p`:
`out[b, h * (W/p) + w, (p1 * p + p2) * C + c] = images[b, c, h * p + p1, w * p + p2]`. `B` may be 0.""",
    hints=("Split `H` into `(H/p, p)` and `W` into `(W/p, p)`, move the axes into the order "
           "`b, h, w, p1, p2, c`, then merge.",
           "`rearrange` does the splitting, moving and merging in one pattern; so do `reshape`, `permute`, `reshape`."),
    reference=patchify,
    alternatives=(V.patchify_rearrange, V.patchify_unflatten),
    half_loops=(V.patchify_half_loop, V.patchify_half_loop_c, V.patchify_half_loop_p1, V.patchify_half_loop_rows,
                V.patchify_half_loop_cols),
    loop=patchify_loop,
    hidden=patchify_hidden,
    # one long axis per call (batch, channels, rows or columns, or the patch size): with the batch alone growing,
    # a loop over the channels or the rows of patches read 1.2-1.6x the reference in-process
    sized=_blocks_inputs,
    examples=(
        Example("images = torch.arange(32).view(1, 2, 4, 4)", "patchify(images, 2)"),
        Example("images = torch.arange(12.).view(1, 1, 2, 6)", "patchify(images, 2)",
                note="a non-square image: one row of three patches"),
        Example("img = torch.zeros(1, 3, 256, 256)", "torch.tensor(patchify(img, 32).shape)",
                note="a 256 x 256 RGB image in 32 x 32 patches: 8 x 8 = 64 tokens of 32 * 32 * 3 = 3072 values"),
    ),
    loop_hint="split and reorder the axes with `rearrange` (or `reshape`/`permute`) instead",
    bench_size=64,
    speedup=20,
)


# --------------------------------------------------------------------------- space_to_depth

def space_to_depth_loop(x, r):
    B, C, H, W = x.shape
    out = torch.empty(B, r * r * C, H // r, W // r, dtype=x.dtype)
    for b in range(B):
        for c in range(C):
            for i in range(H):
                for j in range(W):
                    channel = ((i % r) * r + j % r) * C + c
                    out[b, channel, i // r, j // r] = x[b, c, i, j]
    return out


def space_to_depth(x, r):
    B, C, H, W = x.shape
    blocks = x.reshape(B, C, H // r, r, W // r, r)          # b c h h0 w w0
    moved = blocks.permute(0, 3, 5, 1, 2, 4)                 # b h0 w0 c h w
    return moved.reshape(B, r * r * C, H // r, W // r)


def space_to_depth_hidden(gen):
    for B, C, H, W, r in [(2, 3, 4, 4, 2), (1, 1, 6, 6, 3), (3, 2, 8, 8, 2), (2, 4, 8, 8, 4)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} [{B}, {C}, {H}, {W}], r={r}", (rand(gen, B, C, H, W, dtype=dtype), r))
    yield Case("r = 1", (rand(gen, 2, 3, 3, 5), 1))
    yield Case("r = H = W", (rand(gen, 2, 3, 4, 4), 4))
    yield Case("non-square input, H < W", (rand(gen, 2, 3, 4, 10), 2))
    yield Case("non-square input, H > W", (rand(gen, 1, 2, 9, 6, dtype=torch.float64), 3))
    yield Case("one channel", (rand(gen, 2, 1, 6, 4), 2))
    yield Case("int64 input", (randint(gen, -50, 50, 2, 3, 6, 4), 2))
    yield Case("B = 0", (rand(gen, 0, 2, 4, 4), 2))
    yield Case("transposed input (non-contiguous)", (rand(gen, 2, 3, 4, 6, layout="transposed"), 2))
    yield Case("sliced input (non-contiguous)", (rand(gen, 2, 2, 6, 6, layout="sliced"), 3))


SPACE_TO_DEPTH = Exercise(
    task="""\
Move each `r x r` block of pixels of `x` (shape `[B, C, H, W]`, `H` and `W`
divisible by `r`) into the channel axis. Return shape `[B, r * r * C, H/r, W/r]`
with the layout of `'b c (h h0) (w w0) -> b (h0 w0 c) h w'`:
`out[b, (h0 * r + w0) * C + c, h, w] = x[b, c, h * r + h0, w * r + w0]`.
The channel order is `(h0 w0 c)`, the position inside the block outermost and the
input channel innermost; `torch.nn.functional.pixel_unshuffle` orders them `(c h0 w0)`,
so it does not give this result as it is. `B` may be 0.""",
    hints=("Write the pattern with `rearrange`, passing `h0=r, w0=r`.",
           "By hand: `reshape` to `[B, C, H/r, r, W/r, r]`, `permute` to `b, h0, w0, c, h, w`, `reshape` back to 4-D."),
    reference=space_to_depth,
    alternatives=(V.space_to_depth_rearrange, V.space_to_depth_unflatten),
    half_loops=(V.space_to_depth_half_loop, V.space_to_depth_half_loop_c, V.space_to_depth_half_loop_h0,
                V.space_to_depth_half_loop_rows,
                V.space_to_depth_half_loop_cols),
    loop=space_to_depth_loop,
    hidden=space_to_depth_hidden,
    # one long axis per call: with the batch alone growing, a loop over the channels read 2.6x in-process
    sized=_blocks_inputs,
    examples=(
        Example("x = torch.arange(16).view(1, 1, 4, 4)", "space_to_depth(x, 2)"),
        Example("x = torch.arange(8.).view(1, 2, 2, 2)", "space_to_depth(x, 2)",
                note="two channels: the channel index varies fastest in the output channels"),
    ),
    loop_hint="split and reorder the axes with `rearrange` (or `reshape`/`permute`) instead",
    bench_size=64,
    speedup=20,
)


# -------------------------------------------------------------------------- channel_shuffle

def channel_shuffle_loop(x, groups):
    B, C, H, W = x.shape
    per_group = C // groups
    out = torch.empty(B, C, H, W, dtype=x.dtype)
    for b in range(B):
        for g in range(groups):
            for c in range(per_group):
                for i in range(H):
                    for j in range(W):
                        out[b, c * groups + g, i, j] = x[b, g * per_group + c, i, j]
    return out


def channel_shuffle(x, groups):
    B, C, H, W = x.shape
    split = x.reshape(B, groups, C // groups, H, W)          # b g c h w
    return split.transpose(1, 2).reshape(B, C, H, W)          # b (c g) h w


def channel_shuffle_hidden(gen):
    for B, C, H, W, g in [(2, 6, 3, 3, 2), (2, 6, 3, 3, 3), (1, 12, 2, 5, 4), (3, 8, 4, 4, 2), (2, 10, 1, 1, 5)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} [{B}, {C}, {H}, {W}], groups={g}", (rand(gen, B, C, H, W, dtype=dtype), g))
    yield Case("groups = 1", (rand(gen, 2, 6, 3, 4), 1))
    yield Case("groups = C", (rand(gen, 2, 6, 3, 4), 6))
    yield Case("groups = C, float64", (rand(gen, 1, 5, 2, 2, dtype=torch.float64), 5))
    yield Case("three factors in C", (rand(gen, 2, 24, 2, 3), 4))
    yield Case("int64 input", (randint(gen, -50, 50, 2, 12, 3, 3), 3))
    yield Case("B = 0", (rand(gen, 0, 6, 2, 2), 2))
    yield Case("transposed input (non-contiguous)", (rand(gen, 2, 6, 4, 5, layout="transposed"), 3))
    yield Case("sliced input (non-contiguous)", (rand(gen, 2, 8, 3, 4, layout="sliced"), 2))
    yield Case("channels-last input (non-contiguous)", (rand(gen, 2, 4, 5, 6).permute(0, 3, 1, 2), 3))


CHANNEL_SHUFFLE = Exercise(
    task="""\
Shuffle the channels of `x` (shape `[B, C, H, W]`, `C` divisible by `groups`) the
way ShuffleNet does between grouped convolutions. View the channel axis as
`groups` groups of `C/groups` channels each, `(g c)`, and write it back out as
`(c g)`: the first channel of every group, then the second of every group, and so
on. The result has the shape of `x`; with `k = C // groups`,
`out[b, c * groups + g, i, j] = x[b, g * k + c, i, j]`.
This is the layout of `'b (g c) h w -> b (c g) h w'` with `g = groups`. `B` may be 0.""",
    hints=("Split the channel axis into two axes, swap them, merge them again.",
           "With `rearrange`, give the size of the group axis: `g=groups`."),
    reference=channel_shuffle,
    alternatives=(V.channel_shuffle_rearrange, V.channel_shuffle_index),
    half_loops=(V.channel_shuffle_half_loop, V.channel_shuffle_half_loop_c, V.channel_shuffle_half_loop_g,
                V.channel_shuffle_half_loop_k, V.channel_shuffle_half_loop_rows, V.channel_shuffle_half_loop_cols),
    loop=channel_shuffle_loop,
    hidden=channel_shuffle_hidden,
    # one long axis per call (issue 38: rows and columns too): on [2n, 4n, 1, 1] a loop over the rows or the
    # columns ran once; small images keep the copy cheap (the tensors' transfer, timed too, dominated the
    # reference on larger images); the groups and the channels of a group are long in calls of their own (with
    # `groups` fixed at 2, a loop over the groups ran twice)
    sized=_shuffle_inputs,
    bench_size=64,
    # the index alternative (`x[:, order]`, a gather) read 1.9-3.1x against the reference's one strided copy on
    # [64, 128, 1, 1] (stop 35), hence 8x then; on the small images of one long axis it reads 1.4-1.5x, while at
    # n = 32 the loop over the batch and the list version read 7.6-7.7x (issue 38): n = 64 and the default-like 4x
    ref_factor=4,
    examples=(
        Example("x = torch.arange(6).view(1, 6, 1, 1)", "channel_shuffle(x, 2).flatten()",
                note="groups [0 1 2] and [3 4 5] are interleaved"),
        Example("x = torch.arange(6).view(1, 6, 1, 1)", "channel_shuffle(x, 3).flatten()"),
        Example("x = torch.arange(16.).view(1, 4, 2, 2)", "channel_shuffle(x, 2)"),
    ),
    loop_hint="split the channel axis and swap its two factors with `rearrange` (or `reshape`/`transpose`) instead",
    speedup=20,
)


# ----------------------------------------------------------------------------- max_pool_2x2

def max_pool_2x2_loop(x):
    B, C, H, W = x.shape
    out = torch.empty(B, C, H // 2, W // 2, dtype=x.dtype)
    for b in range(B):
        for c in range(C):
            for i in range(H // 2):
                for j in range(W // 2):
                    m = x[b, c, 2 * i, 2 * j]
                    for di in range(2):
                        for dj in range(2):
                            m = torch.maximum(m, x[b, c, 2 * i + di, 2 * j + dj])
                    out[b, c, i, j] = m
    return out


def max_pool_2x2(x):
    return einops.reduce(x, "b c (h h0) (w w0) -> b c h w", "max", h0=2, w0=2)


def max_pool_2x2_hidden(gen):
    for B, C, H, W in [(1, 1, 2, 2), (2, 3, 4, 4), (3, 2, 6, 8), (2, 4, 10, 6)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} [{B}, {C}, {H}, {W}]", (rand(gen, B, C, H, W, dtype=dtype, scale=5.0),))
    yield Case("H = W = 2", (rand(gen, 3, 2, 2, 2),))
    yield Case("all values negative", (rand(gen, 2, 3, 4, 6, scale=10.0, low=-20.0),))
    yield Case("all values negative, float64", (rand(gen, 2, 2, 6, 4, dtype=torch.float64, scale=3.0, low=-1e3),))
    yield Case("ties (few distinct values)", (randint(gen, -2, 2, 2, 3, 6, 6).to(torch.float32),))
    yield Case("constant input", (torch.full((2, 2, 4, 4), -3.5),))
    yield Case("large magnitudes", (rand(gen, 2, 2, 4, 4, scale=1e6),))
    yield Case("int64 input", (randint(gen, -100, 100, 2, 3, 4, 6),))
    yield Case("int64 input with ties", (randint(gen, -3, 3, 2, 2, 8, 4),))
    yield Case("non-square input", (rand(gen, 2, 3, 2, 8),))
    yield Case("B = 0", (rand(gen, 0, 3, 4, 4),))
    yield Case("transposed input (non-contiguous)", (rand(gen, 2, 3, 6, 4, layout="transposed"),))
    yield Case("sliced input (non-contiguous)", (rand(gen, 2, 3, 4, 8, layout="sliced"),))
    yield Case("sliced int64 input (non-contiguous)", (randint(gen, -9, 9, 2, 2, 4, 4, layout="sliced"),))


MAX_POOL_2X2 = Exercise(
    task="""\
Max-pool `x` (shape `[B, C, H, W]`, `H` and `W` even) with a 2x2 window and
stride 2: return shape `[B, C, H/2, W/2]` with
`out[b, c, i, j] = max(x[b, c, 2i, 2j], x[b, c, 2i, 2j + 1], x[b, c, 2i + 1, 2j], x[b, c, 2i + 1, 2j + 1])`.
The inputs may be floats or integers, and may be negative. `max_pool*` and
`adaptive_max_pool*` (functional, Tensor or `torch` namespace) and the
`MaxPool*` / `AdaptiveMaxPool*` modules are not allowed. `B` may be 0.""",
    hints=("Split `H` into `(H/2, 2)` and `W` into `(W/2, 2)`; the two size-2 axes are the window.",
           "`einops.reduce` with `\"max\"` reduces the axes that disappear from the pattern; "
           "`amax` over two axes does the same by hand."),
    reference=max_pool_2x2,
    alternatives=(V.max_pool_2x2_amax, V.max_pool_2x2_maximum),
    half_loops=(V.max_pool_2x2_half_loop, V.max_pool_2x2_half_loop_c, V.max_pool_2x2_half_loop_rows,
                V.max_pool_2x2_half_loop_cols),
    loop=max_pool_2x2_loop,
    hidden=max_pool_2x2_hidden,
    # one long axis per call: with the batch alone growing, a loop over the output rows read 0.3x the
    # reference in-process (einops' reduce over a 6-D view is slower than four strided maxima)
    sized=lambda gen, n: (rand(gen, *_one_long_axis(gen, n)),),
    examples=(
        Example("x = torch.arange(16.).view(1, 1, 4, 4)", "max_pool_2x2(x)"),
        Example("x = torch.tensor([[[[-1, -5, 3, 3], [-2, -7, 3, 0]]]])", "max_pool_2x2(x)",
                note="negative values and ties; integers stay integers"),
    ),
    forbidden=("max_pool*", "adaptive_max_pool*", "fractional_max_pool*", "MaxPool*", "AdaptiveMaxPool*",
               "FractionalMaxPool*"),
    forbidden_ops=("max_pool*", "adaptive_max_pool*", "fractional_max_pool*"),
    loop_hint="split each spatial axis into (blocks, 2) and reduce the window axes instead",
    bench_size=64,
    speedup=12,
)


ASSIGNMENT = Assignment(
    name="einops",
    title="einsum and einops",
    lesson=LESSON,
    exercises=(BATCHED_BILINEAR, PATCHIFY, SPACE_TO_DEPTH, CHANNEL_SHUFFLE, MAX_POOL_2X2),
    order=5,
    preamble=PREAMBLE,
)
