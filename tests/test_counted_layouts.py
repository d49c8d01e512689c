"""Issue 38: a hidden case with transposed or sliced inputs is counted against counts of the same layout
(graders.checks.vectorized: ``laid_like``), not against the contiguous sizes' counts alone.

Both ways: an honest ``torch.func.vmap`` ``batched_bilinear`` passes "vectorized" (vmap takes another path for a
non-contiguous input: 26 ATen ops on `transposed inputs` against at most 14 contiguous, at every size; it failed
with "Python-level iteration runs at some sizes"); a loop the AST cannot see (the worker runs it, the static
check reads the reference) that runs only for non-contiguous inputs still fails, its work growing in that layout,
and the same loop on every layout fails as before.
"""
import pytest
from test_checks import RUN, checks_with_static_view

from graders import KIT_ROOT
from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission
from graders.model.exercise import load_course
from graders.sandbox.session import WorkerSession

EINOPS = load_course(KIT_ROOT / "assignments")["einops"]

VMAP = """\
def batched_bilinear(x, W, y):
    return torch.func.vmap(lambda xb, yb: (W @ yb) @ xb)(x, y)
"""
REFERENCE = "def batched_bilinear(x, W, y):\n    return torch.einsum('bi,oij,bj->bo', x, W, y)\n"
LOOP_BODY = """\
        out = torch.empty(x.shape[0], W.shape[0], dtype=x.dtype)
        b = 0
        while b < x.shape[0]:
            out[b] = (W @ y[b]) @ x[b]
            b += 1
        return out
"""
ONLY_NON_CONTIGUOUS = ("def batched_bilinear(x, W, y):\n    if not (x.is_contiguous() and W.is_contiguous() and "
                       "y.is_contiguous()):\n" + LOOP_BODY + "    return torch.einsum('bi,oij,bj->bo', x, W, y)\n")
ALWAYS = "def batched_bilinear(x, W, y):\n    if True:\n" + LOOP_BODY


@pytest.mark.parametrize("seed", [0, 7])
def test_an_honest_vmap_on_transposed_inputs_passes(seed):
    cells = [("preamble", EINOPS.preamble), ("cell", VMAP)]
    worker = WorkerSession(cells)
    worker.start()
    with worker:
        checks = ExerciseChecks(EINOPS.exercise("batched_bilinear"), worker, RUN.reference(EINOPS), Submission(cells),
                                seed=seed, run=RUN)
        correct, vectorized = checks.correct(), checks.vectorized()
    assert correct.passed, correct.message
    assert vectorized.passed, vectorized.message


@pytest.mark.parametrize("source", [ONLY_NON_CONTIGUOUS, ALWAYS], ids=["non-contiguous only", "every layout"])
def test_a_loop_still_fails_in_whatever_layout_it_runs(source):
    worker, checks = checks_with_static_view(EINOPS, source, REFERENCE, name="batched_bilinear")
    with worker:
        verdict = checks.vectorized()
    assert not verdict.passed and "Python-level iteration" in verdict.message, verdict.message
    if source is ONLY_NON_CONTIGUOUS:  # seen in that layout: growing there (where the counted sizes make the
        # batch long: every size draws the same long axis), or above the sizes' counts on the hidden case's inputs
        assert "laid out as hidden case" in verdict.message or "on the inputs of hidden case" in verdict.message, \
            verdict.message
