"""Novice loops: ``broadcasting``'s exercises answered as real first submissions are, element by element.

The loop versions handed to students (``Exercise.loop``) index tensors and keep their arithmetic in torch. A
novice's first answer does more Python per element: nested ``for i in range(...)`` over every element,
``.item()`` on each one, Python lists built with ``append`` and turned into a tensor at the end. Each answer is
correct on every hidden case (empty batches, int64, non-contiguous inputs, entries near 1e4), so it earns
"correct" and fails "vectorized" and "fast" (tests/test_novice_loops.py). The benchmarks grade them:
``benchmarks/teacher_throughput.py`` (a quarter of its class) and ``benchmarks/fast_calibration.py``.

``distinct(source, n)``: the same answer in student ``n``'s words (its locals renamed, a comment of its own), so that
every notebook of a class is a distinct program.
"""
from __future__ import annotations

import re

ASSIGNMENT = "broadcasting"

NOVICE = {
    "batch_outer": '''\
def batch_outer(a):
    result = []
    for b in range(a.shape[0]):
        matrix = []
        for i in range(a.shape[1]):
            row = []
            for j in range(a.shape[1]):
                row.append(a[b, i].item() * a[b, j].item())
            matrix.append(row)
        result.append(matrix)
    return torch.tensor(result, dtype=a.dtype).reshape(a.shape[0], a.shape[1], a.shape[1])
''',
    "pairwise_sq_dists": '''\
def pairwise_sq_dists(x, y):
    result = []
    for i in range(x.shape[0]):
        row = []
        for j in range(y.shape[0]):
            total = 0.0
            for d in range(x.shape[1]):
                diff = x[i, d].item() - y[j, d].item()
                total += diff * diff
            row.append(total)
        result.append(row)
    return torch.tensor(result, dtype=x.dtype).reshape(x.shape[0], y.shape[0])
''',
    "standardize_columns": '''\
def standardize_columns(x, eps=1e-5):
    result = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)
    for j in range(x.shape[1]):
        column = []
        for i in range(x.shape[0]):
            column.append(x[i, j].item())
        mean = sum(column) / len(column)
        total = 0.0
        for value in column:
            total += (value - mean) ** 2
        std = (total / len(column)) ** 0.5
        for i in range(x.shape[0]):
            result[i, j] = (column[i] - mean) / (std + eps)
    return result
''',
    "softmax_rows": '''\
def softmax_rows(x):
    result = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)
    for i in range(x.shape[0]):
        row = []
        for j in range(x.shape[1]):
            row.append(x[i, j].item())
        biggest = max(row)
        exps = []
        for value in row:
            exps.append(math.exp(value - biggest))
        total = sum(exps)
        for j in range(x.shape[1]):
            result[i, j] = exps[j] / total
    return result
''',
}

# every novice answer needs this above its function (softmax_rows's math.exp); harmless for the others
IMPORTS = "import math\n\n\n"

# a local's other names, the n-th student using the n-th (cyclically): every name here is a local of some answer
SYNONYMS = {
    "result": ("result", "out", "res", "answer", "output"),
    "row": ("row", "r", "line", "current", "vals"),
    "total": ("total", "s", "acc", "summe", "running"),
    "column": ("column", "col", "values", "colvals", "c"),
    "matrix": ("matrix", "m", "mat", "block", "grid"),
    "diff": ("diff", "delta", "dd", "difference", "gap"),
    "biggest": ("biggest", "mx", "top", "maximum", "largest"),
    "exps": ("exps", "e", "ex", "powers", "exp_values"),
    "value": ("value", "v", "val", "elem", "number"),
}


def answer(name: str) -> str:
    """The novice's answer cell for exercise ``name`` (its imports first)."""
    return IMPORTS + NOVICE[name]


def distinct(source: str, n: int) -> str:
    """``source`` as student ``n`` writes it: each local of ``SYNONYMS`` under the name student ``n`` picks
    (rotating through them at different rates, so that no two of the first 25 students agree on every name), and a
    comment line of its own, so that no two students hand in the same program text."""
    for k, (name, others) in enumerate(SYNONYMS.items()):
        chosen = others[(n + n // len(others) * (k + 1)) % len(others)]
        source = re.sub(rf"\b{name}\b", chosen, source)
    return f"# student {n}: my first try\n" + source
