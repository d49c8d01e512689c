"""The answers benchmarks/fast_calibration.py calibrates "fast" on (tests/fast_calibration_set.py).

Item 2 of issue 40 asks for at least 40 answers over the six assignments, of every kind (references, other
formulations, half loops, loops, novice loops) and controls near the bar. A control is the reference plus extra
tensor work: it must still compute the reference's result (else "correct" would gate it and "fast" would never
see it), and each copy or repeat must be real extra work the answer runs.
"""
import pytest
import torch
from fast_calibration_set import CONTROLS, answers, control_repeats, control_source, tuned

from graders.checks.compare import mismatch
from graders.checks.vocabulary import clone_args
from graders.model.exercise import load_course

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")


def _function(assignment, ex, source):
    namespace: dict = {}
    exec(compile(assignment.preamble + "\n\n" + source, "<answer>", "exec"), namespace)
    return namespace[ex.name]


def test_the_set_spans_every_assignment_and_kind():
    chosen = answers(COURSE)
    assert len(chosen) >= 40
    assert {a.assignment for a in chosen} == set(COURSE) and len(COURSE) == 6
    kinds = {a.kind for a in chosen}
    assert {"reference", "alternative", "half loop", "loop version", "novice loop"} <= kinds
    assert {f"control {c:g}x" for c in CONTROLS} <= kinds
    assert len({(a.assignment, a.exercise, a.slot) for a in chosen}) == len(chosen)  # one answer per program slot
    everything = answers(COURSE, "all")
    assert len(everything) > len(chosen)
    assert {(a.exercise, a.kind) for a in chosen} <= {(a.exercise, a.kind) for a in everything}


def test_controls_compute_the_reference_result_with_their_extra_work():
    gen = torch.Generator().manual_seed(5)
    for assignment in COURSE.values():
        for ex in assignment.exercises:
            for target, clones in ((CONTROLS[-1], 0), (CONTROLS[0], 3)):
                source = control_source(ex, target, clones)
                assert source.count(f"_reference_{ex.name}(") == 2 + control_repeats(ex, target)
                assert (f"range({clones})" in source) == bool(clones)
                fn = _function(assignment, ex, source)
                for case in ex.cases(gen)[:4]:
                    args, kwargs = clone_args(case.args), dict(case.kwargs)
                    mine = clone_args(case.args)
                    expected, got = ex.reference(*args, **kwargs), fn(*mine, **kwargs)
                    pairs = [(got, expected)] + ([(mine[0], args[0])] if ex.in_place else [])
                    for out, want in pairs:
                        if isinstance(want, torch.Tensor):
                            rtol, atol = ex.tolerance(want.dtype)
                            assert not mismatch(out, want, rtol, atol, ex.magnitude(case.args)), (ex.name, case.name)
                        else:
                            assert out == want, (ex.name, case.name)


def test_tuning_adds_copies_to_a_control_only():
    chosen = answers(COURSE)
    control = next(a for a in chosen if a.target is not None)
    ex = next(e for e in COURSE[control.assignment].exercises if e.name == control.exercise)
    more = tuned(control, ex, 7)
    assert more.clones == 7 and "range(7)" in more.source and more.target == control.target
    reference = next(a for a in chosen if a.target is None)
    with pytest.raises(ValueError, match="only a control"):
        tuned(reference, ex, 1)
