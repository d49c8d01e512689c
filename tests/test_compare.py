"""Output comparison: each kind of difference is caught and described; equal outputs pass."""
import torch

from graders.checks.compare import describe_args, mismatch


def test_equal_outputs_pass():
    x = torch.randn(3, 4)
    assert mismatch(x.clone(), x, 1e-6, 1e-6) is None
    assert mismatch(torch.arange(5), torch.arange(5), 0, 0) is None
    assert mismatch(torch.empty(0, 3), torch.empty(0, 3), 0, 0) is None


def test_shape_dtype_and_type_are_exact():
    x = torch.zeros(4, 3)
    assert mismatch(torch.zeros(3, 4), x, 1, 1) == "output shape (3, 4), expected (4, 3)"
    assert mismatch(x.double(), x, 1, 1) == "output dtype torch.float64, expected torch.float32"
    assert mismatch([1, 2], x, 1, 1) == "returned list, expected a tensor"


def test_values_report_the_largest_error_and_where():
    expected = torch.zeros(3, 2)
    out = expected.clone()
    out[2, 1] = 0.25
    assert mismatch(out, expected, 1e-5, 1e-6).startswith("max abs error 0.25 at [2, 1]")


def test_tolerance_is_respected_both_ways():
    expected = torch.ones(3)
    assert mismatch(expected + 1e-7, expected, 1e-5, 0) is None
    assert mismatch(expected + 1e-3, expected, 1e-5, 0) is not None


def test_integers_must_be_equal():
    assert mismatch(torch.tensor([1, 2, 4]), torch.tensor([1, 2, 3]), 1, 1).startswith("1 of 3 entries differ")


def test_nan_and_inf_are_not_hidden_by_tolerance():
    expected = torch.tensor([0.5, 0.5])
    assert "NaN" in mismatch(torch.tensor([float("nan"), 0.5]), expected, 1, 1)
    assert "infinite" in mismatch(torch.tensor([float("inf"), 0.5]), expected, 1, 1)


def test_describe_args_gives_shapes_not_values():
    text = describe_args((torch.full((4, 2), 123.0), torch.zeros(3, 2)))
    assert text == "inputs of shapes (4, 2) and (3, 2)"
    assert "123" not in text


def _softmax_reference(x):
    e = (x - x.amax(1, keepdim=True)).exp()
    return e / e.sum(1, keepdim=True)


def test_rounding_allowance_admits_the_logsumexp_softmax_near_1e4():
    gen = torch.Generator().manual_seed(3)
    x = 1e4 + torch.randn(6, 5, generator=gen) * 3
    expected = _softmax_reference(x)
    stable = torch.exp(x - torch.logsumexp(x, 1, keepdim=True))
    assert mismatch(stable, expected, 1e-4, 1e-6) is not None      # a fixed rtol rejects it ...
    magnitude = float(x.abs().max())
    assert mismatch(stable, expected, 1e-4, 1e-6, magnitude) is None   # ... eps x |x| admits it


def test_rounding_allowance_still_rejects_wrong_formulas():
    gen = torch.Generator().manual_seed(4)
    x = 1e4 + torch.randn(6, 5, generator=gen) * 3
    expected = _softmax_reference(x)
    magnitude = float(x.abs().max())
    e = (x - x.amax(1, keepdim=True)).exp()
    assert mismatch(e / e.sum(0, keepdim=True), expected, 1e-4, 1e-6, magnitude)   # normalized over columns
    assert "NaN" in mismatch(x.exp() / x.exp().sum(1, keepdim=True), expected, 1e-4, 1e-6, magnitude)  # overflow
    squared = expected ** 2 / (expected ** 2).sum(1, keepdim=True)  # a different function
    problem = mismatch(squared, expected, 1e-4, 1e-6, magnitude)
    assert problem is not None and "for the inputs' magnitude" in problem


def test_rounding_allowance_scales_per_entry_and_with_dtype():
    expected = torch.tensor([1.0, 1e6])
    out = expected + torch.tensor([0.0, 2.0])   # 2.0 is within 16 eps32 x 1e6 (1.9) + ... only with a per-entry scale
    assert mismatch(out, expected, 0, 0, torch.tensor([1.0, 2e6])) is None
    assert mismatch(out, expected, 0, 0, torch.tensor([1.0, 1.0])) is not None
    assert mismatch(out.double(), expected.double(), 0, 0, torch.tensor([1.0, 2e6])) is not None   # eps64 is tiny


def test_integers_stay_exact_whatever_the_magnitude():
    assert mismatch(torch.tensor([1, 2, 4]), torch.tensor([1, 2, 3]), 0, 0, 1e9) is not None
    assert mismatch(torch.tensor([True, False]), torch.tensor([True, True]), 0, 0, 1e9) is not None
