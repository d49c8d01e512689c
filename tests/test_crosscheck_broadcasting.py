"""The broadcasting references against built-ins, on 200+ random cases each (and the loops on fewer)."""

import pytest
import torch

from graders.model.inputs import LAYOUTS, rand

from crosscheck import Definitions

A = Definitions("broadcasting").assignment


def configs(n, seed):
    gen = torch.Generator().manual_seed(seed)
    for k in range(n):
        dtype = (torch.float32, torch.float64)[k % 2]
        layout = LAYOUTS[k % 3]
        shape = [int(v) for v in torch.randint(1, 12, (3,), generator=gen)]
        yield gen, dtype, layout, shape


def close(a, b, **tol):
    torch.testing.assert_close(a, b, **tol)


def test_batch_outer_against_einsum():
    ref = A.exercise("batch_outer").reference
    for gen, dtype, layout, (B, F, _) in configs(240, 1):
        a = rand(gen, B, F, dtype=dtype, layout=layout)
        close(ref(a), torch.einsum("bi,bj->bij", a, a))


def test_pairwise_sq_dists_against_cdist():
    ref = A.exercise("pairwise_sq_dists").reference
    for gen, dtype, layout, (N, M, D) in configs(240, 2):
        x, y = rand(gen, N, D, dtype=dtype, layout=layout), rand(gen, M, D, dtype=dtype, layout=layout)
        close(ref(x, y), torch.cdist(x.double(), y.double()).pow(2).to(dtype), rtol=1e-4, atol=1e-4)


def test_standardize_columns_against_std_unbiased_false():
    ref = A.exercise("standardize_columns").reference
    for gen, dtype, layout, (N, D, _) in configs(240, 3):
        x = rand(gen, N, D, dtype=dtype, layout=layout, scale=3.0)
        eps = (1e-5, 0.1, 0.0)[N % 3] if N > 1 else 1e-5
        mean = torch.mean(x.double(), dim=0)
        std = torch.std(x.double(), dim=0, correction=0)
        close(ref(x, eps=eps), ((x.double() - mean) / (std + eps)).to(dtype), rtol=1e-4, atol=1e-4)


def test_softmax_rows_against_torch_softmax():
    ref = A.exercise("softmax_rows").reference
    for k, (gen, dtype, layout, (N, D, _)) in enumerate(configs(240, 4)):
        scale = (1.0, 50.0, 2e4)[k % 3]
        x = rand(gen, N, D, dtype=dtype, layout=layout, scale=scale)
        close(ref(x), torch.softmax(x, dim=1), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", [ex.name for ex in A.exercises])
def test_loop_versions_agree_with_the_references(name):
    ex = A.exercise(name)
    gen = torch.Generator().manual_seed(5)
    for case in list(ex.hidden(gen))[:12]:
        close(ex.loop(*case.args, **case.kwargs), ex.reference(*case.args, **case.kwargs), rtol=1e-4, atol=1e-4)
