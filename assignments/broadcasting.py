"""Assignment 1: vectorization and the broadcasting rules.

Each exercise below is complete: task text, loop version, reference,
visible examples, hidden cases, tolerances, speed thresholds and points.
``vecgrade build`` turns this file into ``source/broadcasting/broadcasting.ipynb``.
"""
import torch

from graders.model.exercise import Assignment, Case, Example, Exercise, load_lesson, load_variants
from graders.model.inputs import layout_cases, one_long_axis, rand, randint, random_cases

V = load_variants(__file__)

LESSON = load_lesson(__file__)


# ---------------------------------------------------------------------------- batch_outer

def batch_outer_loop(a):
    B, F = a.shape
    out = torch.empty(B, F, F, dtype=a.dtype)
    for b in range(B):
        for i in range(F):
            for j in range(F):
                out[b, i, j] = a[b, i] * a[b, j]
    return out


def batch_outer(a):
    return a[:, :, None] * a[:, None, :]


def batch_outer_hidden(gen):
    yield from random_cases(gen, [(1, 1), (1, 5), (6, 1), (7, 3), (16, 9)])
    yield Case("B = 0", (rand(gen, 0, 4),))
    yield Case("int64 input", (randint(gen, -9, 10, 5, 4),))
    yield from layout_cases(gen, 8, 6)


BATCH_OUTER = Exercise(
    task="""\
Given a batch of vectors `a` of shape `[B, F]`, return the batch of their outer
products, shape `[B, F, F]`: `out[b, i, j] = a[b, i] * a[b, j]`. `B` may be 0. `a` may be float32, float64 or int64, and non-contiguous.""",
    hints=("Which axes does `a[b, i]` depend on, and which does `a[b, j]`?",
           "Insert a size-1 axis with `None` so the two operands broadcast to `[B, F, F]`."),
    reference=batch_outer,
    alternatives=(V.batch_outer_einsum, V.batch_outer_unsqueeze),
    half_loops=(V.batch_outer_half_loop_b, V.batch_outer_half_loop_f),
    loop=batch_outer_loop,
    hidden=batch_outer_hidden,
    sized=lambda gen, n: (rand(gen, n, n),),
    examples=(
        Example("a = torch.tensor([[1., 2.], [3., -1.]])", "batch_outer(a)"),
        Example("a = torch.arange(6.).view(2, 3)", "batch_outer(a)"),
    ),
    loop_hint="build the [B, F, F] result with broadcasting instead",
    bench_size=24,
    speedup=20,
)


# ---------------------------------------------------------------------- pairwise_sq_dists

def pairwise_sq_dists_loop(x, y):
    N, D = x.shape
    M = y.shape[0]
    out = torch.zeros(N, M, dtype=x.dtype)
    for i in range(N):
        for j in range(M):
            for d in range(D):
                out[i, j] += (x[i, d] - y[j, d]) ** 2
    return out


def pairwise_sq_dists(x, y):
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)


def pairwise_sq_dists_hidden(gen):
    for N, M, D in [(1, 1, 1), (4, 3, 2), (3, 4, 2), (10, 7, 5), (1, 9, 3), (20, 20, 8)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} N={N}, M={M}, D={D}", (rand(gen, N, D, dtype=dtype), rand(gen, M, D, dtype=dtype)))
    x = rand(gen, 5, 3)
    yield Case("identical points", (x, x.clone()))
    yield Case("large values", (rand(gen, 6, 4, scale=30.0), rand(gen, 5, 4, scale=30.0)))
    yield Case("transposed inputs", (rand(gen, 6, 3, layout="transposed"), rand(gen, 4, 3, layout="transposed")))
    yield Case("sliced inputs", (rand(gen, 5, 4, layout="sliced"), rand(gen, 7, 4, layout="sliced")))
    yield Case("M = 0", (rand(gen, 3, 2), rand(gen, 0, 2)))


def _pairwise_inputs(gen, N, M, D):
    return rand(gen, N, D), rand(gen, M, D)


