"""The runtime rules of "vectorized" that the grader and the self-check share (graders.checks.rules)."""
from graders.checks.rules import GROWTH, forbidden_ops_used, grows


def test_flat_work_does_not_grow():
    assert not grows([12, 12, 12]) and not grows([12, 12 + GROWTH, 12 + GROWTH]) and not grows([7])


def test_work_that_grows_at_any_step_or_overall_grows():
    assert grows([4, 40])                      # one step
    assert grows([4, 4, 4 + GROWTH + 1])       # the last step only
    assert grows([10, 10 + GROWTH, 10 + 2 * GROWTH])  # each step within the allowance, the whole range not


def test_forbidden_ops_match_as_written_and_by_their_core():
    ops = {"mul", "_softmax", "_safe_softmax", "max_pool2d_with_indices", "sum"}
    assert forbidden_ops_used(["_softmax"], ops) == ["_safe_softmax", "_softmax"]
    assert forbidden_ops_used(["max_pool*"], ops) == ["max_pool2d_with_indices"]
    assert forbidden_ops_used(["one_hot"], ops) == []
    assert forbidden_ops_used([], ops) == []
