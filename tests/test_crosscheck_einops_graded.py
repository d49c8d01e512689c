"""Grading of `einops` answers written with the preamble's `rearrange` and `reduce`, and of a forbidden built-in.

`rearrange`/`reduce` are library calls, not Python iteration: answers using them must pass
"correct" and "vectorized"; `max_pool2d` is forbidden in ``max_pool_2x2``.
"""
from __future__ import annotations

from graders.checks.parts import ExerciseChecks
from graders.checks.static import Submission
from graders.checks.submission import exercise_seed
from graders.sandbox.session import WorkerSession

from crosscheck import Definitions

ASSIGNMENT = Definitions("einops").assignment


# the wrong answers are the demo class's (demo/einops.py), graded for every exercise by tests/test_contract.py

EINOPS_ANSWERS = {
    "batched_bilinear": "def batched_bilinear(x, W, y):\n"
                        "    return (x[:, None, :, None] * W * y[:, None, None, :]).sum((-2, -1))\n",
    "patchify": "def patchify(images, p):\n"
                "    return rearrange(images, 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=p, p2=p)\n",
    "space_to_depth": "def space_to_depth(x, r):\n"
                      "    return rearrange(x, 'b c (h h0) (w w0) -> b (h0 w0 c) h w', h0=r, w0=r)\n",
    "channel_shuffle": "def channel_shuffle(x, groups):\n"
                       "    return rearrange(x, 'b (g c) h w -> b (c g) h w', g=groups)\n",
    "max_pool_2x2": "def max_pool_2x2(x):\n"
                    "    return reduce(x, 'b c (h h0) (w w0) -> b c h w', 'max', h0=2, w0=2)\n",
}


def program(answers):
    return [("preamble", ASSIGNMENT.preamble)] + [(f"your `{name}` cell", src) for name, src in answers.items()]


def correct_and_vectorized(answers, seed):
    """The "correct" and "vectorized" verdicts of each answer (the timing part is left out: it is slow and noisy)."""
    cells = program(answers)
    submission = Submission(cells)
    verdicts = {}
    with WorkerSession(cells) as student:
        student.start()
        assert not student.load_errors, student.load_errors
        for name in answers:
            checks = ExerciseChecks(ASSIGNMENT.exercise(name), student, None, submission,
                                    exercise_seed(seed, name))
            verdicts[name] = {"correct": checks.correct(), "vectorized": checks.vectorized()}
    return verdicts


def test_einops_answers_pass_correct_and_vectorized():
    """`rearrange` and `reduce` from the preamble are library calls, not Python iteration."""
    results = correct_and_vectorized(EINOPS_ANSWERS, seed=3)
    for name in EINOPS_ANSWERS:
        for part in ("correct", "vectorized"):
            verdict = results[name][part]
            assert verdict.passed, f"{name} {part}: {verdict.message}"


def test_max_pool_builtin_is_rejected():
    answer = {"max_pool_2x2": "def max_pool_2x2(x):\n"
                              "    return torch.nn.functional.max_pool2d(x.double(), 2).to(x.dtype)\n"}
    verdict = correct_and_vectorized(answer, seed=0)["max_pool_2x2"]
    assert verdict["correct"].passed and not verdict["vectorized"].passed
    assert "forbidden" in verdict["vectorized"].message
