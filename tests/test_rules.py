"""The runtime rules of "vectorized" that the grader and the self-check share (graders.checks.rules)."""
from graders.checks.rules import GROWTH, forbidden_ops_used, grows, one_step


def test_flat_work_does_not_grow():
    assert not grows([12, 12, 12]) and not grows([7]) and not grows([12, 13, 14])
    # torch.cdist switching algorithms above 25 rows: one step, flat again at twice the largest size
    assert one_step([2, 2, 7]) and not grows([2, 2, 7], flat_after=7)


def test_work_that_grows_like_a_loop_grows():
    assert grows([4, 40])                        # one op per element
    assert grows([10, 10 + GROWTH + 1])          # more than the fixed allowance
    assert grows([3, 3, 3 + 13])                 # one step, not known to stay flat
    assert grows([2, 2, 7], flat_after=12)       # one step that rises again: a loop over chunks
    # issue 18 C2: a loop over 16-row chunks unrolled into `if n > 16 * i:` blocks, 5 ops a block
    assert not one_step([5, 10, 15]) and grows([5, 10, 15], flat_after=15)


def test_forbidden_ops_match_as_written_and_by_their_core():
    ops = {"mul", "_softmax", "_safe_softmax", "max_pool2d_with_indices", "sum"}
    assert forbidden_ops_used(["_softmax"], ops) == ["_safe_softmax", "_softmax"]
    assert forbidden_ops_used(["max_pool*"], ops) == ["max_pool2d_with_indices"]
    assert forbidden_ops_used(["one_hot"], ops) == []
    assert forbidden_ops_used([], ops) == []
