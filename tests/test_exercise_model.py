"""The exercise model derives name and signature from the reference and checks the loop's name."""
import dataclasses

import pytest
import torch

from graders.model.exercise import Exercise


def standardize(x, eps=1e-5,  # a comment
                axis=0):  # another
    return (x - x.mean(axis)) / (x.std(axis) + eps)


def standardize_loop(x, eps=1e-5, axis=0):
    return x


def standardize_slow(x, eps=1e-5, axis=0):
    return x


def _exercise(**changes):
    fields = dict(task="", reference=standardize, loop=standardize_loop, hidden=lambda gen: (),
                  sized=lambda gen, n: (torch.zeros(n),), examples=())
    return Exercise(**{**fields, **changes})


def test_name_and_signature_come_from_the_reference_as_written():
    ex = _exercise()
    assert ex.name == "standardize"
    assert ex.signature == "def standardize(x, eps=1e-5, axis=0):"   # 1e-5 as written, not 1e-05


def test_a_loop_with_another_name_is_refused():
    with pytest.raises(ValueError, match="expected 'standardize_loop'"):
        _exercise(loop=standardize_slow)


def test_a_restated_signature_must_agree():
    assert _exercise(signature="def standardize(x, eps=1e-5, axis=0):").name == "standardize"
    with pytest.raises(ValueError, match="differs"):
        _exercise(signature="def standardize(x, eps=1e-4, axis=0):")


def test_magnitude_defaults_to_the_largest_float_input_and_terms_override_it():
    ex = _exercise()
    assert ex.magnitude((torch.tensor([1.0, -300.0]), torch.tensor([5]), 2.0)) == 300.0
    assert ex.magnitude((torch.zeros(0),)) == 0.0
    squares = dataclasses.replace(ex, terms=lambda x: x * x)
    assert torch.equal(squares.magnitude((torch.tensor([3.0]),)), torch.tensor([9.0]))


def test_source_as_renames_only_the_def():
    src = _exercise().source_as(standardize_slow)
    assert src.startswith("def standardize(x, eps=1e-5, axis=0):") and "standardize_slow" not in src


def test_a_grading_process_loads_the_definitions_once_until_a_file_changes(tmp_path):
    import shutil

    from graders import KIT_ROOT
    from graders.model.exercise import load_assignment_once
    folder = tmp_path / "assignments"
    shutil.copytree(KIT_ROOT / "assignments", folder, ignore=shutil.ignore_patterns("__pycache__"))
    first = load_assignment_once(folder / "broadcasting.py")
    assert load_assignment_once(folder / "broadcasting.py") is first  # the next notebook: the same objects
    lesson = folder / "lessons" / "broadcasting.md"
    lesson.write_text(lesson.read_text() + "\nOne more line.\n")  # any file of the folder, not only the module
    changed = load_assignment_once(folder / "broadcasting.py")
    assert changed is not first and changed.lesson.endswith("One more line.\n")
