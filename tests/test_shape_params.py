"""Issue 38 item 2: a parameter the exercise declares to be a shape, sizes, strides or a permutation
(``Exercise.shape_params``) is fixed-size like ``x.shape`` (graders.checks.fixed).

Both ways: ``math.prod(shape[1:])``, ``N, H, W, C = map(int, shape)`` with a loop over ``len(shape)``,
``.tolist()`` of a tensor made from ``shape`` and ``perm``, and loops over ``shape = list(shape)`` (``tuple``,
``[*perm]``) pass "vectorized" in ``nhwc_to_nchw_offsets`` and
``permute_flat`` (each cost it before: the same code without the declaration still has its findings); a loop over
a data tensor's values, ``.tolist()`` of a data tensor and ``range(shape[0])`` (also after ``shape =
list(shape)``, and a copy of the shape rebound to a tensor or grown in a loop) still fail. The declaration is
checked against the signature, shown in the task text and given to the self-check.
"""
import dataclasses

import pytest
from test_checks import RUN

from graders import KIT_ROOT
from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission
from graders.course.build import _exercise_text, selfcheck_facts
from graders.model.exercise import load_course
from graders.sandbox.session import WorkerSession

COURSE = load_course(KIT_ROOT / "assignments")
STRIDES = COURSE["strides"]

HONEST = {
    "math.prod": ("nhwc_to_nchw_offsets", """\
import math
def nhwc_to_nchw_offsets(shape):
    N, H, W, C = shape
    n = torch.arange(N)[:, None, None, None] * math.prod(shape[1:])
    c = torch.arange(C)[None, :, None, None]
    h = torch.arange(H)[None, None, :, None] * (W * C)
    w = torch.arange(W)[None, None, None, :] * C
    return n + c + h + w
"""),
    "map(int, shape)": ("nhwc_to_nchw_offsets", """\
def nhwc_to_nchw_offsets(shape):
    N, H, W, C = map(int, shape)
    strides = [1] * len(shape)
    for i in reversed(range(len(shape) - 1)):
        strides[i] = strides[i + 1] * shape[i + 1]
    return (torch.arange(N)[:, None, None, None] * strides[0] + torch.arange(C)[None, :, None, None]
            + torch.arange(H)[None, None, :, None] * strides[1] + torch.arange(W)[None, None, None, :] * strides[2])
"""),
    ".tolist()": ("permute_flat", """\
def permute_flat(buffer, shape, perm):
    sizes = torch.tensor(shape, dtype=torch.int64)
    order = torch.tensor(perm, dtype=torch.int64)
    strides = (sizes.flip(0).cumprod(0).flip(0) // sizes.clamp(min=1)).tolist()
    new_sizes = sizes[order].tolist()
    new_strides = [strides[p] for p in perm]
    return buffer.contiguous().as_strided(new_sizes, new_strides).reshape(-1)
"""),
    "shape = list(shape)": ("nhwc_to_nchw_offsets", """\
def nhwc_to_nchw_offsets(shape):
    shape = list(shape)
    strides = [1] * len(shape)
    for i in reversed(range(len(shape) - 1)):
        strides[i] = strides[i + 1] * shape[i + 1]
    N, H, W, C = [int(s) for s in shape]
    return (torch.arange(N)[:, None, None, None] * strides[0] + torch.arange(C)[None, :, None, None]
            + torch.arange(H)[None, None, :, None] * strides[1] + torch.arange(W)[None, None, None, :] * strides[2])
"""),
    "shape = tuple(shape), perm = [*perm]": ("permute_flat", """\
def permute_flat(buffer, shape, perm):
    shape = tuple(shape)
    perm = [*perm]
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    new_sizes = [shape[p] for p in perm]
    new_strides = [strides[p] for p in perm]
    return buffer.contiguous().as_strided(new_sizes, new_strides).reshape(-1)
"""),
}
LOOPS = {
    "range(shape[0]) after shape = list(shape)": ("nhwc_to_nchw_offsets", """\
def nhwc_to_nchw_offsets(shape):
    shape = list(shape)
    N, H, W, C = shape
    rows = [torch.arange(H * W * C).view(H, W, C).movedim(2, 0) + n * H * W * C for n in range(shape[0])]
    return torch.stack(rows)
""", "list comprehension"),
    "shape = list(range(shape[0]))": ("nhwc_to_nchw_offsets", """\
def nhwc_to_nchw_offsets(shape):
    N, H, W, C = shape
    shape = list(range(shape[0]))
    return torch.stack([torch.arange(H * W * C).view(H, W, C).movedim(2, 0) + n * H * W * C for n in shape])
""", "list comprehension"),
    "a loop over the buffer after shape = [*shape]": ("permute_flat", """\
def permute_flat(buffer, shape, perm):
    shape = [*shape]
    values = [v for v in buffer]
    return torch.stack(values) if values else buffer
""", "list comprehension"),
    "a loop over the buffer's values": ("permute_flat", """\
def permute_flat(buffer, shape, perm):
    values = [v for v in buffer]
    return torch.stack(values) if values else buffer
""", "list comprehension"),
    ".tolist() of a data tensor": ("nhwc_to_nchw_offsets", """\
def nhwc_to_nchw_offsets(shape):
    N, H, W, C = shape
    flat = torch.arange(N * H * W * C).view(N, H, W, C)
    return torch.tensor([flat[n, :, :, c].tolist() for n in range(N) for c in range(C)]).view(N, C, H, W)
""", "`.tolist`"),
    "range(shape[0])": ("nhwc_to_nchw_offsets", """\
def nhwc_to_nchw_offsets(shape):
    N, H, W, C = shape
    rows = [torch.arange(H * W * C).view(H, W, C).movedim(2, 0) + n * H * W * C for n in range(shape[0])]
    return torch.stack(rows)
""", "list comprehension"),
}


