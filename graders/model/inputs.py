"""Random inputs and case generators for hidden cases: the one place for these helpers.

Every helper takes an explicit ``torch.Generator`` so that a grading run is
reproducible from its seed, and none of them touches the global RNG. The
``layout`` argument (``lay_out``) makes the non-contiguous inputs that catch
code relying on ``.view`` or on a particular stride order.
"""
from __future__ import annotations

import torch

from graders.model.exercise import Case

LAYOUTS = ("contiguous", "transposed", "sliced")


def lay_out(t: torch.Tensor, layout: str) -> torch.Tensor:
    """Return a tensor equal to ``t`` but stored as ``layout`` says."""
    if layout == "contiguous" or t.dim() == 0:
        return t
    if layout == "transposed":
        if t.dim() == 1:
            return lay_out(t, "sliced")
        # store with the last two dims swapped, then view back: same values, non-contiguous
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "sliced":
        # every other element of a buffer twice as long in the last dim
        big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
        big[..., ::2] = t
        return big[..., ::2]
    raise ValueError(f"unknown layout {layout!r}")


def rand(gen: torch.Generator, *shape: int, dtype=torch.float32, layout="contiguous",
         scale: float = 1.0, low: float | None = None) -> torch.Tensor:
    """Normal(0, scale) values, or uniform in [low, low + scale) when ``low`` is given."""
    if low is None:
        t = torch.randn(*shape, generator=gen, dtype=torch.float64) * scale
    else:
        t = torch.rand(*shape, generator=gen, dtype=torch.float64) * scale + low
    return lay_out(t.to(dtype), layout)


def randint(gen: torch.Generator, low: int, high: int, *shape: int, layout="contiguous") -> torch.Tensor:
    """int64 values uniform in [low, high)."""
    t = torch.randint(low, high, shape, generator=gen, dtype=torch.int64)
    return lay_out(t, layout)


def ints(gen: torch.Generator, low: int, high: int, n: int) -> list[int]:
    """``n`` Python ints uniform in [low, high): for arguments that are lists, not tensors."""
    return randint(gen, low, high, n).tolist()


def pick(gen: torch.Generator, options):
    """One of ``options``, chosen with ``gen``."""
    return options[int(torch.randint(len(options), (1,), generator=gen))]


def one_long_axis(gen: torch.Generator, n: int, base) -> list[int]:
    """The sizes of one timed input: ``base`` with one axis, drawn for every call, ``n`` times longer. Every axis
    a student can loop over is then long in some of the calls, where a loop over it runs ``n`` times more often
    than in the others, while every call does about the same work (docs/calibration.md: a loop over any axis is
    at least ``ref_factor`` times the reference)."""
    sizes = list(base)
    sizes[int(torch.randint(len(sizes), (1,), generator=gen))] *= n
    return sizes


def random_cases(gen: torch.Generator, shapes, dtypes=(torch.float32, torch.float64), make=None, **kwargs):
    """One ``Case`` per shape and dtype, labelled ``random <dtype> [<shape>]``.

    The arguments are ``make(gen, *shape, dtype=dtype)`` (a tuple), by default one ``rand`` tensor
    of that shape (``kwargs`` go to ``rand``): the common "random inputs" block of a hidden generator.
    """
    for shape in shapes:
        for dtype in dtypes:
            args = make(gen, *shape, dtype=dtype) if make else (rand(gen, *shape, dtype=dtype, **kwargs),)
            yield Case(f"random {dtype} [{', '.join(map(str, shape))}]", args)


def layout_cases(gen: torch.Generator, *shape: int, layouts=("transposed", "sliced"), **kwargs):
    """One ``Case`` per non-contiguous layout, labelled ``<layout> input``: a ``rand`` tensor of ``shape``."""
    for layout in layouts:
        yield Case(f"{layout} input", (rand(gen, *shape, layout=layout, **kwargs),))
