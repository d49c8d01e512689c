"""Float64 work done in float32: observed, so that it earns no "fast".

"correct" holds a float64 result to ``torch.testing.assert_close``'s float64 tolerance (``Exercise.tolerance``),
which standard float64 code meets (an ``eps=1e-7`` in a denominator included) and which float32's rounding
(about 6e-8 relative) can also meet. Whether the work was done in float32 is therefore observed, not inferred
from the size of an error:

1. The exercise's float64 case at the benchmark size (``Exercise.large_case``), its float64 inputs rounded to
   float32 values (so each is exactly a float32 number), and the same inputs nudged by a fifth of a float32
   step: float64 inputs that differ, which round to the very same float32 inputs.
2. The reference's results on the two differ (its float64 work sees the nudge); if they do not, nothing can be
   observed and nothing is decided.
3. The student's function is called on both. A float64 result that is the same, entry for entry, on both
   inputs did not see what float64 holds and float32 does not: its work was done in float32.

An honest float64 answer's result moves with the nudge like the reference's (by about 1e-8 relative, eight orders
above float64's rounding), whatever its formulation; only work that passed through float32 maps the two inputs to
one result. The message says what was observed, and nothing else.
"""
from __future__ import annotations

import torch

from graders.checks.vocabulary import Disrupted, StudentError, Verdict, answer, clone_args, disruption
from graders.model.verdict import Reason, failed
from graders.sandbox.session import Deadline, WorkerFailure

NUDGE = 0.2  # of the float32 step above each input: below half the step under it too (a power of two's is half)

FLOAT32_WORK = ("its float64 result is the same for two float64 inputs that differ only below float32's precision, "
                "while the reference's result differs between them: the float64 work was done in float32, which is "
                "not float64 work and is not timed as such; compute in the inputs' dtype")


def on_float32_grid(args: tuple) -> tuple | None:
    """``args`` with each float64 tensor rounded to float32 values (kept float64); None when none is float64."""
    if not any(isinstance(a, torch.Tensor) and a.dtype == torch.float64 for a in args):
        return None
    return tuple(a.float().double() if isinstance(a, torch.Tensor) and a.dtype == torch.float64 else a for a in args)


def nudged(args: tuple, gen: torch.Generator) -> tuple:
    """``args`` (float64 tensors on float32's grid) with each float64 entry moved by ``NUDGE`` of its float32 step,
    up or down at random: other float64 inputs, the same float32 inputs (``a.float()`` is unchanged)."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor) and a.dtype == torch.float64:
            a32 = a.float()
            step = (torch.nextafter(a32.abs(), torch.tensor(float("inf"))) - a32.abs()).double()
            sign = torch.randint(0, 2, a.shape, generator=gen).double() * 2 - 1
            moved = a + NUDGE * step * sign
            moved = torch.where(torch.isfinite(moved), moved, a)
            assert torch.equal(moved.float(), a32), "a nudge below half a float32 step keeps the float32 value"
            a = moved
        out.append(a)
    return tuple(out)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal entry for entry, NaN equal to NaN."""
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


def float32_work(checks) -> Verdict | None:
    """A failed "fast" when the student's function did its float64 work in float32 (the module's docstring), else
    None. A process that died or missed its deadline decides nothing: ``Disrupted``."""
    ex = checks.ex
    large = ex.large_case(checks.gen, list(ex.hidden(checks.gen)))
    args = on_float32_grid(large.args)
    if args is None:
        return None
    other = nudged(args, checks.gen)
    expected = ex.reference(*clone_args(args), **large.kwargs)
    moved = ex.reference(*clone_args(other), **large.kwargs)
    if not (isinstance(expected, torch.Tensor) and expected.dtype == torch.float64) or _same(expected, moved):
        return None  # the reference's result does not see below float32's precision here: nothing to observe
    outs = []
    try:
        for inputs in (args, other):
            with checks.budgeted(checks.timeouts.call) as allowed:
                reply, _ = checks.student.request("call", allowed, name=ex.name, args=inputs, kwargs=large.kwargs)
            outs.append(answer(reply)["out"])
    except StudentError:
        return None  # "correct" passed on these inputs' kind: an error here is not this check's to judge
    except Deadline as exc:
        raise Disrupted(Reason.DEADLINE, f"{exc} (float64 inputs at the benchmark size)") from None
    except WorkerFailure as exc:
        raise disruption(exc, " on float64 inputs at the benchmark size") from None
    first, second = outs
    if not (isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)
            and first.dtype == second.dtype == torch.float64 and _same(first, second)):
        return None
    return failed("fast", Reason.WRONG_VALUE, f"{FLOAT32_WORK} ({large.label})", {"float32_work": True})