@pytest.mark.parametrize("form", HONEST)
def test_a_shape_parameter_is_fixed_size(form):
    name, source = HONEST[form]
    ex = STRIDES.exercise(name)
    assert ex.shape_params
    cells = [("preamble", STRIDES.preamble), ("cell", source)]
    assert Submission(cells).iteration_findings(name, ex.forbidden, ex.loop_hint, ex.shape_params) == []
    undeclared = Submission(cells).iteration_findings(name, ex.forbidden, ex.loop_hint)
    assert undeclared, "control: without the declaration the same code has findings"


@pytest.mark.parametrize("form", LOOPS)
def test_a_loop_over_data_still_costs_vectorized(form):
    name, source, what = LOOPS[form]
    ex = STRIDES.exercise(name)
    cells = [("preamble", STRIDES.preamble), ("cell", source)]
    found = Submission(cells).iteration_findings(name, ex.forbidden, ex.loop_hint, ex.shape_params)
    assert what in {f.what for f in found}, found


def test_only_the_exercises_own_parameter_unbound_elsewhere_counts():
    ex = STRIDES.exercise("nhwc_to_nchw_offsets")
    helper = "def helper(shape):\n    return [s for s in shape]\ndef nhwc_to_nchw_offsets(shape):\n    return helper(shape)\n"
    rebound = "def nhwc_to_nchw_offsets(shape):\n    shape = torch.arange(shape[0])\n    return [s for s in shape]\n"
    copied_then_rebound = ("def nhwc_to_nchw_offsets(shape):\n    shape = list(shape)\n"
                           "    if shape[0] > 1:\n        shape = torch.arange(shape[0])\n    return [s for s in shape]\n")
    grown = ("def nhwc_to_nchw_offsets(shape):\n    shape = list(shape)\n    for _ in range(shape[0]):\n"
             "        shape.append(1)\n    return [s for s in shape]\n")
    for source in (helper, rebound, copied_then_rebound, grown):
        found = Submission([("cell", source)]).iteration_findings(ex.name, (), ex.loop_hint, ex.shape_params)
        assert "list comprehension" in {f.what for f in found}, source


@pytest.mark.parametrize("form", HONEST)
def test_the_honest_forms_pass_vectorized_through_the_grader(form):
    name, source = HONEST[form]
    cells = [("preamble", STRIDES.preamble), ("cell", source)]
    worker = WorkerSession(cells)
    worker.start()
    with worker:
        checks = ExerciseChecks(STRIDES.exercise(name), worker, RUN.reference(STRIDES), Submission(cells), seed=7,
                                run=RUN)
        correct, vectorized = checks.correct(), checks.vectorized()
    assert correct.passed, correct.message
    assert vectorized.passed, vectorized.message


def test_the_declaration_is_checked_shown_and_given_to_the_self_check():
    ex = STRIDES.exercise("permute_flat")
    assert ex.shape_params == ("shape", "perm")
    with pytest.raises(ValueError, match="not parameters"):
        dataclasses.replace(ex, shape_params=("shapes",))
    text = _exercise_text(1, ex)
    assert ex.shape_note and ex.shape_note in text and "`shape` and `perm`" in text
    assert selfcheck_facts(ex)["shape_params"] == ("shape", "perm")
    plain = COURSE["broadcasting"].exercise("batch_outer")
    assert plain.shape_note == "" and "shape_params" not in selfcheck_facts(plain)