PAIRWISE_SQ_DISTS = Exercise(
    task="""\
Given `N` points `x` of shape `[N, D]` and `M` points `y` of shape `[M, D]`,
return the `[N, M]` matrix of squared Euclidean distances:
`out[i, j] = sum_d (x[i, d] - y[j, d]) ** 2`. `M` may be 0 (return `[N, 0]`). The inputs are float32 or float64 and may be non-contiguous.""",
    hints=("Lay `x` out as `[N, 1, D]` and `y` as `[1, M, D]`; their difference is `[N, M, D]`.",
           "Reduce over the last axis. (For large inputs, `|x|^2 + |y|^2 - 2 x @ y.T` saves memory.)"),
    reference=pairwise_sq_dists,
    alternatives=(V.pairwise_sq_dists_expanded, V.pairwise_sq_dists_cdist),
    half_loops=(V.pairwise_sq_dists_half_loop_n, V.pairwise_sq_dists_half_loop_m, V.pairwise_sq_dists_half_loop_d),
    loop=pairwise_sq_dists_loop,
    hidden=pairwise_sq_dists_hidden,
    # one long axis per call (issue 38): N, M or the coordinates D; with D fixed at 4 a loop over the
    # coordinates ran four times
    sized=lambda gen, n: _pairwise_inputs(gen, *one_long_axis(gen, n, (8, 8, 8))),
    examples=(
        Example("x = torch.tensor([[0., 0.], [1., 1.]])\ny = torch.tensor([[1., 0.], [3., 4.], [0., 0.]])",
                "pairwise_sq_dists(x, y)"),
    ),
    # |x|^2 + |y|^2 - 2 x.y loses digits to cancellation: its rounding grows with |x_i|^2 + |y_j|^2 (the terms),
    # while an absolute tolerance admitted visibly wrong answers (atol 2e-2 passed the result + 0.015)
    terms=lambda x, y: (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :],
    rtol=1e-4,
    loop_hint="build the [N, M] result with broadcasting instead",
    bench_size=40,
    speedup=15,
)


# --------------------------------------------------------------------- standardize_columns

def standardize_columns_loop(x, eps=1e-5):
    N, D = x.shape
    out = torch.empty(N, D, dtype=x.dtype)
    for j in range(D):
        total = 0.0
        for i in range(N):
            total += x[i, j]
        mean = total / N
        sq = 0.0
        for i in range(N):
            sq += (x[i, j] - mean) ** 2
        std = (sq / N) ** 0.5
        for i in range(N):
            out[i, j] = (x[i, j] - mean) / (std + eps)
    return out


def standardize_columns(x, eps=1e-5):
    mean = x.mean(0, keepdim=True)
    std = x.std(0, unbiased=False, keepdim=True)
    return (x - mean) / (std + eps)


def standardize_columns_hidden(gen):
    yield from random_cases(gen, [(2, 1), (5, 3), (12, 7), (40, 16)], scale=3.0)
    yield Case("one row (std is 0)", (rand(gen, 1, 4),))
    constant = rand(gen, 6, 3)
    constant[:, 1] = 2.5
    yield Case("a constant column", (constant,))
    yield Case("eps=0.1", (rand(gen, 8, 5),), {"eps": 0.1})
    yield Case("eps=0", (rand(gen, 8, 5),), {"eps": 0.0})
    yield Case("shifted columns", (rand(gen, 10, 4) + 5.0,))
    yield from layout_cases(gen, 9, 5)


STANDARDIZE_COLUMNS = Exercise(
    task="""\
Standardize each column of `x` (shape `[N, D]`): subtract the column's mean and
divide by the column's population standard deviation plus `eps`,
`(x - mean) / (std + eps)`. The population std divides by `N`, not `N - 1`
(`unbiased=False`). `x` is float32 or float64 with `N >= 1`, and may be non-contiguous.""",
    hints=("Reduce over axis 0 with `keepdim=True` so the statistics are `[1, D]`.",
           "`[N, D]` and `[1, D]` broadcast against each other."),
    reference=standardize_columns,
    alternatives=(V.standardize_columns_var, V.standardize_columns_std_mean),
    half_loops=(V.standardize_columns_half_loop_n, V.standardize_columns_half_loop_d),
    loop=standardize_columns_loop,
    hidden=standardize_columns_hidden,
    sized=lambda gen, n: (rand(gen, n, n),),
    examples=(
        Example("x = torch.tensor([[1., 10.], [3., 10.], [5., 40.]])", "standardize_columns(x)"),
        Example("x = torch.tensor([[2., 0.], [4., 1.]])", "standardize_columns(x, eps=0.5)"),
    ),
    rtol=1e-4,
    loop_hint="compute the column statistics with reductions over axis 0 instead",
    bench_size=48,
    speedup=10,
)


