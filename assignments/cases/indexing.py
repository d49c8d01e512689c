"""Input generators of the indexing assignment's hidden cases (moved out to keep the file short)."""
from graders.model.inputs import pick, randint


def _index_pairs(gen, N, M, K, layout="contiguous"):
    """An int64 [K, 2] tensor of (row, column) pairs inside an [N, M] matrix, stored as ``layout`` says."""
    idx = randint(gen, 0, 1 << 30, K, 2, layout=layout)
    idx[:, 0] %= N  # in-place updates keep the layout
    idx[:, 1] %= M
    return idx


def _clear_threshold(gen, a, integer=False, where="between"):
    """A threshold for ``a``: an int when ``integer``, else a float.

    Float row sums depend on the order of summation in their last bits, so for
    float ``a`` the threshold keeps a safe distance from every row sum (a row
    near it could land on either side). Integer row sums are exact: there the
    threshold may equal a row sum. ``where``: "between" (rows on both sides
    when possible), "below" (no row kept), "above" (every row kept).
    """
    sums = sorted(a.double().sum(1).tolist())
    if where == "below" or not sums:
        t = (sums[0] if sums else 0.0) - 1.5
    elif where == "above":
        t = sums[-1] + 1.5
    elif not a.is_floating_point():
        t = float(pick(gen, range(int(sums[0]), int(sums[-1]) + 1)))
    else:
        mids = [(lo + hi) / 2 for lo, hi in zip(sums, sums[1:], strict=False) if hi - lo > 0.05]
        if integer:
            mids = [float(round(m)) for m in mids]
            mids = [m for m in mids if min(abs(m - s) for s in sums) > 0.01]
        t = pick(gen, mids) if mids else sums[-1] + 1.5
    return int(t // 1) if integer else t
