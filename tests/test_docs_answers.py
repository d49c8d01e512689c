"""Every answer the docs call honest passes the visible examples it is shown with.

A code block in ``docs/`` preceded by ``<!-- honest answer: <assignment>/<exercise> -->`` is an answer the docs call
honest; run in the assignment's preamble, each visible example's call gives the reference's result: the same
shape, dtype and values (within the exercise's tolerances). The control: the same ``F.unfold`` answer without its
cast fails the first example (int64), as the docs say.
"""
import re

import pytest
import torch

from graders.model.exercise import load_assignment

from tests.testkit import ROOT

MARK = re.compile(r"<!-- honest answer: (\w+)/(\w+) -->\s*```python\n(.*?)```", re.S)
ANSWERS = [(m.group(1), m.group(2), m.group(3), path.relative_to(ROOT).as_posix())
           for path in sorted((ROOT / "docs").rglob("*.md")) for m in MARK.finditer(path.read_text())]


def _examples_pass(assignment: str, exercise: str, source: str) -> list[str]:
    """The visible examples ``source`` fails, each with why ([]: it passes them all)."""
    a = load_assignment(ROOT / "assignments" / f"{assignment}.py")
    ex = a.exercise(exercise)
    problems = []
    for example in ex.examples:
        mine: dict = {}
        exec(a.preamble, mine)
        exec(source, mine)
        theirs: dict = {}
        exec(a.preamble, theirs)
        theirs[ex.name] = ex.reference
        try:
            exec(example.setup, mine)
            got = eval(example.call, mine)
        except Exception as exc:  # noqa: BLE001 - the example's failure, named
            problems.append(f"{example.call} after {example.setup!r}: raised {type(exc).__name__}: {exc}")
            continue
        exec(example.setup, theirs)
        want = eval(example.call, theirs)
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"{example.call}: {got.dtype} {tuple(got.shape)}, not {want.dtype} {tuple(want.shape)}")
        elif not torch.allclose(got.double(), want.double(), rtol=ex.rtol, atol=ex.atol):
            problems.append(f"{example.call}: wrong values")
    return problems


def test_the_docs_show_honest_answers():
    assert ("einops", "patchify") in {(a, e) for a, e, _, _ in ANSWERS}


@pytest.mark.parametrize("assignment, exercise, source, where", ANSWERS, ids=[f"{w}:{e}" for _, e, _, w in ANSWERS])
def test_every_honest_answer_of_the_docs_passes_its_visible_examples(assignment, exercise, source, where):
    assert _examples_pass(assignment, exercise, source) == [], where


def test_an_unfold_patchify_without_the_cast_fails_the_int64_example():
    source = next(s for a, e, s, _ in ANSWERS if (a, e) == ("einops", "patchify"))
    uncast = source.replace("images if images.is_floating_point() else images.double()", "images")
    assert uncast != source
    (problem, *_) = _examples_pass("einops", "patchify", uncast)
    assert "torch.arange(32)" in problem and "raised" in problem
