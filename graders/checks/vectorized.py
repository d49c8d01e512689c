"""The "vectorized" part: no Python-level iteration in what the function reaches, statically and at run time.

The runtime half counts ATen ops and the lines of the student's own cells
(never library lines) on every thread, in a child that loaded only this
exercise's program and was warmed up before counting. It counts at three
sizes drawn from the run's seed (so no answer can special-case them) and at
the benchmark size (``count_sizes``), and on the inputs of the largest hidden
cases as they are (``counted_cases``: shapes that are not multiples of 4),
checks the outputs it counted against the reference, and fails on growth over
the sizes (``graders.checks.rules.grows``: more than 2 ops or lines, unless one
step that stays flat at twice the largest size), on a hidden case's count above
the sizes' largest by more than ``SHAPE_SLACK`` (a loop that runs at some sizes
only), on a count over the exercise's absolute bound, on a thread started by
the function, and on a forbidden op
matched as a pattern that also covers internal variants (``_softmax``,
``_safe_softmax``). Each counted call follows a warm-up call on other inputs of
the same size, and every size draws its inputs from the same generator state (the same long axis where
``sized`` draws one per call).

A hidden case whose inputs are not contiguous (transposed, sliced) is compared with counts of the same layout:
the sizes' inputs are counted again laid out as that case's are (``laid_like``), where the work must not grow
either, and the case's count may exceed the largest of both by ``SHAPE_SLACK``. Library code takes other paths
for other layouts (``torch.func.vmap`` adds a dozen ops for a transposed input, at every size); a loop still
grows, in whatever layout.
"""
from __future__ import annotations

import torch

from graders.checks.compare import mismatch
from graders.checks.finding import OUTSIDE, STATE
from graders.checks.rules import forbidden_ops_used, grows, one_step
from graders.checks.static import summarize
from graders.checks.vocabulary import StudentError, Verdict, answer, clone_args, disruption
from graders.model.exercise import Case
from graders.model.inputs import lay_out
from graders.model.verdict import Reason, failed, passed
from graders.sandbox.session import WorkerFailure

WHILE_COUNTED = " while its work was being counted"


SHAPE_SLACK = 8  # ops or lines a hidden case's form may add over the counted sizes (padding, more axes: 4 measured)
SHAPES = 3  # hidden cases counted: the largest inputs of distinct shapes


