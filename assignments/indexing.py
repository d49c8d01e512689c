"""Assignment 3: basic, integer-array and boolean-array indexing.

Each exercise below is complete: task text, loop version, reference,
visible examples, hidden cases, tolerances, speed thresholds and points.
``vecgrade build`` turns this file into ``source/indexing/indexing.ipynb``.
"""
import torch

from graders.model.exercise import Assignment, Case, Example, Exercise, load_lesson, load_variants
from graders.model.inputs import pick, rand, randint

V = load_variants(__file__)
CASES = load_variants(__file__, "cases")

LESSON = load_lesson(__file__)


# --------------------------------------------------------------------------- select_pairs

def select_pairs_loop(a, idx):
    K = idx.shape[0]
    out = torch.empty(K, dtype=a.dtype)
    for k in range(K):
        i = idx[k, 0]
        j = idx[k, 1]
        out[k] = a[i, j]
    return out


def select_pairs(a, idx):
    return a[idx[:, 0], idx[:, 1]]


def select_pairs_hidden(gen):
    for N, M, K in [(1, 1, 1), (3, 4, 5), (4, 3, 12), (7, 2, 9), (10, 10, 40)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} a [{N}, {M}], K = {K}", (rand(gen, N, M, dtype=dtype), CASES._index_pairs(gen, N, M, K)))
    yield Case("int64 a", (randint(gen, -50, 50, 6, 5), CASES._index_pairs(gen, 6, 5, 10)))
    yield Case("K = 0", (rand(gen, 4, 3), CASES._index_pairs(gen, 4, 3, 0)))
    yield Case("many repeated pairs", (rand(gen, 2, 3), CASES._index_pairs(gen, 2, 3, 30)))
    pairs = CASES._index_pairs(gen, 5, 6, 4)
    yield Case("every pair twice", (rand(gen, 5, 6), torch.cat([pairs, pairs.flip(0)])))
    yield Case("a single row", (rand(gen, 1, 8), CASES._index_pairs(gen, 1, 8, 6)))
    yield Case("a single column", (rand(gen, 8, 1), CASES._index_pairs(gen, 8, 1, 6)))
    for layout in ("transposed", "sliced"):
        yield Case(f"{layout} a", (rand(gen, 6, 9, layout=layout), CASES._index_pairs(gen, 6, 9, 11)))
        yield Case(f"{layout} idx", (rand(gen, 9, 6), CASES._index_pairs(gen, 9, 6, 11, layout=layout)))
    yield Case("transposed int64 a, sliced idx",
               (randint(gen, -9, 10, 5, 7, layout="transposed"), CASES._index_pairs(gen, 5, 7, 8, layout="sliced")))


SELECT_PAIRS = Exercise(
    task="""\
Given a matrix `a` of shape `[N, M]` and `K` index pairs `idx` (int64, shape
`[K, 2]`, each row a `(row, column)` pair inside `a`), return the `K` selected
entries, shape `[K]`: `out[k] = a[idx[k, 0], idx[k, 1]]`. Pairs may repeat,
`K` may be 0, and the result has the dtype of `a`.""",
    hints=("Integer-array indexing takes one index tensor per axis of `a`.",
           "`a[idx]` indexes only the first axis; split `idx` into its two columns."),
    reference=select_pairs,
    alternatives=(V.select_pairs_unbind, V.select_pairs_take),
    half_loops=(V.select_pairs_half_loop, V.select_pairs_half_loop_cols, V.select_pairs_half_loop_k),
    loop=select_pairs_loop,
    hidden=select_pairs_hidden,
    sized=lambda gen, n: (rand(gen, n, n), CASES._index_pairs(gen, n, n, n * n)),
    examples=(
        Example("a = torch.arange(12).view(3, 4)\nidx = torch.tensor([[1, 3], [2, 2], [0, 1]])",
                "select_pairs(a, idx)"),
        Example("a = torch.arange(12.).view(3, 4)\nidx = torch.tensor([[0, 0], [0, 3], [2, 0], [2, 3]])",
                "select_pairs(a, idx)", note="the four corners"),
    ),
    loop_hint="gather all K entries at once with integer-array indexing instead",
    bench_size=80,
    speedup=15,
)


