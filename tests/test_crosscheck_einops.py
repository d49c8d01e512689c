"""Cross-checks of the `einops` assignment: references against independent implementations.

Every reference is run on 200+ random cases against torch built-ins
(`F.bilinear`, `F.pixel_unshuffle`, `F.channel_shuffle`, `F.max_pool2d`) and
`einops.rearrange`, and on fewer cases against plain loops written here from
catalog.md's wording (not from the reference or the `_loop` version); the
`_loop` versions are checked on fewer cases; the hidden cases are inspected
for the edge cases the exercises must cover; a plausible wrong vectorized
answer per exercise must fail "correct"; and answers written with
`rearrange`/`reduce` from the preamble must pass.
"""
from __future__ import annotations

import sys
from pathlib import Path

import einops
import torch
import torch.nn.functional as F

from crosscheck import LAYOUTS, Definitions, lay_out
from tests.testkit import ROOT

D = Definitions("einops")
ASSIGNMENT, ref, loop, hidden_cases = D.assignment, D.ref, D.loop, D.hidden_cases
NAMES = ("batched_bilinear", "patchify", "space_to_depth", "channel_shuffle", "max_pool_2x2")
N_RANDOM = 200


def draw(gen, low, high):
    """A Python int in [low, high], drawn from gen."""
    return int(torch.randint(low, high + 1, (1,), generator=gen))


LAYOUTS = (*LAYOUTS, "channels_last")


def values(gen, shape, dtype):
    if dtype == torch.int64:
        return torch.randint(-20, 21, shape, generator=gen, dtype=torch.int64)
    return (torch.randn(shape, generator=gen, dtype=torch.float64) * 3).to(dtype)


def check(out, expected, rtol=1e-5, atol=1e-6):
    assert out.shape == expected.shape and out.dtype == expected.dtype
    if expected.is_floating_point():
        torch.testing.assert_close(out, expected, rtol=rtol, atol=atol)
    else:
        assert torch.equal(out, expected)


# ---------------------------------------------------------------------- the real einops

def test_einops_import_is_the_library():
    module = sys.modules["vecgrade_assignments.einops"]
    assert module.einops is einops
    assert Path(einops.__file__).resolve() != (ROOT / "assignments" / "einops.py").resolve()
    assert module.rearrange is einops.rearrange and module.reduce is einops.reduce
    namespace: dict = {}
    exec(ASSIGNMENT.preamble, namespace)
    assert namespace["einops"] is einops and namespace["reduce"] is einops.reduce


# ---------------------------------------------------------------------- batched_bilinear

def bilinear_case(gen):
    B, I, J, O = draw(gen, 0, 9), draw(gen, 1, 8), draw(gen, 1, 8), draw(gen, 1, 6)  # noqa: E741
    dtype = (torch.float32, torch.float64)[draw(gen, 0, 1)]
    x, W, y = values(gen, (B, I), dtype), values(gen, (O, I, J), dtype), values(gen, (B, J), dtype)
    return tuple(lay_out(t, LAYOUTS[draw(gen, 0, 2)]) for t in (x, W, y))


def bilinear_tolerance(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)


def bilinear_plain(x, W, y):
    B, I = x.shape  # noqa: E741
    O, _, J = W.shape  # noqa: E741
    out = [[0.0] * O for _ in range(B)]
    xs, Ws, ys = x.double().tolist(), W.double().tolist(), y.double().tolist()
    for b in range(B):
        for o in range(O):
            out[b][o] = sum(xs[b][i] * Ws[o][i][j] * ys[b][j] for i in range(I) for j in range(J))
    return torch.tensor(out, dtype=torch.float64).reshape(B, O).to(x.dtype)


def test_batched_bilinear_vs_builtin():
    gen = torch.Generator().manual_seed(1)
    for _ in range(N_RANDOM):
        x, W, y = bilinear_case(gen)
        # F.bilinear's weight is [out, in1, in2]: the same layout as W
        check(ref("batched_bilinear")(x, W, y), F.bilinear(x, y, W), **bilinear_tolerance(x.dtype))


def test_batched_bilinear_vs_plain_loop():
    gen = torch.Generator().manual_seed(2)
    for _ in range(60):
        x, W, y = bilinear_case(gen)
        check(ref("batched_bilinear")(x, W, y), bilinear_plain(x, W, y), **bilinear_tolerance(x.dtype))


