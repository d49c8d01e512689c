"""Cross-checks for assignments/indexing.py.

Each reference is compared on 200+ random inputs with an implementation
written separately from it (a torch built-in, or plain Python on lists), the
loop versions on fewer inputs; the hidden cases are checked to cover the
edge cases the exercises promise; and a plausible wrong answer for each
exercise must fail the "correct" part.
"""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from graders import KIT_ROOT
from graders.checks.compare import mismatch
from graders.checks.submission import grade_submission
from graders.course.personas import demo_module
from graders.model.inputs import rand, randint

from crosscheck import LAYOUTS, Definitions

D = Definitions("indexing")
ASSIGNMENT, ref, loop, _hidden = D.assignment, D.ref, D.loop, D.hidden_cases
N_REF = 220   # random cases per exercise for the reference
N_LOOP = 25   # for the (slow) loop version


def _int(gen, low, high):
    return int(torch.randint(low, high, (1,), generator=gen))


def _choice(gen, options):
    return options[_int(gen, 0, len(options))]


def _clone(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _check_all_cases(fn, make, expected, count, seed):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(count):
        args, kwargs = make(gen)
        want = expected(*_clone(args), **kwargs)
        got = fn(*_clone(args), **kwargs)
        if want.is_floating_point():
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        else:
            assert got.dtype == want.dtype and torch.equal(got, want)


# ----------------------------------------------------------------------------- select_pairs

def _make_select_pairs(gen):
    N, M, K = _int(gen, 1, 12), _int(gen, 1, 12), _int(gen, 0, 30)
    dtype = _choice(gen, (torch.float32, torch.float64, torch.int64))
    layout = _choice(gen, LAYOUTS)
    a = randint(gen, -100, 100, N, M, layout=layout) if dtype == torch.int64 else rand(gen, N, M, dtype=dtype,
                                                                                      layout=layout)
    rows, cols = torch.randint(0, N, (K,), generator=gen), torch.randint(0, M, (K,), generator=gen)
    idx = _choice(gen, (torch.stack([rows, cols], 1),          # contiguous
                        torch.stack([rows, cols], 0).T,        # transposed
                        torch.stack([rows, rows, cols, cols], 1)[:, ::2]))  # sliced
    return (a, idx), {}


def _select_pairs_python(a, idx):
    values = a.tolist()
    return torch.tensor([values[i][j] for i, j in idx.tolist()], dtype=a.dtype)


def test_select_pairs_reference():
    _check_all_cases(ref("select_pairs"), _make_select_pairs, _select_pairs_python, N_REF, 1)


def test_select_pairs_loop():
    _check_all_cases(loop("select_pairs"), _make_select_pairs, _select_pairs_python, N_LOOP, 2)


def test_select_pairs_hidden_coverage():
    cases = _hidden("select_pairs")
    assert any(c.args[1].shape[0] == 0 for c in cases), "K = 0"
    assert any(torch.unique(c.args[1], dim=0).shape[0] < c.args[1].shape[0] for c in cases), "repeated pairs"
    dtypes = {c.args[0].dtype for c in cases}
    assert {torch.float32, torch.float64, torch.int64} <= dtypes
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous a"
    assert any(not c.args[1].is_contiguous() for c in cases), "non-contiguous idx"
    assert any(c.args[0].shape[0] != c.args[0].shape[1] for c in cases), "non-square a"


# -------------------------------------------------------------------------- double_positive_

def _make_double_positive(gen):
    N, M = _int(gen, 0, 10), _int(gen, 1, 10)
    dtype = _choice(gen, (torch.float32, torch.float64, torch.int64))
    layout = _choice(gen, LAYOUTS)
    if dtype == torch.int64:
        a = randint(gen, -5, 6, N, M, layout=layout)
    else:
        a = rand(gen, N, M, dtype=dtype, layout=layout)
        a[torch.rand(N, M, generator=gen) < 0.2] = 0.0   # some exact zeros (in place: the layout stays)
    return (a,), {}


def _double_positive_expected(a):
    return torch.where(a > 0, a * 2, a)


def _check_in_place(fn, count, seed):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(count):
        (a,), _ = _make_double_positive(gen)
        # a view into a larger tensor, maybe transposed: the writes must reach the base
        base = torch.zeros(a.shape[0] + 2, 2 * a.shape[1] + 1, dtype=a.dtype)
        window = base[1:-1, 1::2]
        window.copy_(a)
        transpose = bool(_int(gen, 0, 2))
        view = window.T if transpose else window
        before = base.clone()
        want = _double_positive_expected(a)
        out = fn(view)
        assert out is view
        assert torch.equal(window, want)
        assert torch.equal(view, want.T if transpose else want)
        outside = torch.ones_like(base, dtype=torch.bool)
        outside[1:-1, 1::2] = False
        assert torch.equal(base[outside], before[outside]), "wrote outside the view"


def test_double_positive_reference():
    _check_all_cases(ref("double_positive_"), _make_double_positive, _double_positive_expected, N_REF, 3)
    _check_in_place(ref("double_positive_"), N_REF, 4)


def test_double_positive_loop():
    _check_all_cases(loop("double_positive_"), _make_double_positive, _double_positive_expected, N_LOOP, 5)
    _check_in_place(loop("double_positive_"), N_LOOP, 6)


def test_double_positive_hidden_coverage():
    cases = _hidden("double_positive_")
    tensors = [c.args[0] for c in cases]
    assert any(t.numel() and (t < 0).all() for t in tensors), "all-negative"
    assert any(t.numel() and (t == 0).all() for t in tensors), "all zeros"
    assert any(t.numel() and (t == 0).any() and (t > 0).any() for t in tensors), "zeros among positives"
    assert {torch.float32, torch.float64, torch.int64} <= {t.dtype for t in tensors}
    for dtype in (torch.float32, torch.float64, torch.int64):
        assert any(t.dtype == dtype and not t.is_contiguous() for t in tensors), f"non-contiguous {dtype}"
    assert any(t.stride(0) == 1 and t.shape[0] > 1 for t in tensors), "transposed"
    assert any(t.stride(-1) > 1 for t in tensors), "sliced"


# ----------------------------------------------------------------------- rows_with_small_sum

def _make_rows_with_small_sum(gen):
    N, M = _int(gen, 0, 12), _int(gen, 1, 8)
    layout = _choice(gen, LAYOUTS)
    if _int(gen, 0, 2):
        a = randint(gen, -6, 7, N, M, layout=layout)
        sums = a.sum(1).tolist()
        # an int threshold may equal a row sum here: integer sums are exact
        threshold = _int(gen, min(sums, default=0) - 2, max(sums, default=0) + 3)
        if _int(gen, 0, 2):
            threshold = threshold + _choice(gen, (0.0, 0.5, -0.25))
    else:
        a = rand(gen, N, M, dtype=_choice(gen, (torch.float32, torch.float64)), layout=layout, scale=2.0)
        sums = [math.fsum(r) for r in a.double().tolist()]
        # keep float thresholds well away from every sum, whatever the summation order
        while True:
            threshold = float(torch.randn((), generator=gen, dtype=torch.float64)) * 2 * math.sqrt(M)
            if _int(gen, 0, 3) == 0:
                threshold = round(threshold)
            if all(abs(threshold - s) > 1e-3 for s in sums):
                break
    return (a, threshold), {}


def _rows_python(a, threshold):
    rows = [r for r in a.tolist() if math.fsum(r) < threshold]
    return torch.tensor(rows, dtype=a.dtype).reshape(len(rows), a.shape[1])


def test_rows_with_small_sum_reference():
    _check_all_cases(ref("rows_with_small_sum"), _make_rows_with_small_sum, _rows_python, N_REF, 7)


def test_rows_with_small_sum_loop():
    _check_all_cases(loop("rows_with_small_sum"), _make_rows_with_small_sum, _rows_python, N_LOOP, 8)


def test_rows_with_small_sum_hidden_coverage():
    cases = _hidden("rows_with_small_sum")
    outs = [(c.args[0], _rows_python(*c.args)) for c in cases]
    assert any(a.shape[0] > 0 and out.shape[0] == 0 for a, out in outs), "no row kept"
    assert any(a.shape[0] > 0 and out.shape[0] == a.shape[0] for a, out in outs), "every row kept"
    assert any(0 < out.shape[0] < a.shape[0] for a, out in outs), "some rows kept"
    assert any(out.shape == (0, a.shape[1]) and a.shape[1] > 0 for a, out in outs), "[0, M] output"
    assert any(a.is_floating_point() for a, _ in outs) and any(not a.is_floating_point() for a, _ in outs)
    assert any(not c.args[0].is_contiguous() and c.args[0].is_floating_point() for c in cases)
    assert any(not c.args[0].is_contiguous() and not c.args[0].is_floating_point() for c in cases)
    assert any(isinstance(c.args[1], float) for c in cases) and any(isinstance(c.args[1], int) for c in cases)
    assert any(c.args[0].shape[0] and (c.args[0].sum(1) == c.args[1]).any() for c in cases), "a tie"
    # float thresholds keep a clear distance from every row sum (no summation-order flips)
    for c in cases:
        a, t = c.args
        if a.is_floating_point() and a.numel():
            dist = (a.double().sum(1) - t).abs()
            assert ((dist > 1e-3) | (dist == 0)).all(), c.label


# --------------------------------------------------------------------------- conv2d_indexing

def _make_conv(gen):
    Cin, Cout, K = _int(gen, 1, 4), _int(gen, 1, 4), _int(gen, 1, 6)
    padding, stride = _int(gen, 0, 3), _int(gen, 1, 4)
    H = _int(gen, max(1, K - 2 * padding), K - 2 * padding + 9)
    W = _int(gen, max(1, K - 2 * padding), K - 2 * padding + 9)
    dtype = _choice(gen, (torch.float32, torch.float64))
    img = rand(gen, Cin, H, W, dtype=dtype, layout=_choice(gen, LAYOUTS))
    filters = rand(gen, Cin, Cout, K, K, dtype=dtype, layout=_choice(gen, LAYOUTS))
    if _int(gen, 0, 4) == 0:
        filters = rand(gen, Cout, Cin, K, K, dtype=dtype).transpose(0, 1)
    form = _int(gen, 0, 3)
    if form == 0:
        return (img, filters, stride, padding), {}
    if form == 1:
        return (img, filters), {"stride": stride, "padding": padding}
    if stride == 1:
        return (img, filters), {"padding": padding}   # the default stride
    if padding == 0:
        return (img, filters), {"stride": stride}     # the default padding
    return (img, filters, stride), {"padding": padding}


def _conv_torch(img, filters, stride=1, padding=0):
    return F.conv2d(img[None], filters.transpose(0, 1), stride=stride, padding=padding)[0]


def test_conv2d_indexing_reference():
    _check_all_cases(ref("conv2d_indexing"), _make_conv, _conv_torch, 300, 9)


def test_conv2d_indexing_loop():
    _check_all_cases(loop("conv2d_indexing"), _make_conv, _conv_torch, N_LOOP, 10)


def test_conv2d_indexing_visible_example():
    img = torch.arange(36.).view(1, 6, 6)
    out = ref("conv2d_indexing")(img, torch.full((1, 1, 3, 3), 1 / 9))
    want = torch.tensor([[7., 8, 9, 10], [13, 14, 15, 16], [19, 20, 21, 22], [25, 26, 27, 28]])
    torch.testing.assert_close(out, want[None], rtol=1e-5, atol=1e-5)


def _conv_params(case):
    stride = case.kwargs.get("stride", case.args[2] if len(case.args) > 2 else 1)
    padding = case.kwargs.get("padding", case.args[3] if len(case.args) > 3 else 0)
    return stride, padding


def test_conv2d_indexing_hidden_coverage():
    cases = _hidden("conv2d_indexing")
    infos = []
    for c in cases:
        img, filters = c.args[:2]
        stride, padding = _conv_params(c)
        infos.append(dict(K=filters.shape[2], Cin=img.shape[0], Cout=filters.shape[1], stride=stride,
                          padding=padding, H=img.shape[1] + 2 * padding, W=img.shape[2] + 2 * padding,
                          dtype=img.dtype, img_nc=not img.is_contiguous(), f_nc=not filters.is_contiguous()))
        torch.testing.assert_close(ref("conv2d_indexing")(*_clone(c.args), **c.kwargs),
                                   _conv_torch(img, filters, stride, padding), rtol=1e-4, atol=1e-4)
    assert any(i["K"] % 2 == 1 and i["K"] > 1 for i in infos), "odd K"
    assert any(i["K"] % 2 == 0 for i in infos), "even K"
    assert any(i["K"] == 1 for i in infos), "K = 1"
    assert any(i["stride"] > 1 for i in infos), "stride > 1"
    assert any(i["padding"] > 0 for i in infos), "padding > 0"
    assert any(i["stride"] > 1 and i["padding"] > 0 for i in infos), "both"
    assert any(i["K"] == i["H"] == i["W"] and i["padding"] > 0 for i in infos), "K = padded size (1x1)"
    assert any(i["K"] == i["H"] == i["W"] and i["K"] % 2 == 0 for i in infos), "even K = padded size"
    assert any(i["Cin"] == 1 for i in infos) and any(i["Cout"] == 1 for i in infos)
    assert any(i["Cin"] != i["Cout"] for i in infos)
    assert {torch.float32, torch.float64} <= {i["dtype"] for i in infos}
    assert any(i["img_nc"] for i in infos) and any(i["f_nc"] for i in infos)
    assert any(i["H"] != i["W"] for i in infos), "non-square image"


# ----------------------------------------------------------------------------------- one_hot

def _make_one_hot(gen):
    N, C = _int(gen, 0, 40), _int(gen, 1, 12)
    labels = randint(gen, 0, C, N, layout=_choice(gen, LAYOUTS))
    if _int(gen, 0, 4) == 0:
        labels = randint(gen, 0, C, N, 3)[:, 1]   # a column: stride 3
    return (labels, C), {}


def _one_hot_torch(labels, num_classes):
    return F.one_hot(labels, num_classes)


def test_one_hot_reference():
    _check_all_cases(ref("one_hot"), _make_one_hot, _one_hot_torch, N_REF, 11)


def test_one_hot_loop():
    _check_all_cases(loop("one_hot"), _make_one_hot, _one_hot_torch, N_LOOP, 12)


def test_one_hot_hidden_coverage():
    cases = _hidden("one_hot")
    assert any(c.args[0].shape[0] == 0 for c in cases), "N = 0"
    assert any(c.args[1] == 1 for c in cases), "C = 1"
    assert any(not c.args[0].is_contiguous() for c in cases), "non-contiguous labels"
    for c in cases:
        assert torch.equal(ref("one_hot")(*_clone(c.args)), F.one_hot(*c.args)), c.label


# ------------------------------------------------------------------- wrong answers fail "correct"

DEMO_WRONG = demo_module(KIT_ROOT, "indexing").WRONG  # each first wrong answer is the demo class's

WRONG = {
    "select_pairs": [
        # the row stride is the number of columns, not rows
        DEMO_WRONG["select_pairs"],
        # right for contiguous a only
        "def select_pairs(a, idx):\n    return a.view(-1)[idx[:, 0] * a.shape[1] + idx[:, 1]]\n",
    ],
    "double_positive_": [
        # b is a copy: a is never changed
        DEMO_WRONG["double_positive_"],
        # a new tensor, not in place
        "def double_positive_(a):\n    return torch.where(a > 0, 2 * a, a)\n",
        # a contiguous copy of a non-contiguous view: the writes go nowhere (or view() fails)
        "def double_positive_(a):\n    flat = a.reshape(-1)\n    flat[flat > 0] *= 2\n    return a\n",
    ],
    "rows_with_small_sum": [
        DEMO_WRONG["rows_with_small_sum"],
        "def rows_with_small_sum(a, threshold):\n    return a[a.mean(1) < threshold]\n",
    ],
    "conv2d_indexing": [
        # the chapter's bug: padding ignored
        DEMO_WRONG["conv2d_indexing"],
        # a flipped kernel (true convolution rather than cross-correlation)
        "def conv2d_indexing(img, filters, stride=1, padding=0):\n"
        "    Cin, H, W = img.shape\n"
        "    Cout, K = filters.shape[1], filters.shape[2]\n"
        "    x = torch.zeros(Cin, H + 2 * padding, W + 2 * padding, dtype=img.dtype)\n"
        "    x[:, padding:padding + H, padding:padding + W] = img\n"
        "    Hout, Wout = (H + 2 * padding - K) // stride + 1, (W + 2 * padding - K) // stride + 1\n"
        "    rows = (torch.arange(Hout) * stride)[:, None, None, None] + torch.arange(K)[:, None]\n"
        "    cols = (torch.arange(Wout) * stride)[:, None, None] + torch.arange(K)\n"
        "    return torch.einsum('chwij,coij->ohw', x[:, rows, cols], filters.flip(-1, -2))\n",
    ],
    "one_hot": [
        # bool, not int64
        DEMO_WRONG["one_hot"],
        # float, not int64
        "def one_hot(labels, num_classes):\n"
        "    return torch.zeros(labels.shape[0], num_classes).scatter_(1, labels[:, None], 1.0)\n",
    ],
}


@pytest.fixture(scope="module")
def wrong_results():
    """Grade each round of wrong answers (one per exercise at most) in one worker."""
    rounds = max(len(v) for v in WRONG.values())
    results = {}
    for r in range(rounds):
        names = [name for name, sources in WRONG.items() if r < len(sources)]
        cells = [("preamble", ASSIGNMENT.preamble)] + [(f"your `{n}` cell", WRONG[n][r]) for n in names]
        graded = grade_submission(ASSIGNMENT, cells, seed=0, only=names)
        for n in names:
            results[(n, r)] = graded[n]
    return results


@pytest.mark.parametrize("name,index", [(n, i) for n, v in WRONG.items() for i in range(len(v))])
def test_wrong_answer_fails_correct(wrong_results, name, index):
    verdict = wrong_results[(name, index)]["correct"]
    assert not verdict.passed, f"a wrong {name} passed: {WRONG[name][index]}"


@pytest.mark.parametrize("name", [ex.name for ex in ASSIGNMENT.exercises])
def test_loop_matches_reference_on_hidden_cases(name):
    """What "correct" checks, in-process: for several seeds the loop version matches the reference."""
    ex = ASSIGNMENT.exercise(name)
    for seed in (0, 1, 2):
        for case in _hidden(name, seed):
            want = ex.reference(*_clone(case.args), **case.kwargs)
            got = ex.loop(*_clone(case.args), **case.kwargs)
            assert mismatch(got, want, ex.rtol, ex.atol) is None, (seed, case.label)
