"""The runtime rules of "vectorized" that the grader and the self-check share (graders.checks.rules)."""
from graders.checks.rules import GROWTH, forbidden_ops_used, grows


def test_flat_work_does_not_grow():
    assert not grows([12, 12, 12], [8, 20, 32]) and not grows([7], [8])
    assert not grows([2, 2, 7], [8, 20, 32])  # torch.cdist switching algorithms above 25 rows: a few ops, once


def test_work_that_grows_like_a_loop_grows():
    assert grows([4, 40], [4, 36])              # one op per element
    assert grows([3, 3, 3 + 13], [8, 20, 32])   # the last step only, still half the size's growth
    assert grows([10, 10 + GROWTH + 1], [4, 5])  # small sizes: the fixed allowance


def test_forbidden_ops_match_as_written_and_by_their_core():
    ops = {"mul", "_softmax", "_safe_softmax", "max_pool2d_with_indices", "sum"}
    assert forbidden_ops_used(["_softmax"], ops) == ["_safe_softmax", "_softmax"]
    assert forbidden_ops_used(["max_pool*"], ops) == ["max_pool2d_with_indices"]
    assert forbidden_ops_used(["one_hot"], ops) == []
    assert forbidden_ops_used([], ops) == []