def test_batched_bilinear_loop_version():
    gen = torch.Generator().manual_seed(3)
    for _ in range(20):
        x, W, y = bilinear_case(gen)
        check(loop("batched_bilinear")(x, W, y), F.bilinear(x, y, W), **bilinear_tolerance(x.dtype))


def test_batched_bilinear_hidden_cases():
    cases = hidden_cases("batched_bilinear")
    shapes = [(c.args[0].shape, c.args[1].shape) for c in cases]
    assert any(xs == (1, 1) and ws == (1, 1, 1) for xs, ws in shapes), "B = I = J = O = 1"
    assert any(xs[0] == 0 for xs, _ in shapes), "empty batch"
    assert any(ws[1] != ws[2] for _, ws in shapes), "I != J"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous x"
    assert any(not c.args[1].is_contiguous() for c in cases), "non-contiguous W"
    assert any(not c.args[2].is_contiguous() for c in cases), "non-contiguous y"
    assert {c.args[0].dtype for c in cases} == {torch.float32, torch.float64}
    for c in cases:
        x, W, y = c.args
        check(ref("batched_bilinear")(x, W, y), F.bilinear(x, y, W), **bilinear_tolerance(x.dtype))


# ----------------------------------------------------------------------------- patchify

def image_case(gen, max_blocks=4, max_factor=4):
    """images [B, C, H, W] with H, W divisible by a factor f; returns (images, f)."""
    f = draw(gen, 1, max_factor)
    B, C = draw(gen, 0, 3), draw(gen, 1, 4)
    H, W = f * draw(gen, 1, max_blocks), f * draw(gen, 1, max_blocks)
    dtype = (torch.float32, torch.float64, torch.int64)[draw(gen, 0, 2)]
    return lay_out(values(gen, (B, C, H, W), dtype), LAYOUTS[draw(gen, 0, 3)]), f