def count_sizes(ex, gen: torch.Generator) -> list[int]:
    """Three sizes drawn per run, multiples of the smallest of ``ex.count_sizes`` (so a size the definitions
    need to be even stays even), the largest at least 4x the smallest and about 2x the largest of
    ``ex.count_sizes``; and ``ex.bench_size``, the size "fast" times at: all in increasing order."""
    lo, hi = ex.count_sizes[0], ex.count_sizes[-1]

    def draw(a: int, b: int) -> int:
        return int(torch.randint(a, b + 1, (1,), generator=gen))
    small = draw(1, 2)
    large = draw(max(4 * small, (2 * hi) // lo - 2), max(4 * small, (2 * hi) // lo))
    middle = draw(small + 1, large - 1)
    return sorted({lo * small, lo * middle, lo * large, ex.bench_size})


def counted_cases(ex, gen: torch.Generator) -> list[Case]:
    """The ``SHAPES`` hidden cases with the most input elements, one per distinct shape of their inputs: counted
    as they are, so a loop that runs only at sizes the drawn ones never take (not multiples of 4) is seen."""
    def shapes(case: Case) -> tuple:
        return tuple(tuple(a.shape) for a in (*case.args, *case.kwargs.values()) if isinstance(a, torch.Tensor))
    by_size = sorted(ex.hidden(gen), key=lambda c: -sum(a.numel() for a in c.args if isinstance(a, torch.Tensor)))
    chosen: dict[tuple, Case] = {}
    for case in by_size:
        chosen.setdefault(shapes(case), case)
    return list(chosen.values())[:SHAPES]


def layout_of(t: torch.Tensor) -> str:
    """How ``t`` is stored, in ``graders.model.inputs.lay_out``'s words."""
    if t.is_contiguous() or t.dim() == 0:
        return "contiguous"
    return "transposed" if t.dim() >= 2 and t.transpose(-1, -2).is_contiguous() else "sliced"


def layouts(args: tuple) -> tuple:
    """The layout of each tensor argument (None for any other argument)."""
    return tuple(layout_of(a) if isinstance(a, torch.Tensor) else None for a in args)


def laid_like(args: tuple, like: tuple) -> tuple:
    """``args`` with each tensor laid out as the tensor at its position in ``like`` (the same values)."""
    return tuple(lay_out(a, layout) if isinstance(a, torch.Tensor) and layout else a
                 for a, layout in zip(args, (*like, *[None] * len(args)), strict=False))


def _count(checks, n: int, like: tuple = (), seed: int = 0) -> dict:
    """One counted call at size ``n``, after a warm-up call on other inputs of the same size; ``like``: the
    layouts to store the inputs in (``layouts``; default as ``sized`` makes them). Every size draws from
    generators seeded with ``seed`` (one per run, drawn from the run's seed) and ``seed + 1``, so where ``sized``
    draws which axis is long (one long axis per timed call, docs/calibration.md), every size makes the same axis
    long: the counts compare one shape growing, not a library taking another path on another shape
    (`torch.cdist` switches to a matrix product past 25 rows)."""
    ex = checks.ex
    warm = laid_like(ex.sized(torch.Generator().manual_seed(seed), n), like)  # one generator each: what a
    counted = laid_like(ex.sized(torch.Generator().manual_seed(seed + 1), n), like)  # draw takes depends on n
    return _count_args(checks, warm, counted, {})


def _count_args(checks, warm: tuple, args: tuple, kwargs: dict) -> dict:
    """One counted call of ``args``, after a warm-up call of ``warm``; ``wrong`` says how its output differs."""
    ex = checks.ex
    expected = ex.reference(*clone_args(args), **kwargs)
    cap = 4 * max(ex.max_ops, ex.max_lines)
    with checks.budgeted(checks.timeouts.count) as allowed:
        reply, _ = checks.student.request("count", allowed, name=ex.name, warm=warm, args=args, kwargs=kwargs,
                                          cap=cap)
    got = answer(reply)
    if not got["stopped"]:
        rtol, atol = ex.tolerance(expected.dtype)
        problem = mismatch(got["out"], expected, rtol, atol, ex.magnitude(args))
        if problem:
            got["wrong"] = problem
    return got


def _count_problem(ex, c: dict, where: str) -> Verdict | None:
    """What one count says by itself (a thread, the cap reached, a wrong output), or None."""
    if c["threads"]:
        return failed("vectorized", Reason.THREADS, "started a thread while being counted; threads are not allowed")
    if c["stopped"]:
        return failed("vectorized", Reason.GROWS, f"did more than {4 * max(ex.max_ops, ex.max_lines)} ATen ops or "
                      f"Python lines at {where}, so Python-level iteration is running")
    if "wrong" in c:
        return failed("vectorized", Reason.WRONG_VALUE, f"gave a wrong result at {where} while being counted: "
                      f"{c['wrong']}")
    return None


def _grows_at(checks, ops: list[int], lines: list[int], sizes: list[int], like: tuple, seed: int) -> bool:
    """The work grows over ``sizes`` in the layout ``like``, by ``rules.grows`` (one step up is counted again at
    twice the largest size, as for the contiguous inputs)."""
    if not (grows(ops) or grows(lines)):
        return False
    if not ((grows(ops) and one_step(ops)) or (grows(lines) and one_step(lines))):
        return True
    try:
        last = _count(checks, 2 * sizes[-1], like, seed)
    except WorkerFailure as exc:
        raise disruption(exc, WHILE_COUNTED) from None
    except StudentError:
        return True
    if last["stopped"] or "wrong" in last or last["threads"]:
        return True
    return grows(ops, sum(last["ops"].values())) or grows(lines, last["lines"])


def vectorized(checks) -> Verdict:
    ex = checks.ex
    findings = checks.submission.iteration_findings(ex.name, ex.forbidden, ex.loop_hint, ex.shape_params)
    if findings:
        kinds = {f.kind for f in findings}
        reason = Reason.OUTSIDE_SUBSET if OUTSIDE in kinds else Reason.KEEPS_STATE if STATE in kinds \
            else Reason.PYTHON_LOOP
        return failed("vectorized", reason, summarize(findings), {"findings": len(findings)})
    sizes, shaped = count_sizes(ex, checks.gen), counted_cases(ex, checks.gen)
    seed = int(torch.randint(2 ** 62 - 1, (1,), generator=checks.gen))  # the counted inputs' draws (``_count``)
    try:
        counts = [_count(checks, n, (), seed) for n in sizes]
        at_shapes = [_count_args(checks, case.args, case.args, case.kwargs) for case in shaped]
    except WorkerFailure as exc:
        raise disruption(exc, WHILE_COUNTED) from None
    except StudentError as exc:
        return failed("vectorized", Reason.RAISED, f"{exc}{WHILE_COUNTED}")
    where = [f"size {n}" for n in sizes] + [f"the inputs of hidden case `{case.label}`" for case in shaped]
    for n, c in zip(where, counts + at_shapes, strict=True):
        problem = _count_problem(ex, c, n)
        if problem:
            return problem
    used = forbidden_ops_used(ex.forbidden_ops, {op for c in counts + at_shapes for op in c["ops"]})
    if used:
        return failed("vectorized", Reason.FORBIDDEN_OP,
                      f"dispatched `aten.{used[0]}`, which is forbidden in this exercise")
    ops = [sum(c["ops"].values()) for c in counts]
    lines = [c["lines"] for c in counts]
    figures: dict = {"sizes": sizes, "ops": ops, "lines": lines}
    if max(ops) > ex.max_ops or max(lines) > ex.max_lines:
        return failed("vectorized", Reason.GROWS, f"{max(ops)} ATen ops and {max(lines)} Python lines in one call, "
                      f"more than the {ex.max_ops} ops and {ex.max_lines} lines a vectorized answer needs", figures)
    laid: dict[tuple, tuple[list[int], list[int]]] = {}  # a layout of the inputs -> its ops and lines at the sizes
    for case, c in zip(shaped, at_shapes, strict=True):
        bound_ops, bound_lines, same = max(ops), max(lines), ""
        like = layouts(case.args)
        if any(layout not in (None, "contiguous") for layout in like):
            if like not in laid:
                try:
                    in_layout = [_count(checks, size, like, seed) for size in sizes]
                except WorkerFailure as exc:
                    raise disruption(exc, WHILE_COUNTED) from None
                except StudentError as exc:
                    return failed("vectorized", Reason.RAISED, f"{exc}{WHILE_COUNTED}")
                for size, counted in zip(sizes, in_layout, strict=True):
                    problem = _count_problem(ex, counted, f"size {size}, laid out as hidden case `{case.label}`")
                    if problem:
                        return problem
                laid[like] = ([sum(k["ops"].values()) for k in in_layout], [k["lines"] for k in in_layout])
                grown = _grows_at(checks, laid[like][0], laid[like][1], sizes, like, seed)
                if grown:
                    return failed("vectorized", Reason.GROWS,
                                  f"the work grows with the input laid out as hidden case `{case.label}`: "
                                  f"{laid[like][0]} ATen ops and {laid[like][1]} Python lines at sizes {sizes}, so "
                                  "Python-level iteration is still running", figures)
            bound_ops, bound_lines = max(bound_ops, *laid[like][0]), max(bound_lines, *laid[like][1])
            same = " (contiguous, and laid out as this case)"
        if sum(c["ops"].values()) > bound_ops + SHAPE_SLACK or c["lines"] > bound_lines + SHAPE_SLACK:
            return failed("vectorized", Reason.GROWS, f"{sum(c['ops'].values())} ATen ops and {c['lines']} Python "
                          f"lines on the inputs of hidden case `{case.label}`, at most {bound_ops} and {bound_lines} "
                          f"at sizes {sizes}{same}: Python-level iteration runs at some sizes", figures)
    flat_ops = flat_lines = None
    if (grows(ops) and one_step(ops)) or (grows(lines) and one_step(lines)):
        try:  # one step up: a library switching algorithms stays flat at twice the size; a loop rises again
            last = _count(checks, 2 * sizes[-1], (), seed)
        except WorkerFailure as exc:
            raise disruption(exc, WHILE_COUNTED) from None
        except StudentError as exc:
            return failed("vectorized", Reason.RAISED, f"{exc}{WHILE_COUNTED}")
        if last["stopped"] or "wrong" in last or last["threads"]:
            flat_ops = flat_lines = -1
        else:
            flat_ops, flat_lines = sum(last["ops"].values()), last["lines"]
        figures.update(flat_size=2 * sizes[-1], flat_ops=flat_ops, flat_lines=flat_lines)
    if grows(ops, flat_ops) or grows(lines, flat_lines):
        first, end = counts[0]["ops"], counts[-1]["ops"]
        top = max(end, key=lambda k: end[k] - first.get(k, 0), default="")
        return failed("vectorized", Reason.GROWS,
                      f"the work grows with the input: {ops[0]} ATen ops and {lines[0]} Python lines at size "
                       f"{sizes[0]}, {ops[-1]} and {lines[-1]} at size {sizes[-1]} (most added: `{top}`), so "
                       f"Python-level iteration is still running", figures)
    return passed("vectorized", f"no Python-level iteration; {ops[0]} ATen ops at size {sizes[0]}, "
                  f"{ops[-1]} at size {sizes[-1]}", figures)
