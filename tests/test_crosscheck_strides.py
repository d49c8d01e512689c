"""Cross-checks of the `strides` assignment against real tensors and torch built-ins.

The references are compared on hundreds of random cases with what torch itself does
(storage positions read off real strided views, ``torch.empty(...).stride()``,
``permute``, ``unfold``); the loop versions on fewer. The hidden cases are inspected
for the edge cases the exercises promise, and one wrong but plausible answer per
exercise must fail "correct".
"""
from __future__ import annotations

import inspect
import math
import textwrap

import pytest
import torch

from graders.checks.submission import grade_submission

from crosscheck import Definitions, lay_out

D = Definitions("strides")
ASSIGNMENT, ref, loop, hidden = D.assignment, D.ref, D.loop, D.hidden_cases


def rint(gen, low, high):
    return int(torch.randint(low, high, (1,), generator=gen))


def as_list_or_tuple(gen, values):
    return list(values) if rint(gen, 0, 2) else tuple(values)


# ------------------------------------------------------------------------ storage_offsets

def random_view(gen):
    """A strided view of a storage that holds 0, 1, 2, ...: each value is its own position."""
    N = rint(gen, 1, 6)
    sizes = [rint(gen, 1, 6) for _ in range(N)]
    if rint(gen, 0, 2):
        strides = [rint(gen, 0, 40) for _ in range(N)]
        offset = rint(gen, 0, 50)
        extent = offset + sum((s - 1) * st for s, st in zip(sizes, strides, strict=True)) + 1
        t = torch.arange(extent).as_strided(sizes, strides, offset)
    else:
        # a view made by ordinary view operations: slicing, permuting, expanding
        base = torch.arange(4000).view(10, 20, 20)[rint(gen, 0, 3):, ::rint(gen, 1, 3), rint(gen, 0, 4):]
        t = base.permute(*torch.randperm(3, generator=gen).tolist())
        if rint(gen, 0, 2):
            t = t[:, None].expand(-1, 3, -1, -1)
    return t


def offsets_case(gen):
    t = random_view(gen)
    K = rint(gen, 0, 20)
    indices = torch.stack([torch.randint(0, s, (K,), generator=gen) for s in t.shape], 1) \
        if K else torch.empty(0, t.dim(), dtype=torch.int64)
    indices = lay_out(indices, ("contiguous", "transposed", "sliced")[rint(gen, 0, 3)])
    expected = t[tuple(indices.unbind(1))] if K else torch.empty(0, dtype=torch.int64)
    return (indices, as_list_or_tuple(gen, t.stride()), t.storage_offset()), expected


def test_storage_offsets_matches_real_views():
    gen = torch.Generator().manual_seed(11)
    for _ in range(250):
        args, expected = offsets_case(gen)
        out = ref("storage_offsets")(*args)
        assert out.dtype == torch.int64 and out.shape == expected.shape
        assert torch.equal(out, expected)


def test_storage_offsets_loop_agrees():
    gen = torch.Generator().manual_seed(12)
    for _ in range(40):
        args, expected = offsets_case(gen)
        assert torch.equal(loop("storage_offsets")(*args), expected)


def test_storage_offsets_large_strides_formula():
    # strides too large for a real storage: check the formula itself, in Python ints
    gen = torch.Generator().manual_seed(13)
    for _ in range(50):
        N, K = rint(gen, 1, 5), rint(gen, 1, 10)
        strides = [rint(gen, 0, 2 ** 31) * rint(gen, 1, 1000) for _ in range(N)]
        indices = torch.randint(0, 1000, (K, N), generator=gen)
        offset = rint(gen, 0, 10 ** 6)
        expected = torch.tensor([offset + sum(int(i) * s for i, s in zip(row, strides, strict=True))
                                 for row in indices])
        assert torch.equal(ref("storage_offsets")(indices, tuple(strides), offset), expected)


# --------------------------------------------------------------------- contiguous_strides

def strides_case(gen):
    N = rint(gen, 1, 8)
    shape = torch.randint(1, 10, (N,), generator=gen)
    if rint(gen, 0, 3) == 0:
        shape[torch.rand(N, generator=gen) < 0.5] = 1
    shape = lay_out(shape, ("contiguous", "sliced")[rint(gen, 0, 2)])
    # the meta device computes the strides without allocating the tensor
    expected = torch.tensor(torch.empty(shape.tolist(), device="meta").stride(), dtype=torch.int64)
    return shape, expected


