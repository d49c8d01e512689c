"""Input generators of the strides assignment's hidden cases (moved out to keep the file short)."""
import torch

from graders.model.inputs import ints, pick, rand, randint


def _as_sequence(gen, values):
    """The same ints as a list or as a tuple (the exercises accept both)."""
    return list(values) if pick(gen, (True, False)) else tuple(values)


def _offsets_case(gen, K, sizes, strides):
    """Random in-range indices into a tensor of ``sizes``, plus its stride and storage offset."""
    cols = [randint(gen, 0, s, K, 1) for s in sizes]
    return torch.cat(cols, 1), _as_sequence(gen, strides), ints(gen, 0, 100, 1)[0]


def _mostly_ones(gen, n, big=24):
    """``n`` sizes, all 1 except at most ``big`` of them in [2, 5), so the product stays small."""
    shape = torch.ones(n, dtype=torch.int64)
    where = torch.randperm(n, generator=gen)[:big]
    shape[where] = torch.randint(2, 5, (where.shape[0],), generator=gen)
    return shape


def _permute_case(gen, shape, perm, dtype, layout="contiguous"):
    numel = 1
    for s in shape:
        numel *= s
    if dtype.is_floating_point:
        buffer = rand(gen, numel, dtype=dtype, layout=layout)
    else:
        buffer = randint(gen, -1000, 1000, numel, layout=layout).to(dtype)
    return buffer, _as_sequence(gen, shape), _as_sequence(gen, perm)
