"""The case-generator helpers: reproducible for a seed, labelled in the task's terms, truly non-contiguous."""
import torch

from graders.model.inputs import ints, lay_out, layout_cases, rand, random_cases


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_random_cases_cover_every_shape_and_dtype_reproducibly():
    cases = list(random_cases(_gen(), [(2, 3), (0, 4)]))
    assert [c.label for c in cases] == ["random torch.float32 [2, 3]", "random torch.float64 [2, 3]",
                                        "random torch.float32 [0, 4]", "random torch.float64 [0, 4]"]
    assert [c.args[0].dtype for c in cases] == [torch.float32, torch.float64] * 2
    again = list(random_cases(_gen(), [(2, 3), (0, 4)]))
    assert all(torch.equal(a.args[0], b.args[0]) for a, b in zip(cases, again, strict=True))
    other = list(random_cases(_gen(1), [(2, 3)]))
    assert not torch.equal(other[0].args[0], cases[0].args[0])


def test_random_cases_accept_a_maker_for_several_inputs():
    [case] = random_cases(_gen(), [(3, 2)], dtypes=(torch.float64,),
                          make=lambda gen, n, d, dtype: (rand(gen, n, d, dtype=dtype), rand(gen, d, n, dtype=dtype)))
    assert [tuple(a.shape) for a in case.args] == [(3, 2), (2, 3)]


def test_layout_cases_are_non_contiguous_views_of_random_values():
    cases = list(layout_cases(_gen(), 4, 5))
    assert [c.label for c in cases] == ["transposed input", "sliced input"]
    assert all(not c.args[0].is_contiguous() and c.args[0].shape == (4, 5) for c in cases)


def test_lay_out_keeps_values_and_ints_are_python_ints():
    t = torch.arange(12).view(3, 4)
    for layout in ("contiguous", "transposed", "sliced"):
        assert torch.equal(lay_out(t, layout), t)
    assert lay_out(t, "contiguous").is_contiguous() and not lay_out(t, "sliced").is_contiguous()
    values = ints(_gen(), 0, 5, 6)
    assert len(values) == 6 and all(type(v) is int and 0 <= v < 5 for v in values)