def test_contiguous_strides_matches_torch():
    gen = torch.Generator().manual_seed(21)
    for _ in range(250):
        shape, expected = strides_case(gen)
        out = ref("contiguous_strides")(shape)
        assert out.dtype == torch.int64
        assert torch.equal(out, expected), (shape, out, expected)


def test_contiguous_strides_loop_agrees():
    gen = torch.Generator().manual_seed(22)
    for _ in range(50):
        shape, expected = strides_case(gen)
        assert torch.equal(loop("contiguous_strides")(shape), expected)


def test_contiguous_strides_chapter_example():
    assert ref("contiguous_strides")(torch.tensor([2, 3, 4, 5])).tolist() == [60, 20, 5, 1]


# --------------------------------------------------------------------------- permute_flat

def permute_case(gen, max_size=5):
    N = rint(gen, 1, 6)
    shape = [rint(gen, 1, max_size + 1) for _ in range(N)]
    perm = torch.randperm(N, generator=gen).tolist()
    numel = 1
    for s in shape:
        numel *= s
    dtype = (torch.float32, torch.float64, torch.int64, torch.int32)[rint(gen, 0, 4)]
    if dtype.is_floating_point:
        buffer = torch.randn(numel, generator=gen, dtype=dtype)
    else:
        buffer = torch.randint(-99, 99, (numel,), generator=gen).to(dtype)
    buffer = lay_out(buffer, ("contiguous", "sliced")[rint(gen, 0, 2)])
    expected = buffer.contiguous().view(shape).permute(perm).contiguous().view(-1)
    return (buffer, as_list_or_tuple(gen, shape), as_list_or_tuple(gen, perm)), expected


def test_permute_flat_matches_permute():
    gen = torch.Generator().manual_seed(31)
    for _ in range(250):
        args, expected = permute_case(gen)
        out = ref("permute_flat")(*args)
        assert out.dtype == expected.dtype and out.shape == expected.shape
        assert torch.equal(out, expected), args[1:]


def test_permute_flat_loop_agrees():
    gen = torch.Generator().manual_seed(32)
    for _ in range(40):
        args, expected = permute_case(gen, max_size=4)
        assert torch.equal(loop("permute_flat")(*args), expected)


def test_permute_flat_nhwc_example_strides():
    buffer = torch.arange(120)
    view = buffer.as_strided((2, 5, 3, 4), (60, 1, 20, 5))
    assert torch.equal(ref("permute_flat")(buffer, (2, 3, 4, 5), (0, 3, 1, 2)), view.reshape(-1))


def test_permute_flat_size_zero_axis():
    buffer = torch.empty(0)
    out = ref("permute_flat")(buffer, (3, 0, 2), (2, 0, 1))
    assert out.shape == (0,) and out.dtype == torch.float32


# ------------------------------------------------------------------------ sliding_windows

def windows_case(gen):
    L = rint(gen, 1, 40)
    k = rint(gen, 1, L + 1)
    dtype = (torch.float32, torch.float64, torch.int64, torch.int32)[rint(gen, 0, 4)]
    how = rint(gen, 0, 4)
    if dtype.is_floating_point:
        big = torch.randn(3 * L + 5, generator=gen, dtype=dtype)
    else:
        big = torch.randint(-50, 50, (3 * L + 5,), generator=gen).to(dtype)
    if how == 0:
        x = big[:L]
    elif how == 1:
        x = big[1::2][:L]  # stride 2, storage offset 1
    elif how == 2:
        x = big[: 3 * L].view(L, 3)[:, 2]  # a column: stride 3
    else:
        x = big[5:5 + L]  # storage offset 5
    return x, k


def check_window_view(out, x, k):
    expected = x.unfold(0, k, 1)
    assert out.dtype == x.dtype and out.shape == expected.shape
    assert torch.equal(out, expected)
    assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert out.stride() == expected.stride() or out.shape[0] == 1 or k == 1
    assert out.storage_offset() == expected.storage_offset()


def test_sliding_windows_matches_unfold_and_is_a_view():
    gen = torch.Generator().manual_seed(41)
    for _ in range(250):
        x, k = windows_case(gen)
        out = ref("sliding_windows")(x, k)
        check_window_view(out, x, k)
        # writing through x shows through the result: no copy was made
        x2 = x.clone()
        out2 = ref("sliding_windows")(x2, k)
        x2[-1] = 7
        assert out2[-1, -1] == 7


