"""Cross-checks of the `scatter` assignment: references against independent implementations.

Every reference is run on 200+ random cases against a torch built-in or a
plain loop written here from catalog.md's wording (not from the reference or
the `_loop` version); the `_loop` versions are checked on fewer cases; the
hidden cases are inspected for the edge cases the exercises must cover; and a
plausible wrong vectorized answer per exercise must fail "correct".
"""
from __future__ import annotations

import warnings

import pytest
import torch

from graders import KIT_ROOT
from graders.checks.submission import grade_submission
from graders.course.personas import demo_module

from crosscheck import LAYOUTS, Definitions, lay_out

D = Definitions("scatter")
ASSIGNMENT, ref, loop, hidden_cases = D.assignment, D.ref, D.loop, D.hidden_cases
REDUCTIONS = ("prod", "mean", "amax", "amin")


def randint_(gen, high):
    """A Python int in [0, high), drawn from gen."""
    return int(torch.randint(high, (1,), generator=gen))


def index_reduce_builtin(base, index, source, reduce, include_self=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "index_reduce() is in beta"
        return base.index_reduce(0, index, source, reduce, include_self=include_self)


# ------------------------------------------------------------------------ index_reduce_rows

def random_index_reduce_case(gen, k):
    R = randint_(gen, 8) + 1
    S = randint_(gen, 14)
    D = randint_(gen, 5) + 1
    dtype = (torch.float32, torch.float64)[k % 2]
    reduce = REDUCTIONS[(k // 2) % 4]
    include_self = (k // 8) % 2 == 0
    base = torch.randn(R, D, generator=gen, dtype=dtype)
    source = torch.randn(S, D, generator=gen, dtype=dtype)
    # bias the index towards low rows, so some rows repeat and some are never hit
    index = torch.randint(max(1, R - randint_(gen, 3)), (S,), generator=gen)
    base = lay_out(base, LAYOUTS[k % 3])
    source = lay_out(source, LAYOUTS[(k // 3) % 3])
    index = lay_out(index, LAYOUTS[(k // 5) % 3])
    return base, index, source, reduce, include_self


def test_index_reduce_rows_matches_tensor_index_reduce():
    gen = torch.Generator().manual_seed(1)
    seen = set()
    for k in range(320):
        base, index, source, reduce, include_self = random_index_reduce_case(gen, k)
        before = base.clone()
        expected = index_reduce_builtin(base, index, source, reduce, include_self)
        out = ref("index_reduce_rows")(base, index, source, reduce, include_self=include_self)
        assert out.dtype == base.dtype and out.shape == base.shape
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
        assert torch.equal(base, before), "the reference modified base"
        seen.add((reduce, include_self, base.dtype))
    assert len(seen) == 16


def test_index_reduce_rows_loop_agrees():
    gen = torch.Generator().manual_seed(2)
    for k in range(48):
        base, index, source, reduce, include_self = random_index_reduce_case(gen, k)
        before = base.clone()
        expected = index_reduce_builtin(base, index, source, reduce, include_self)
        out = loop("index_reduce_rows")(base, index, source, reduce, include_self)
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
        assert torch.equal(base, before)


def test_index_reduce_rows_page_example():
    # the worked example of the torch.Tensor.index_reduce_ reference page (seed 002)
    base = torch.full((5, 3), 2.0)
    source = torch.tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], dtype=torch.float)
    index = torch.tensor([0, 4, 2, 0])
    f = ref("index_reduce_rows")
    assert torch.equal(f(base, index, source, "prod"), torch.tensor(
        [[20., 44., 72.], [2., 2., 2.], [14., 16., 18.], [2., 2., 2.], [8., 10., 12.]]))
    assert torch.equal(f(base, index, source, "prod", include_self=False), torch.tensor(
        [[10., 22., 36.], [2., 2., 2.], [7., 8., 9.], [2., 2., 2.], [4., 5., 6.]]))
    torch.testing.assert_close(f(base, index, source, "mean")[0], torch.tensor([13., 15., 17.]) / 3)
    assert torch.equal(base, torch.full((5, 3), 2.0))


def _index_reduce_args(case):
    base, index, source, reduce, *rest = case.args
    include_self = case.kwargs.get("include_self", rest[0] if rest else True)
    return base, index, source, reduce, include_self


def test_index_reduce_rows_hidden_coverage():
    cases = hidden_cases("index_reduce_rows")
    combos, empty, repeated, unhit = set(), set(), set(), set()
    noncontig = {"base": False, "index": False, "source": False}
    for case in cases:
        base, index, source, reduce, include_self = _index_reduce_args(case)
        combos.add((reduce, include_self, base.dtype))
        R, S = base.shape[0], index.shape[0]
        if S == 0:
            empty.add((reduce, include_self))
        if S and torch.unique(index).numel() < S:
            repeated.add((reduce, include_self))
        if torch.unique(index).numel() < R:
            unhit.add((reduce, include_self))
        for name, t in (("base", base), ("index", index), ("source", source)):
            noncontig[name] |= not t.is_contiguous()
        # the loop version, the reference and the built-in agree on every hidden case
        expected = index_reduce_builtin(base, index, source, reduce, include_self)
        torch.testing.assert_close(ref("index_reduce_rows")(*case.args, **case.kwargs), expected)
        torch.testing.assert_close(loop("index_reduce_rows")(*case.args, **case.kwargs), expected)
    every = {(r, i) for r in REDUCTIONS for i in (True, False)}
    assert combos == {(r, i, d) for r, i in every for d in (torch.float32, torch.float64)}
    assert empty == every and repeated == every and unhit == every
    assert all(noncontig.values()), noncontig


# --------------------------------------------------------------------------- reverse_unique

def random_tensor_for_unique(gen, k):
    ndim = 1 + k % 4
    shape = [randint_(gen, 5) + (0 if k % 23 == 0 else 1) for _ in range(ndim)]
    kind = k % 3
    if kind == 0:
        a = torch.randint(-5, 6, shape, generator=gen)
    elif kind == 1:
        a = (torch.randn(shape, generator=gen) * 3).round() / 2
    else:
        a = torch.randn(shape, generator=gen, dtype=torch.float64)
    if k % 17 == 0:
        a = torch.full(shape, 4, dtype=a.dtype)
    return a


def test_reverse_unique_rebuilds_a():
    gen = torch.Generator().manual_seed(3)
    for k in range(240):
        a = random_tensor_for_unique(gen, k)
        values, inverse = torch.unique(a, return_inverse=True)
        inverse = lay_out(inverse, LAYOUTS[k % 3]) if inverse.dim() else inverse
        out = ref("reverse_unique")(values, inverse)
        assert out.dtype == a.dtype and out.shape == a.shape
        assert torch.equal(out, a)


def test_reverse_unique_loop_agrees():
    gen = torch.Generator().manual_seed(4)
    for k in range(40):
        a = random_tensor_for_unique(gen, k)
        out = loop("reverse_unique")(*torch.unique(a, return_inverse=True))
        assert out.dtype == a.dtype and out.shape == a.shape and torch.equal(out, a)


def test_reverse_unique_hidden_coverage():
    cases = hidden_cases("reverse_unique")
    dims, dtypes = set(), set()
    one_value = empty = noncontig = False
    for case in cases:
        values, inverse = case.args
        dims.add(inverse.dim())
        dtypes.add(values.is_floating_point())
        one_value |= values.numel() == 1 and inverse.numel() > 1
        empty |= inverse.numel() == 0
        noncontig |= not inverse.is_contiguous()
        expected = values[inverse]  # what torch.unique's documentation promises
        assert torch.equal(ref("reverse_unique")(values, inverse), expected)
        assert torch.equal(loop("reverse_unique")(values, inverse), expected)
    assert {1, 2} <= dims and dtypes == {True, False}
    assert one_value and empty and noncontig


# ----------------------------------------------------------------------------- segment_mean

def segment_mean_plain(data, segment_ids, num_segments):
    """Straight from the catalog: the mean of the rows of each segment, 0 for an empty one."""
    ids = segment_ids.tolist()
    rows = [[] for _ in range(num_segments)]
    for i, s in enumerate(ids):
        rows[s].append(data[i].double())
    out = torch.zeros(num_segments, data.shape[1], dtype=torch.float64)
    for s, members in enumerate(rows):
        if members:
            out[s] = torch.stack(members).sum(0) / len(members)
    return out.to(data.dtype)


def random_segment_case(gen, k):
    N = 0 if k % 29 == 0 else randint_(gen, 40) + 1
    D = randint_(gen, 6) + 1
    S = 1 if k % 13 == 0 else randint_(gen, 10) + 1
    used = max(1, S - randint_(gen, 3))  # the last few segments often stay empty
    dtype = (torch.float32, torch.float64)[k % 2]
    data = torch.randn(N, D, generator=gen, dtype=dtype) * 3
    ids = torch.randint(used, (N,), generator=gen)
    return lay_out(data, LAYOUTS[k % 3]), lay_out(ids, LAYOUTS[(k // 3) % 3]), S


def test_segment_mean_matches_plain_loop():
    gen = torch.Generator().manual_seed(5)
    for k in range(240):
        data, ids, S = random_segment_case(gen, k)
        out = ref("segment_mean")(data, ids, S)
        assert out.dtype == data.dtype and out.shape == (S, data.shape[1])
        torch.testing.assert_close(out, segment_mean_plain(data, ids, S), rtol=1e-5, atol=1e-6)


def test_segment_mean_loop_agrees():
    gen = torch.Generator().manual_seed(6)
    for k in range(40):
        data, ids, S = random_segment_case(gen, k)
        torch.testing.assert_close(loop("segment_mean")(data, ids, S), segment_mean_plain(data, ids, S),
                                   rtol=1e-5, atol=1e-6)


def test_segment_mean_hidden_coverage():
    cases = hidden_cases("segment_mean")
    dtypes = set()
    empty_segment = no_rows = one_segment = nc_data = nc_ids = False
    for case in cases:
        data, ids, S = case.args
        dtypes.add(data.dtype)
        counts = torch.bincount(ids, minlength=S)
        empty_segment |= data.shape[0] > 0 and bool((counts == 0).any())
        no_rows |= data.shape[0] == 0
        one_segment |= S == 1
        nc_data |= not data.is_contiguous()
        nc_ids |= not ids.is_contiguous()
        expected = segment_mean_plain(data, ids, S)
        torch.testing.assert_close(ref("segment_mean")(data, ids, S), expected, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(loop("segment_mean")(data, ids, S), expected, rtol=1e-5, atol=1e-6)
    assert dtypes == {torch.float32, torch.float64}
    assert empty_segment and no_rows and one_segment and nc_data and nc_ids


# ------------------------------------------------------------------------- confusion_matrix

def confusion_plain(pred, target, C):
    out = [[0] * C for _ in range(C)]
    for t, p in zip(target.tolist(), pred.tolist(), strict=True):
        out[t][p] += 1
    return torch.tensor(out, dtype=torch.int64).view(C, C)


def confusion_bincount(pred, target, C):
    return torch.bincount(target * C + pred, minlength=C * C).view(C, C)


def random_confusion_case(gen, k):
    N = 0 if k % 31 == 0 else randint_(gen, 120)
    C = 1 if k % 11 == 0 else randint_(gen, 9) + 1
    pred = torch.randint(C, (N,), generator=gen)
    target = pred.clone() if k % 19 == 0 else torch.randint(C, (N,), generator=gen)
    return lay_out(pred, LAYOUTS[k % 3]), lay_out(target, LAYOUTS[(k // 3) % 3]), C


def test_confusion_matrix_matches_bincount_and_loop():
    gen = torch.Generator().manual_seed(7)
    for k in range(240):
        pred, target, C = random_confusion_case(gen, k)
        out = ref("confusion_matrix")(pred, target, C)
        assert out.dtype == torch.int64 and out.shape == (C, C)
        assert torch.equal(out, confusion_bincount(pred, target, C))
        assert torch.equal(out, confusion_plain(pred, target, C))
        assert int(out.sum()) == pred.shape[0]


def test_confusion_matrix_loop_agrees():
    gen = torch.Generator().manual_seed(8)
    for k in range(40):
        pred, target, C = random_confusion_case(gen, k)
        assert torch.equal(loop("confusion_matrix")(pred, target, C), confusion_plain(pred, target, C))


def test_confusion_matrix_hidden_coverage():
    cases = hidden_cases("confusion_matrix")
    no_rows = one_class = noncontig = False
    for case in cases:
        pred, target, C = case.args
        no_rows |= pred.shape[0] == 0
        one_class |= C == 1
        noncontig |= not (pred.is_contiguous() and target.is_contiguous())
        expected = confusion_plain(pred, target, C)
        assert torch.equal(ref("confusion_matrix")(pred, target, C), expected)
        assert torch.equal(loop("confusion_matrix")(pred, target, C), expected)
    assert no_rows and one_class and noncontig


# ------------------------------------------------------------------------- sized / examples

@pytest.mark.parametrize("name", [ex.name for ex in ASSIGNMENT.exercises])
def test_sized_inputs_agree(name):
    ex = ASSIGNMENT.exercise(name)
    gen = torch.Generator().manual_seed(9)
    for n in ex.count_sizes:
        args = ex.sized(gen, n)
        torch.testing.assert_close(ex.loop(*args), ex.reference(*args))


# ------------------------------------------------------------------------ wrong answers fail

DEMO_WRONG = demo_module(KIT_ROOT, "scatter").WRONG  # each first wrong answer is the demo class's

WRONG = {
    "index_reduce_rows": [
        # ignores include_self
        """\
def index_reduce_rows(base, index, source, reduce, include_self=True):
    return base.scatter_reduce(0, index[:, None].expand(-1, base.shape[1]), source, reduce)
""",
        # a "mean" that leaves the base row out of the count when include_self=True
        """\
def index_reduce_rows(base, index, source, reduce, include_self=True):
    where = index[:, None].expand(-1, base.shape[1])
    out = base.scatter_reduce(0, where, source, reduce, include_self=include_self)
    if reduce == "mean" and include_self:
        counts = torch.bincount(index, minlength=base.shape[0]).to(base.dtype)[:, None]
        sums = base.index_add(0, index, source)
        out = torch.where(counts > 0, sums / counts.clamp(min=1), base)
    return out
""",
    ],
    "reverse_unique": [
        # loses a's shape
        DEMO_WRONG["reverse_unique"],
    ],
    "segment_mean": [
        # advanced-index += drops repeated segments
        DEMO_WRONG["segment_mean"],
        # divides empty segments by 0
        """\
def segment_mean(data, segment_ids, num_segments):
    sums = torch.zeros(num_segments, data.shape[1], dtype=data.dtype).index_add_(0, segment_ids, data)
    counts = torch.bincount(segment_ids, minlength=num_segments).to(data.dtype)
    return sums / counts[:, None]
""",
    ],
    "confusion_matrix": [
        # advanced-index += counts a repeated pair once
        DEMO_WRONG["confusion_matrix"],
    ],
}


@pytest.mark.parametrize("name", list(WRONG))
def test_wrong_answers_fail_correct(name):
    for source in WRONG[name]:
        cells = [("preamble", ASSIGNMENT.preamble), (f"your `{name}` cell", source)]
        result = grade_submission(ASSIGNMENT, cells, seed=0, only=[name])
        assert not result[name]["correct"].passed, source