# ----------------------------------------------------------------------- double_positive_

def double_positive__loop(a):
    N, M = a.shape
    for i in range(N):
        for j in range(M):
            if a[i, j] > 0:
                a[i, j] = a[i, j] * 2
    return a


def double_positive_(a):
    a[a > 0] *= 2
    return a


def double_positive__hidden(gen):
    for N, M in [(1, 1), (3, 4), (9, 2), (16, 11)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} [{N}, {M}]", (rand(gen, N, M, dtype=dtype),))
    yield Case("int64 input", (randint(gen, -9, 10, 6, 7),))
    yield Case("all entries negative", (-rand(gen, 5, 4).abs() - 0.1,))
    yield Case("all entries positive", (rand(gen, 5, 4, dtype=torch.float64).abs() + 0.1,))
    yield Case("all zeros", (torch.zeros(4, 6),))
    with_zeros = randint(gen, -1, 2, 7, 5).to(torch.float32)
    yield Case("many exact zeros", (with_zeros,))
    yield Case("N = 0", (rand(gen, 0, 3),))
    for dtype in (torch.float32, torch.float64):
        for layout in ("transposed", "sliced"):
            yield Case(f"{layout} {dtype} input (a view)", (rand(gen, 6, 8, dtype=dtype, layout=layout),))
    yield Case("transposed int64 input (a view)", (randint(gen, -9, 10, 5, 6, layout="transposed"),))
    yield Case("a block inside a larger tensor", (rand(gen, 9, 10)[2:7, 3:9],))


DOUBLE_POSITIVE_ = Exercise(
    task="""\
Double every positive entry of the matrix `a` (shape `[N, M]`, float or int)
**in place**, leave the other entries (negative or zero) as they are, and
return `a` itself, the same tensor object. `a` may be a non-contiguous view of
a larger tensor; your writes must land in that view. `N` may be 0.""",
    hints=("`a > 0` is a boolean mask of the same shape as `a`.",
           "Assignment through a mask writes into `a`; reading through a mask makes a copy."),
    reference=double_positive_,
    alternatives=(V.double_positive__where, V.double_positive__mul),
    half_loops=(V.double_positive__half_loop, V.double_positive__half_loop_cols),
    loop=double_positive__loop,
    hidden=double_positive__hidden,
    sized=lambda gen, n: (rand(gen, n, n),),
    examples=(
        Example("a = torch.tensor([[1, -3, 2], [2, 9, -1], [-8, 4, 1]])", "double_positive_(a)"),
        Example("a = torch.tensor([[0.5, 0.0], [-2.0, 3.0]])", "double_positive_(a)"),
    ),
    loop_hint="select the positive entries with a boolean mask and update them all at once",
    bench_size=75,
    speedup=15,
    in_place=True,
)


# ---------------------------------------------------------------------- rows_with_small_sum

def rows_with_small_sum_loop(a, threshold):
    N, M = a.shape
    kept = []
    for i in range(N):
        total = 0
        for j in range(M):
            total = total + a[i, j]
        if total < threshold:
            kept.append(i)
    out = torch.empty(len(kept), M, dtype=a.dtype)
    for r in range(len(kept)):
        for j in range(M):
            out[r, j] = a[kept[r], j]
    return out


def rows_with_small_sum(a, threshold):
    return a[a.sum(1) < threshold]


