"""Compare a student's output with the reference output, and say what differs.

Messages name shapes, dtypes, the largest error and where it is, never the
hidden input values: they go into the student's feedback.
"""
from __future__ import annotations

import re

import torch

from graders.sandbox.wire import Opaque


def describe_args(args: tuple) -> str:
    """'inputs of shapes (4, 2) and (3, 2)' -- shapes and dtypes only, no values."""
    parts = []
    for a in args:
        if isinstance(a, torch.Tensor):
            parts.append(f"({', '.join(map(str, a.shape))})" if a.dim() else "a scalar tensor")
        else:
            parts.append(type(a).__name__)
    if not parts:
        return "no inputs"
    joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"input{'s' if len(parts) > 1 else ''} of shape{'s' if len(parts) > 1 else ''} {joined}"


def _shape(t: torch.Tensor) -> str:
    return "(" + ", ".join(map(str, t.shape)) + ("," if t.dim() == 1 else "") + ")"


ULPS = 16  # float rounding steps allowed per unit of magnitude: O(1) for any sound formulation


def mismatch(out, expected: torch.Tensor, rtol: float, atol: float, magnitude=0.0) -> str | None:
    """None when ``out`` matches ``expected``; otherwise one sentence saying how it differs.

    A float entry may differ by ``atol + rtol * |expected| + ULPS * eps(dtype) * magnitude``.
    ``magnitude`` (a number, or a tensor that broadcasts to the output) is the size of the
    inputs or of the terms the result is computed from: every standard formulation rounds
    in proportion to it (``x - logsumexp(x)`` near 1e4 loses 1e4 * eps in float32, so does
    ``|x|^2 + |y|^2 - 2 x.y`` in proportion to ``|x|^2``), while a wrong formula misses by
    far more. Integers and booleans must be equal.
    """
    if not isinstance(out, torch.Tensor):
        # the type's name only: a returned string or repr could carry the hidden inputs into feedback
        kind = str(out) if isinstance(out, Opaque) else type(out).__name__
        return f"returned {re.sub(r'[^A-Za-z0-9_.]', '', kind)[:40] or 'an object'}, expected a tensor"
    if out.shape != expected.shape:
        return f"output shape {_shape(out)}, expected {_shape(expected)}"
    if out.dtype != expected.dtype:
        return f"output dtype {out.dtype}, expected {expected.dtype}"
    if out.numel() == 0:
        return None
    if not (expected.is_floating_point() or expected.is_complex()):
        wrong = out != expected
        if wrong.any():
            first = [int(i) for i in wrong.nonzero()[0]]
            return f"{int(wrong.sum())} of {out.numel()} entries differ, the first at {first}"
        return None
    exp_nan, out_nan = expected.isnan(), out.isnan()
    if (exp_nan != out_nan).any():
        where = [int(i) for i in (exp_nan != out_nan).nonzero()[0]]
        return f"NaN where none is expected (or the reverse), first at {where}"
    finite = ~exp_nan
    e, o = expected[finite].double(), out[finite].double()
    inf_mismatch = (e.isinf() | o.isinf()) & (e != o)
    if inf_mismatch.any():
        return "an infinite value where a finite one is expected (or the reverse)"
    both = ~(e.isinf() | o.isinf())
    err = torch.zeros_like(e)
    err[both] = (o[both] - e[both]).abs()
    eps = torch.finfo(expected.real.dtype if expected.is_complex() else expected.dtype).eps
    rounding = ULPS * eps * torch.as_tensor(magnitude, dtype=torch.float64).abs().broadcast_to(expected.shape)[finite]
    bad = err > atol + rtol * e.abs() + rounding
    if not bad.any():
        return None
    flat_pos = int(err.argmax())
    index = [int(i) for i in finite.nonzero()[flat_pos]] if expected.dim() else []
    allowed = f"rtol={rtol:g}, atol={atol:g}"
    if float(rounding.max()) > 0:
        allowed += f", rounding {float(rounding[flat_pos]):.3g} for the inputs' magnitude"
    return (f"max abs error {float(err.max()):.3g} at {index} "
            f"({int(bad.sum())} of {e.numel()} entries outside {allowed})")