# ---------------------------------------------------------------------------- softmax_rows

def softmax_rows_loop(x):
    N, D = x.shape
    out = torch.empty(N, D, dtype=x.dtype)
    for i in range(N):
        m = x[i, 0]
        for j in range(1, D):
            m = torch.maximum(m, x[i, j])
        total = 0.0
        for j in range(D):
            out[i, j] = torch.exp(x[i, j] - m)
            total += out[i, j]
        for j in range(D):
            out[i, j] = out[i, j] / total
    return out


def softmax_rows(x):
    e = (x - x.amax(1, keepdim=True)).exp()
    return e / e.sum(1, keepdim=True)


def softmax_rows_hidden(gen):
    yield from random_cases(gen, [(1, 1), (3, 2), (6, 10), (17, 33)], scale=4.0)
    yield Case("entries near +1e4", (rand(gen, 5, 6) + 1e4,))
    yield Case("entries near -1e4", (rand(gen, 5, 6) - 1e4,))
    yield Case("entries spread over [-1e4, 1e4]", (rand(gen, 7, 5, scale=2e4, low=-1e4),))
    yield Case("N = 0", (rand(gen, 0, 4),))
    yield from layout_cases(gen, 6, 8)


SOFTMAX_ROWS = Exercise(
    task="""\
Return the softmax of each row of `x` (shape `[N, D]`):
`out[i, j] = exp(x[i, j]) / sum_k exp(x[i, k])`. The result must stay finite for
entries as large as `1e4` or as small as `-1e4`. `softmax` and `log_softmax`
are not allowed (in any namespace), nor attention (`scaled_dot_product_attention`),
which computes a softmax inside. `N` may be 0. `x` is float32 or float64.""",
    hints=("`exp(1e4)` overflows. Subtracting the row's maximum from the row changes nothing in the result.",
           "`x.amax(1, keepdim=True)` has shape `[N, 1]`."),
    reference=softmax_rows,
    alternatives=(V.softmax_rows_logsumexp, V.softmax_rows_divide_max),
    half_loops=(V.softmax_rows_half_loop_n, V.softmax_rows_half_loop_d),
    loop=softmax_rows_loop,
    hidden=softmax_rows_hidden,
    sized=lambda gen, n: (rand(gen, n, n, scale=3.0),),
    examples=(
        Example("x = torch.tensor([[0., 0.], [1., 3.], [10000., 9999.]])", "softmax_rows(x)"),
    ),
    rtol=1e-4,
    # attention computes a softmax inside, and its fused CPU kernel shows no softmax op (a red-team answer earned
    # "vectorized" and "fast" with scaled_dot_product_attention on [1, N, 1, D] queries)
    forbidden=("softmax", "log_softmax", "Softmax", "LogSoftmax", "softmin", "Softmin",
               "scaled_dot_product_attention", "multi_head_attention_forward", "MultiheadAttention"),
    forbidden_ops=("_softmax", "_log_softmax", "softmax", "log_softmax", "*scaled_dot_product*", "*attention*"),
    loop_hint="work on whole rows with reductions along axis 1 instead",
    bench_size=24,
    speedup=10,
)


ASSIGNMENT = Assignment(
    name="broadcasting",
    title="Broadcasting",
    lesson=LESSON,
    exercises=(BATCH_OUTER, PAIRWISE_SQ_DISTS, STANDARDIZE_COLUMNS, SOFTMAX_ROWS),
    order=1,
)