def rows_with_small_sum_hidden(gen):
    for N, M in [(1, 1), (2, 3), (8, 5), (15, 4), (30, 12)]:
        for dtype in (torch.float32, torch.float64):
            a = rand(gen, N, M, dtype=dtype)
            yield Case(f"random {dtype} [{N}, {M}], float threshold", (a, CASES._clear_threshold(gen, a)))
    a = rand(gen, 12, 6, scale=3.0)
    yield Case("float a, int threshold", (a, CASES._clear_threshold(gen, a, integer=True)))
    a = randint(gen, -5, 6, 10, 4)
    yield Case("int64 a, int threshold", (a, CASES._clear_threshold(gen, a, integer=True)))
    yield Case("int64 a, float threshold", (a.clone(), CASES._clear_threshold(gen, a) + 0.25))
    a = randint(gen, -5, 6, 9, 3)
    ties = int(a.sum(1)[int(torch.randint(9, (1,), generator=gen))])
    yield Case("int64 a, a row sum equal to the threshold (not kept)", (a, ties))
    yield Case("float a, a row sum equal to the threshold (not kept)", (a.to(torch.float32), float(ties)))
    a = rand(gen, 7, 5)
    yield Case("no row kept", (a, CASES._clear_threshold(gen, a, where="below")))
    yield Case("every row kept", (a.clone(), CASES._clear_threshold(gen, a, where="above")))
    a = randint(gen, -5, 6, 6, 3)
    yield Case("int64 a, no row kept", (a, CASES._clear_threshold(gen, a, integer=True, where="below")))
    yield Case("N = 0", (rand(gen, 0, 4), 0.0))
    yield Case("M = 0", (rand(gen, 3, 0), 1))
    for layout in ("transposed", "sliced"):
        a = rand(gen, 10, 7, dtype=torch.float64, layout=layout)
        yield Case(f"{layout} input", (a, CASES._clear_threshold(gen, a)))
        a = randint(gen, -5, 6, 8, 6, layout=layout)
        yield Case(f"{layout} int64 input", (a, CASES._clear_threshold(gen, a, integer=True)))


ROWS_WITH_SMALL_SUM = Exercise(
    task="""\
Given a matrix `a` of shape `[N, M]` (float or int) and a number `threshold`
(a Python int or float), return the rows of `a` whose sum is strictly less than
`threshold`, in their original order: shape `[R, M]` where `R` is the number of
such rows, with the dtype of `a`. `R` may be 0 (return shape `[0, M]`) or `N`. `N` or `M` may be 0 (a row of length 0 sums to 0).""",
    hints=("One reduction gives all `N` row sums; one comparison turns them into a mask of shape `[N]`.",
           "A 1-D boolean mask on the first axis selects whole rows."),
    reference=rows_with_small_sum,
    alternatives=(V.rows_with_small_sum_nonzero, V.rows_with_small_sum_where),
    half_loops=(V.rows_with_small_sum_half_loop, V.rows_with_small_sum_half_loop_cols),
    loop=rows_with_small_sum_loop,
    hidden=rows_with_small_sum_hidden,
    sized=lambda gen, n: (rand(gen, n, n), 0.0),
    examples=(
        Example("a = torch.tensor([[1, -3, 2], [2, 9, -1], [-8, 4, 1]])", "rows_with_small_sum(a, 3)"),
        Example("a = torch.tensor([[0.5, 0.5], [2.0, -1.5], [3.0, 0.0]])", "rows_with_small_sum(a, 1.0)",
                note="the first row's sum equals the threshold: it is not kept"),
        Example("a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])", "rows_with_small_sum(a, -10)"),
    ),
    loop_hint="compute all row sums at once and select the rows with a boolean mask",
    bench_size=64,
    speedup=15,
)


# -------------------------------------------------------------------------- conv2d_indexing