def test_sliding_windows_loop_agrees():
    gen = torch.Generator().manual_seed(42)
    for _ in range(40):
        x, k = windows_case(gen)
        check_window_view(loop("sliding_windows")(x, k), x, k)


# ------------------------------------------------------------------- nhwc_to_nchw_offsets

def nhwc_shape(gen):
    shape = [rint(gen, 0 if rint(gen, 0, 10) == 0 else 1, 7) for _ in range(4)]
    return (list, tuple, torch.Size)[rint(gen, 0, 3)](shape)


def test_nhwc_to_nchw_offsets_reads_what_permute_moves():
    # an NHWC buffer holding 0, 1, 2, ...: permute(0, 3, 1, 2) shows, at each NCHW position, its NHWC offset
    gen = torch.Generator().manual_seed(51)
    for _ in range(250):
        shape = nhwc_shape(gen)
        expected = torch.arange(math.prod(shape)).view(*shape).permute(0, 3, 1, 2)
        out = ref("nhwc_to_nchw_offsets")(shape)
        assert out.dtype == torch.int64 and out.shape == expected.shape, shape
        assert torch.equal(out, expected), shape
        values = torch.randn(*shape, generator=gen)
        assert torch.equal(values.reshape(-1)[out], values.permute(0, 3, 1, 2))


def test_nhwc_to_nchw_offsets_loop_agrees():
    gen = torch.Generator().manual_seed(52)
    for _ in range(40):
        shape = nhwc_shape(gen)
        assert torch.equal(loop("nhwc_to_nchw_offsets")(shape), ref("nhwc_to_nchw_offsets")(shape))


def test_nhwc_to_nchw_offsets_seed_example():
    # the seed's question: a (1, 640, 640, 3) image to (1, 3, 640, 640); offset = h*W*C + w*C + c
    out = ref("nhwc_to_nchw_offsets")((1, 640, 640, 3))
    assert out.shape == (1, 3, 640, 640)
    assert int(out[0, 2, 5, 7]) == 5 * 640 * 3 + 7 * 3 + 2


def test_hidden_nhwc_to_nchw_offsets_coverage():
    cases = hidden("nhwc_to_nchw_offsets")
    shapes = [c.args[0] for c in cases]
    assert all(len(s) == 4 for s in shapes)
    assert {type(s) for s in shapes} == {list, tuple, torch.Size}
    assert any(s[3] == 1 for s in shapes), "C = 1"
    assert any(s[1] == s[2] == 1 for s in shapes), "H = W = 1"
    assert any(0 in s for s in shapes), "a size-0 axis"
    assert any(s[3] > 1 and s[1] * s[2] > 1 for s in shapes), "a case where the order matters"


def nhwc_to_nchw_offsets(shape):
    # the NCHW offsets of a contiguous NCHW tensor: as if the data were already NCHW
    N, H, W, C = shape
    return torch.arange(N * C * H * W).view(N, C, H, W)


def nhwc_to_nchw_offsets_swapped(shape):
    # H and W strides swapped
    N, H, W, C = shape
    return (torch.arange(N)[:, None, None, None] * (H * W * C) + torch.arange(C)[:, None, None]
            + torch.arange(H)[:, None] * C + torch.arange(W) * (H * C))


def nhwc_to_nchw_offsets_permuted(shape):
    # the forbidden shortcut: right values, but permute moves the axes
    N, H, W, C = shape
    return torch.arange(N * H * W * C).view(N, H, W, C).permute(0, 3, 1, 2)


def test_nhwc_to_nchw_offsets_wrong_answers_fail():
    for wrong in (nhwc_to_nchw_offsets, nhwc_to_nchw_offsets_swapped):
        verdict = D.grade({"nhwc_to_nchw_offsets": source(wrong, "nhwc_to_nchw_offsets")})
        assert not verdict["nhwc_to_nchw_offsets"]["correct"].passed, wrong.__name__
    shortcut = D.grade({"nhwc_to_nchw_offsets": source(nhwc_to_nchw_offsets_permuted, "nhwc_to_nchw_offsets")})
    got = shortcut["nhwc_to_nchw_offsets"]
    assert got["correct"].passed and not got["vectorized"].passed
    assert "permute" in got["vectorized"].message


# -------------------------------------------------------------------- hidden-case coverage