def patchify_plain(images, p):
    """Straight from the stated index formula, walking the input pixels."""
    B, C, H, W = images.shape
    nw = W // p
    out = torch.zeros(B, (H // p) * nw, p * p * C, dtype=images.dtype)
    for b in range(B):
        for c in range(C):
            for row in range(H):
                for col in range(W):
                    h, p1 = divmod(row, p)
                    w, p2 = divmod(col, p)
                    out[b, h * nw + w, (p1 * p + p2) * C + c] = images[b, c, row, col]
    return out


def test_patchify_vs_einops():
    gen = torch.Generator().manual_seed(11)
    for _ in range(N_RANDOM):
        images, p = image_case(gen)
        expected = einops.rearrange(images, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)
        check(ref("patchify")(images, p), expected)


def test_patchify_vs_plain_loop_and_loop_version():
    gen = torch.Generator().manual_seed(12)
    for k in range(30):
        images, p = image_case(gen, max_blocks=3, max_factor=3)
        expected = patchify_plain(images, p)
        check(ref("patchify")(images, p), expected)
        if k < 15:
            check(loop("patchify")(images, p), expected)


def test_patchify_is_not_the_chapter_layout():
    """The chapter's `b (p1 p2) (h w c)` swaps patch grid and patch size; ours keeps a patch's pixels together."""
    images = torch.arange(1 * 1 * 4 * 4).view(1, 1, 4, 4)
    out = ref("patchify")(images, 2)
    assert out[0, 0].tolist() == [0, 1, 4, 5]  # the top-left 2x2 patch
    chapter = einops.rearrange(images, "b c (h p1) (w p2) -> b (p1 p2) (h w c)", p1=2, p2=2)
    assert not torch.equal(out, chapter)


def test_patchify_hidden_cases():
    cases = hidden_cases("patchify")
    shapes = [(c.args[0].shape, c.args[1]) for c in cases]
    assert any(p == 1 for _, p in shapes), "p = 1"
    assert any(s[2] == s[3] == p for s, p in shapes), "p = H = W"
    assert any(s[2] != s[3] for s, _ in shapes), "non-square H != W"
    assert any(s[2] // p != s[3] // p for s, p in shapes), "a non-square patch grid"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous images"
    assert {c.args[0].dtype for c in cases} >= {torch.float32, torch.float64, torch.int64}
    assert any(s[0] == 0 for s, _ in shapes), "empty batch"
    for c in cases:
        images, p = c.args
        check(ref("patchify")(images, p),
              einops.rearrange(images, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p))


# ------------------------------------------------------------------------- space_to_depth

def space_to_depth_builtin(x, r):
    """pixel_unshuffle orders the new channels (c h0 w0); permute them to (h0 w0 c)."""
    B, C, H, W = x.shape
    u = F.pixel_unshuffle(x, r).reshape(B, C, r, r, H // r, W // r)
    return u.permute(0, 2, 3, 1, 4, 5).reshape(B, r * r * C, H // r, W // r)


def space_to_depth_plain(x, r):
    B, C, H, W = x.shape
    out = torch.zeros(B, r * r * C, H // r, W // r, dtype=x.dtype)
    for b in range(B):
        for ch in range(r * r * C):
            block, c = divmod(ch, C)
            h0, w0 = divmod(block, r)
            for h in range(H // r):
                for w in range(W // r):
                    out[b, ch, h, w] = x[b, c, h * r + h0, w * r + w0]
    return out


def test_space_to_depth_vs_einops_and_pixel_unshuffle():
    gen = torch.Generator().manual_seed(21)
    for _ in range(N_RANDOM):
        x, r = image_case(gen)
        out = ref("space_to_depth")(x, r)
        check(out, einops.rearrange(x, "b c (h h0) (w w0) -> b (h0 w0 c) h w", h0=r, w0=r))
        if x.shape[0] > 0:  # torch 2.13's pixel_unshuffle returns the input shape for an empty batch
            check(out, space_to_depth_builtin(x, r))


def test_space_to_depth_vs_plain_loop_and_loop_version():
    gen = torch.Generator().manual_seed(22)
    for k in range(30):
        x, r = image_case(gen, max_blocks=3, max_factor=3)
        expected = space_to_depth_plain(x, r)
        check(ref("space_to_depth")(x, r), expected)
        if k < 15:
            check(loop("space_to_depth")(x, r), expected)


def test_space_to_depth_hidden_cases():
    cases = hidden_cases("space_to_depth")
    shapes = [(c.args[0].shape, c.args[1]) for c in cases]
    assert any(r == 1 for _, r in shapes), "r = 1"
    assert any(s[2] == s[3] == r for s, r in shapes), "r = H = W"
    assert any(s[2] != s[3] for s, _ in shapes), "H != W"
    assert any(s[1] > 1 and r > 1 for s, r in shapes), "several channels and r > 1 (channel order matters)"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous input"
    assert {c.args[0].dtype for c in cases} >= {torch.float32, torch.float64, torch.int64}
    for c in cases:
        x, r = c.args
        check(ref("space_to_depth")(x, r), space_to_depth_plain(x, r))


# ------------------------------------------------------------------------ channel_shuffle

def shuffle_case(gen):
    groups, per_group = draw(gen, 1, 5), draw(gen, 1, 5)
    B, H, W = draw(gen, 0, 3), draw(gen, 1, 4), draw(gen, 1, 4)
    dtype = (torch.float32, torch.float64, torch.int64)[draw(gen, 0, 2)]
    x = values(gen, (B, groups * per_group, H, W), dtype)
    return lay_out(x, LAYOUTS[draw(gen, 0, 3)]), groups


def channel_shuffle_plain(x, groups):
    B, C, H, W = x.shape
    k = C // groups
    out = torch.zeros_like(x, memory_format=torch.contiguous_format)
    for out_channel in range(C):
        c, g = divmod(out_channel, groups)  # output channels are (c g): g varies fastest
        out[:, out_channel] = x[:, g * k + c]
    return out


def test_channel_shuffle_vs_builtin_and_einops():
    gen = torch.Generator().manual_seed(31)
    for _ in range(N_RANDOM):
        x, groups = shuffle_case(gen)
        out = ref("channel_shuffle")(x, groups)
        # F.channel_shuffle(x, g) splits the channels into g groups, i.e. '(g c) -> (c g)' with g = groups
        check(out, F.channel_shuffle(x, groups))
        check(out, einops.rearrange(x, "b (g c) h w -> b (c g) h w", g=groups))


def test_channel_shuffle_vs_plain_loop_and_loop_version():
    gen = torch.Generator().manual_seed(32)
    for k in range(40):
        x, groups = shuffle_case(gen)
        expected = channel_shuffle_plain(x, groups)
        check(ref("channel_shuffle")(x, groups), expected)
        if k < 15:
            check(loop("channel_shuffle")(x, groups), expected)


def test_channel_shuffle_hidden_cases():
    cases = hidden_cases("channel_shuffle")
    shapes = [(c.args[0].shape, c.args[1]) for c in cases]
    assert any(g == 1 for _, g in shapes), "groups = 1"
    assert any(g == s[1] and g > 1 for s, g in shapes), "groups = C"
    assert any(1 < g < s[1] and g * g != s[1] for s, g in shapes), "a shuffle that is not its own inverse"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous input"
    assert {c.args[0].dtype for c in cases} >= {torch.float32, torch.float64, torch.int64}
    for c in cases:
        x, g = c.args
        check(ref("channel_shuffle")(x, g), F.channel_shuffle(x, g))


# --------------------------------------------------------------------------- max_pool_2x2

def pool_case(gen):
    B, C = draw(gen, 0, 3), draw(gen, 1, 4)
    H, W = 2 * draw(gen, 1, 5), 2 * draw(gen, 1, 5)
    kind = draw(gen, 0, 3)
    if kind == 3:  # few distinct values: ties in most windows
        x = torch.randint(-2, 2, (B, C, H, W), generator=gen, dtype=torch.int64)
        x = x if draw(gen, 0, 1) else x.to(torch.float32)
    else:
        x = values(gen, (B, C, H, W), (torch.float32, torch.float64, torch.int64)[kind])
        if draw(gen, 0, 3) == 0:
            x = x - x.abs().max() - 1 if x.numel() else x  # all negative
    return (lay_out(x, LAYOUTS[draw(gen, 0, 3)]),)


def max_pool_builtin(x):
    if x.shape[0] == 0:
        return x.new_empty(0, x.shape[1], x.shape[2] // 2, x.shape[3] // 2)
    return F.max_pool2d(x, kernel_size=2, stride=2)


def max_pool_plain(x):
    B, C, H, W = x.shape
    out = torch.zeros(B, C, H // 2, W // 2, dtype=x.dtype)
    rows = x.tolist()
    for b in range(B):
        for c in range(C):
            for i in range(H // 2):
                for j in range(W // 2):
                    window = [rows[b][c][2 * i + di][2 * j + dj] for di in (0, 1) for dj in (0, 1)]
                    out[b, c, i, j] = max(window)
    return out


def test_max_pool_2x2_vs_builtin():
    gen = torch.Generator().manual_seed(41)
    for _ in range(N_RANDOM):
        (x,) = pool_case(gen)
        check(ref("max_pool_2x2")(x), max_pool_builtin(x), rtol=0, atol=0)


def test_max_pool_2x2_vs_plain_loop_and_loop_version():
    gen = torch.Generator().manual_seed(42)
    for k in range(40):
        (x,) = pool_case(gen)
        expected = max_pool_plain(x)
        check(ref("max_pool_2x2")(x), expected, rtol=0, atol=0)
        if k < 15:
            check(loop("max_pool_2x2")(x), expected, rtol=0, atol=0)


def test_max_pool_2x2_hidden_cases():
    cases = hidden_cases("max_pool_2x2")
    xs = [c.args[0] for c in cases]
    assert any(x.shape[2:] == (2, 2) for x in xs), "H = W = 2"
    assert any(x.shape[2] != x.shape[3] for x in xs), "non-square"
    assert any(x.numel() and (x < 0).all() for x in xs), "all values negative"
    assert any(x.numel() and (x < 0).any() and (x > 0).any() for x in xs), "mixed signs"
    assert all(torch.isfinite(x).all() for x in xs if x.is_floating_point()), "finite values only"
    def has_tie(x):
        windows = einops.rearrange(x, "b c (h h0) (w w0) -> (b c h w) (h0 w0)", h0=2, w0=2)
        return bool((windows == windows.amax(1, keepdim=True)).sum(1).gt(1).any())
    assert any(x.numel() and has_tie(x) for x in xs), "a window whose maximum appears twice"
    assert any(not x.is_contiguous() for x in xs), "non-contiguous input"
    assert any(not x.is_contiguous() and not x.is_floating_point() for x in xs), "non-contiguous int input"
    assert {x.dtype for x in xs} >= {torch.float32, torch.float64, torch.int64}
    for x in xs:
        check(ref("max_pool_2x2")(x), max_pool_builtin(x), rtol=0, atol=0)


def test_max_pool_2x2_forbids_pooling_builtins():
    ex = ASSIGNMENT.exercise("max_pool_2x2")
    for pattern in ("max_pool*", "adaptive_max_pool*", "MaxPool*", "AdaptiveMaxPool*"):
        assert pattern in ex.forbidden
    assert set(ex.forbidden_ops) >= {"max_pool*", "adaptive_max_pool*"}