def conv2d_indexing_loop(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    Cout, K = filters.shape[1], filters.shape[2]
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    out = torch.zeros(Cout, Hout, Wout, dtype=img.dtype)
    for o in range(Cout):
        for y in range(Hout):
            for x in range(Wout):
                total = torch.zeros((), dtype=img.dtype)
                for c in range(Cin):
                    for i in range(K):
                        for j in range(K):
                            # position in the unpadded image; outside it, the padding is zero
                            r = y * stride + i - padding
                            s = x * stride + j - padding
                            if 0 <= r < H and 0 <= s < W:
                                total = total + img[c, r, s] * filters[c, o, i, j]
                out[o, y, x] = total
    return out


def conv2d_indexing(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    Cout, K = filters.shape[1], filters.shape[2]
    # zero padding: write the image into the middle of a zero canvas (a slice is a view)
    padded = img.new_zeros(Cin, H + 2 * padding, W + 2 * padding)
    padded[:, padding:padding + H, padding:padding + W] = img
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    # rows[y, x, i, j] = y * stride + i and cols[y, x, i, j] = x * stride + j, by broadcasting
    rows = (torch.arange(Hout) * stride).view(Hout, 1, 1, 1) + torch.arange(K).view(1, 1, K, 1)
    cols = (torch.arange(Wout) * stride).view(1, Wout, 1, 1) + torch.arange(K).view(1, 1, 1, K)
    patches = padded[:, rows, cols]                                   # [Cin, Hout, Wout, K, K]
    patches = patches.permute(1, 2, 0, 3, 4).reshape(Hout * Wout, Cin * K * K)
    weights = filters.permute(0, 2, 3, 1).reshape(Cin * K * K, Cout)  # same (c, i, j) order
    return (patches @ weights).T.reshape(Cout, Hout, Wout)


def conv2d_indexing_hidden(gen):
    # (Cin, Cout, H, W, K, stride, padding)
    shapes = [
        (1, 1, 5, 5, 3, 1, 0),
        (2, 3, 7, 6, 3, 1, 1),
        (3, 2, 6, 8, 2, 1, 0),     # even K
        (2, 2, 8, 7, 4, 2, 1),     # even K, stride 2, padding
        (1, 4, 9, 9, 5, 2, 2),
        (3, 1, 10, 7, 3, 3, 0),    # stride 3, sizes not divisible by the stride
        (2, 3, 6, 6, 1, 1, 0),     # K = 1
        (2, 2, 5, 6, 2, 3, 1),     # stride larger than K
        (1, 2, 4, 4, 1, 2, 2),     # padding larger than K
    ]
    for Cin, Cout, H, W, K, stride, padding in shapes:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"{dtype} Cin={Cin}, Cout={Cout}, [{H}, {W}] image, K={K}, stride={stride}, padding={padding}",
                       (rand(gen, Cin, H, W, dtype=dtype), rand(gen, Cin, Cout, K, K, dtype=dtype)),
                       {"stride": stride, "padding": padding})
    yield Case("defaults (stride 1, no padding)", (rand(gen, 2, 6, 5), rand(gen, 2, 3, 3, 3)))
    yield Case("stride and padding passed by position", (rand(gen, 2, 7, 7), rand(gen, 2, 2, 3, 3), 2, 1))
    yield Case("K equal to the image size (1x1 output)", (rand(gen, 2, 5, 5), rand(gen, 2, 3, 5, 5)))
    yield Case("K equal to the padded image size (1x1 output)",
               (rand(gen, 3, 4, 4, dtype=torch.float64), rand(gen, 3, 2, 6, 6, dtype=torch.float64)), {"padding": 1})
    yield Case("even K equal to the padded image size, stride 2",
               (rand(gen, 1, 2, 2), rand(gen, 1, 1, 4, 4)), {"stride": 2, "padding": 1})
    yield Case("large values", (rand(gen, 2, 6, 6, scale=100.0), rand(gen, 2, 2, 3, 3)), {"padding": 1})
    for layout in ("transposed", "sliced"):
        yield Case(f"{layout} img", (rand(gen, 2, 7, 6, layout=layout), rand(gen, 2, 3, 3, 3)),
                   {"stride": 2, "padding": 1})
        yield Case(f"{layout} filters", (rand(gen, 3, 6, 6, dtype=torch.float64),
                                         rand(gen, 3, 2, 4, 4, dtype=torch.float64, layout=layout)), {"padding": 2})
    yield Case("filters as a transposed view of [Cout, Cin, K, K]",
               (rand(gen, 3, 6, 5), rand(gen, 2, 3, 3, 3).transpose(0, 1)), {"padding": 1})


def _conv_inputs(gen, n):
    """One timed call: ``img [2, 4, 4]`` and ``filters [2, 2, 2, 2]`` with one of five axes, drawn for every
    call, longer: the image's rows or columns (``4 n``), the input or output channels (``4 n``), or the kernel
    (``K = 2 n`` on a ``K x K`` image, one output pixel, one channel in and out: the taps' work grows as
    ``K * K``, a loop over a row of taps only as ``K``; at ``K = 4 n`` that call alone took most of the time). A loop over any of them then runs about ``n`` times more
    often in a fifth of the calls."""
    Cin, Cout, K, H, W = 2, 2, 2, 4, 4
    axis = int(torch.randint(5, (1,), generator=gen))
    if axis == 0:
        H *= n
    elif axis == 1:
        W *= n
    elif axis == 2:
        Cin *= 2 * n
    elif axis == 3:
        Cout *= 2 * n
    else:
        Cin, Cout, K = 1, 1, 2 * n
        H = W = K
    return rand(gen, Cin, H, W), rand(gen, Cin, Cout, K, K)


CONV2D_INDEXING = Exercise(
    task="""\
Convolve the image `img` (float, shape `[Cin, H, W]`) with `filters` (shape
`[Cin, Cout, K, K]`, input channels first, as in the chapter), with the given
`stride` and `padding` (Python ints, `stride >= 1`, `padding >= 0`, zero padding
on all four sides), and return `[Cout, Hout, Wout]` with
`Hout = (H + 2 * padding - K) // stride + 1` (likewise `Wout`):

`out[o, y, x] = sum_{c, i, j} padded[c, y * stride + i, x * stride + j] * filters[c, o, i, j]`.

This is what deep-learning libraries call a convolution (it is a
cross-correlation: the kernel is not flipped), i.e.
`F.conv2d(img[None], filters.transpose(0, 1), stride=stride, padding=padding)[0]`.
`K` may be odd or even, and may be as large as the padded image. Build the
windows with integer-array indexing: `conv1d`, `conv2d`, `conv3d`,
`conv_transpose*`, `unfold` and `fold` (and their `nn` modules) are not allowed.""",
    hints=("Pad first: a zero tensor of shape `[Cin, H + 2p, W + 2p]` with the image written into its middle.",
           "Index tensors `rows` and `cols` that broadcast to `[Hout, Wout, K, K]` make `padded[:, rows, cols]` "
           "the `[Cin, Hout, Wout, K, K]` tensor of all windows; then one matrix product with the filters."),
    reference=conv2d_indexing,
    alternatives=(V.conv2d_indexing_as_strided, V.conv2d_indexing_gather),
    half_loops=(V.conv2d_indexing_half_loop, V.conv2d_indexing_half_loop_x, V.conv2d_indexing_half_loop_c,
                V.conv2d_indexing_half_loop_o, V.conv2d_indexing_half_loop_taps),
    python_list=V.conv2d_indexing_lists,
    loop=conv2d_indexing_loop,
    hidden=conv2d_indexing_hidden,
    # one long axis per call (issue 38): output rows, output columns, input channels, output channels or the
    # kernel (its taps); before, only the image grew, and a loop over the channels or the taps ran twice
    sized=_conv_inputs,
    examples=(
        Example("img = torch.arange(36.).view(1, 6, 6)\nfilters = torch.full((1, 1, 3, 3), 1 / 9)",
                "conv2d_indexing(img, filters)", note="a 3x3 mean filter"),
        Example("img = torch.arange(36.).view(1, 6, 6)\nfilters = torch.full((1, 1, 3, 3), 1 / 9)",
                "conv2d_indexing(img, filters, stride=2, padding=1)"),
        Example("img = torch.tensor([[[1., 2.], [3., 4.]], [[0., 1.], [1., 0.]]])\n"
                "filters = torch.tensor([[[[1., 0.], [0., -1.]]], [[[2., 2.], [2., 2.]]]])",
                "conv2d_indexing(img, filters, padding=1)", note="Cin = 2, Cout = 1, even K"),
    ),
    # sums of Cin*K*K products in a different order than the loop or F.conv2d: rounding bounded by the products' sum
    terms=lambda img, filters, *_: float(img.abs().max() * filters.abs().sum((0, 2, 3)).max()),
    rtol=1e-4,
    forbidden=("conv1d", "conv2d", "conv3d", "conv_transpose*", "unfold", "Unfold", "fold", "Fold"),
    forbidden_ops=("convolution*", "_convolution*", "mkldnn_convolution*", "im2col", "col2im", "slow_conv*",
                   "thnn_conv*", "unfold*"),
    loop_hint="gather all windows at once with integer-array indexing, then use one matrix product",
    bench_size=32,
    # the gather alternative (a padded copy, an index gather and a tensordot) reads 1.0-1.7x; the half loops 5x or
    # more (stop 35, the inputs no longer copied inside the window)
    ref_factor=4,
    speedup=15,
)


# ---------------------------------------------------------------------------------- one_hot

def one_hot_loop(labels, num_classes):
    N = labels.shape[0]
    out = torch.zeros(N, num_classes, dtype=torch.int64)
    for n in range(N):
        out[n, labels[n]] = 1
    return out


def one_hot(labels, num_classes):
    out = torch.zeros(labels.shape[0], num_classes, dtype=torch.int64)
    out[torch.arange(labels.shape[0]), labels] = 1
    return out


def one_hot_hidden(gen):
    for N, C in [(1, 1), (1, 5), (5, 3), (20, 7), (64, 10)]:
        yield Case(f"N = {N}, C = {C}", (randint(gen, 0, C, N), C))
    yield Case("N = 0", (randint(gen, 0, 4, 0), 4))
    yield Case("C = 1", (torch.zeros(6, dtype=torch.int64), 1))
    yield Case("every class, in order", (torch.arange(8), 8))
    yield Case("one class never used", (randint(gen, 0, 5, 12), 6))
    yield Case("the same label everywhere", (torch.full((9,), 2), 3))
    yield Case("sliced labels", (randint(gen, 0, 6, 15, layout="sliced"), 6))
    yield Case("labels taken from a column", (randint(gen, 0, 5, 4, 7)[:, 3], 5))


def _one_hot_inputs(gen, n):
    """One timed call: ``n * n`` labels of 8 classes, or 8 labels of ``5 * n`` classes (drawn for every call).
    The classes are shorter when long than the labels: the reference's zero fill costs far less per element than
    an honest comparison with every class (`labels[:, None] == torch.arange(C)`, 9x the reference on 8 labels of
    10,000 classes), while a loop over 500 classes is already far slower than either."""
    N, C = pick(gen, [(n * n, 8), (8, 5 * n)])
    return randint(gen, 0, C, N), C


ONE_HOT = Exercise(
    task="""\
Given `N` class labels `labels` (int64, shape `[N]`, each in `[0, C)` with
`C = num_classes`, a Python int), return their one-hot encoding, an int64
tensor of shape `[N, C]` with `out[n, labels[n]] = 1` and 0 everywhere else.
`one_hot` from torch (`torch.nn.functional.one_hot`) is not allowed. `N` may be 0.""",
    hints=("Start from a zero `[N, C]` tensor: which `N` positions must become 1?",
           "Two index tensors of shape `[N]`, one per axis, name those positions; assigning through them is in place."),
    reference=one_hot,
    alternatives=(V.one_hot_compare, V.one_hot_scatter),
    half_loops=(V.one_hot_half_loop, V.one_hot_half_loop_c),
    loop=one_hot_loop,
    hidden=one_hot_hidden,
    # one long axis per call (issue 38): the labels or the classes, the [N, C] output of the same size (it travels
    # back from the grading process, and its copy is timed too); with C fixed at 8 a loop over the classes ran
    # eight times
    sized=_one_hot_inputs,
    examples=(
        Example("labels = torch.tensor([0, 2, 1, 2])", "one_hot(labels, 3)"),
        Example("labels = torch.tensor([1])", "one_hot(labels, 4)"),
    ),
    forbidden=("one_hot",),
    forbidden_ops=("one_hot",),
    loop_hint="write all N ones at once with integer-array indexing",
    bench_size=100,
    # the loop version runs over the labels only and is timed on one call: on 8 labels of 500 classes it reads
    # 7.8-14x the reference (against 600x or more on 10,000 labels), so the speedup bar is under a third of that
    speedup=2,
)


ASSIGNMENT = Assignment(
    name="indexing",
    title="Indexing",
    lesson=LESSON,
    exercises=(SELECT_PAIRS, DOUBLE_POSITIVE_, ROWS_WITH_SMALL_SUM, CONV2D_INDEXING, ONE_HOT),
    order=3,
)