def test_hidden_storage_offsets_coverage():
    cases = hidden("storage_offsets")
    assert any(c.args[0].shape[0] == 0 for c in cases), "K = 0"
    assert any(c.args[0].shape[1] == 1 for c in cases), "N = 1"
    assert any(max(c.args[1]) >= 10 ** 9 for c in cases), "large strides"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous indices"
    assert any(isinstance(c.args[1], list) for c in cases) and any(isinstance(c.args[1], tuple) for c in cases)
    assert all(len(c.args[1]) == c.args[0].shape[1] for c in cases)
    assert all(c.args[0].dtype == torch.int64 and isinstance(c.args[2], int) for c in cases)


def test_hidden_contiguous_strides_coverage():
    cases = hidden("contiguous_strides")
    assert any(c.args[0].shape[0] == 1 for c in cases), "N = 1"
    assert any((c.args[0] == 1).any() for c in cases), "sizes of 1"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous shape tensor"
    assert all((c.args[0] >= 1).all() and c.args[0].dtype == torch.int64 for c in cases)


def test_hidden_permute_flat_coverage():
    cases = hidden("permute_flat")
    assert any(isinstance(c.args[1], list) and isinstance(c.args[2], list) for c in cases)
    assert any(isinstance(c.args[1], tuple) and isinstance(c.args[2], tuple) for c in cases)
    assert any(c.args[0].is_floating_point() for c in cases)
    assert any(not c.args[0].is_floating_point() for c in cases)
    assert any(not c.args[0].is_contiguous() for c in cases)
    assert any(len(c.args[1]) == 1 for c in cases)
    assert any(list(c.args[1]) == [2, 3, 4, 5] or list(c.args[2]) == [0, 3, 1, 2] for c in cases)
    for c in cases:
        assert sorted(c.args[2]) == list(range(len(c.args[1])))


def test_hidden_sliding_windows_coverage():
    cases = hidden("sliding_windows")
    assert any(c.args[1] == 1 for c in cases), "k = 1"
    assert any(c.args[1] == c.args[0].shape[0] for c in cases), "k = L"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous x"
    assert any(c.args[0].is_floating_point() for c in cases)
    assert any(not c.args[0].is_floating_point() for c in cases)
    assert all(1 <= c.args[1] <= c.args[0].shape[0] and c.args[0].dim() == 1 for c in cases)


# ----------------------------------------------------------------- wrong answers fail

def permute_flat(buffer, shape, perm):
    # applies the inverse permutation
    sizes = torch.tensor(shape)
    order = torch.argsort(torch.tensor(perm))
    strides = torch.cat([sizes[1:], torch.ones_like(sizes[:1])]).flip(0).cumprod(0).flip(0)
    new_sizes, new_strides = sizes[order], strides[order]
    place = torch.cat([new_sizes[1:], torch.ones_like(new_sizes[:1])]).flip(0).cumprod(0).flip(0)
    index = torch.arange(buffer.shape[0])[:, None] // place % new_sizes
    return buffer[(index * new_strides).sum(1)]


def sliding_windows_copy(x, k):
    # right values, but a copy
    return x.unfold(0, k, 1).clone()


WRONG = (permute_flat,)  # beside the demo class's wrong answers, which tests/test_contract.py grades


def source(fn, name=None):
    text = textwrap.dedent(inspect.getsource(fn))
    return text.replace(f"def {fn.__name__}(", f"def {name}(") if name else text


@pytest.fixture(scope="module")
def wrong_results():
    cells = [("preamble", ASSIGNMENT.preamble)] + [(f"your `{fn.__name__}` cell", source(fn)) for fn in WRONG]
    return grade_submission(ASSIGNMENT, cells, seed=0)


@pytest.mark.parametrize("name", [fn.__name__ for fn in WRONG])
def test_wrong_answer_fails(wrong_results, name):
    verdict = wrong_results[name]["correct"]
    assert not verdict.passed, verdict.message
    assert not wrong_results[name]["vectorized"].passed


def test_copy_instead_of_view_fails():
    cells = [("preamble", ASSIGNMENT.preamble),
             ("your `sliding_windows` cell", source(sliding_windows_copy, "sliding_windows"))]
    verdict = grade_submission(ASSIGNMENT, cells, seed=0, only=["sliding_windows"])["sliding_windows"]["correct"]
    assert not verdict.passed
    assert "copy" in verdict.message
