"""Wrong but plausible vectorized answers to the `detection` exercises must fail "correct".

Each is a mistake a student makes when following the chapter: a shortcut formula,
a strict threshold, a forgotten half-pixel shift. (The demo class's own wrong answers,
in ``demo/detection.py``, are graded for every exercise by ``test_contract.py``.)
"""
from __future__ import annotations

import textwrap

import pytest

from crosscheck import Definitions

D = Definitions("detection")


CHAPTER_IOU = '''
def box_iou(boxes1, boxes2):
    # the chapter's shortcut: the smaller of two products of corner distances
    a, b = boxes1[:, None, :], boxes2[None, :, :]
    p = (a[..., 0] - b[..., 2]).abs() * (a[..., 3] - b[..., 1]).abs()
    q = (a[..., 2] - b[..., 0]).abs() * (a[..., 1] - b[..., 3]).abs()
    inter = torch.minimum(p, q)
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    union = area1[:, None] + area2[None, :] - inter
    return torch.where(union > 0, inter / union, torch.zeros_like(inter))
'''

UNCLAMPED_IOU = '''
def box_iou(boxes1, boxes2):
    a, b = boxes1[:, None, :], boxes2[None, :, :]
    w = torch.minimum(a[..., 2], b[..., 2]) - torch.maximum(a[..., 0], b[..., 0])
    h = torch.minimum(a[..., 3], b[..., 3]) - torch.maximum(a[..., 1], b[..., 1])
    inter = w * h
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    union = area1[:, None] + area2[None, :] - inter
    return torch.where(union > 0, inter / union, torch.zeros_like(inter))
'''

NAN_IOU = '''
def box_iou(boxes1, boxes2):
    a, b = boxes1[:, None, :], boxes2[None, :, :]
    w = (torch.minimum(a[..., 2], b[..., 2]) - torch.maximum(a[..., 0], b[..., 0])).clamp(min=0)
    h = (torch.minimum(a[..., 3], b[..., 3]) - torch.maximum(a[..., 1], b[..., 1])).clamp(min=0)
    inter = w * h
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    return inter / (area1[:, None] + area2[None, :] - inter)
'''


def _iou_body():
    src = D.assignment.exercise("box_iou").reference_source()
    return src.split("\n", 1)[1]


def _match_variant(tail):
    """A match_anchors built on the reference IoU, with ``tail`` (IoU matrix `iou`, M > 0) choosing the match."""
    body = _iou_body().replace("    return torch.where(union > 0, inter / union, torch.zeros_like(inter))\n",
                               "    iou = torch.where(union > 0, inter / union, torch.zeros_like(inter))\n")
    body = body.replace("boxes1", "anchors").replace("boxes2", "gt")
    head = ("def match_anchors(anchors, gt, threshold):\n"
            "    N, M = anchors.shape[0], gt.shape[0]\n"
            "    if M == 0:\n"
            "        return torch.full((N,), -1, dtype=torch.int64)\n")
    return head + body + textwrap.indent(textwrap.dedent(tail), "    ")


STRICT_THRESHOLD = _match_variant('''
    best, idx = iou.max(1)
    return torch.where(best > threshold, idx, -1)
''')

LAST_AMONG_TIES = _match_variant('''
    best, idx = iou.flip(1).max(1)
    return torch.where(best >= threshold, M - 1 - idx, -1)
''')

NO_EMPTY_CASE = _match_variant('''
    best, idx = iou.max(1)
    return torch.where(best >= threshold, idx, -1)
''').replace("    if M == 0:\n        return torch.full((N,), -1, dtype=torch.int64)\n", "")


def _roi_variant(*replacements):
    src = D.assignment.exercise("roi_align").reference_source()
    for old, new in replacements:
        assert old in src, old
        src = src.replace(old, new)
    return src


ROI_CHAPTER_WEIGHTS = _roi_variant(   # weights |corner - frac| instead of 1 - |corner - frac|
    ("wy0, wy1 = (1 - ly)[:, :, None], ly[:, :, None]", "wy0, wy1 = ly[:, :, None], (1 - ly)[:, :, None]"),
    ("wx0, wx1 = (1 - lx)[:, None, :], lx[:, None, :]", "wx0, wx1 = lx[:, None, :], (1 - lx)[:, None, :]"))
ROI_NOT_ALIGNED = _roi_variant(       # no half-pixel shift (aligned=False)
    ("(boxes[:, 1, None] - 0.5)", "boxes[:, 1, None]"), ("(boxes[:, 0, None] - 0.5)", "boxes[:, 0, None]"))
ROI_NO_ZERO_OUTSIDE = _roi_variant(   # clamps every sample onto the map instead of reading 0 far outside
    ("torch.where(inside, value, torch.zeros((), dtype=value.dtype))", "value"))
ROI_XY_SWAPPED = _roi_variant(        # rows taken from the x coordinates
    ("r0, r1 = y_low[:, :, None], y_high[:, :, None]",
     "r0, r1 = x_low[:, :, None].clamp(max=H - 1), x_high[:, :, None].clamp(max=H - 1)"),
    ("c0, c1 = x_low[:, None, :], x_high[:, None, :]",
     "c0, c1 = y_low[:, None, :].clamp(max=W - 1), y_high[:, None, :].clamp(max=W - 1)"))


@pytest.mark.parametrize("name, source", [
    ("box_iou", CHAPTER_IOU), ("box_iou", UNCLAMPED_IOU), ("box_iou", NAN_IOU),
    ("match_anchors", STRICT_THRESHOLD), ("match_anchors", LAST_AMONG_TIES), ("match_anchors", NO_EMPTY_CASE),
    ("roi_align", ROI_CHAPTER_WEIGHTS), ("roi_align", ROI_NOT_ALIGNED), ("roi_align", ROI_NO_ZERO_OUTSIDE),
    ("roi_align", ROI_XY_SWAPPED),
], ids=["iou-chapter-shortcut", "iou-unclamped", "iou-nan-for-empty-union",
        "match-strict-threshold", "match-last-among-ties", "match-no-empty-gt",
        "roi-chapter-weights", "roi-not-aligned", "roi-no-zero-outside", "roi-x-y-swapped"])
def test_wrong_answer_fails_correct(name, source):
    result = D.grade({name: source})
    assert not result[name]["correct"].passed, result[name]["correct"].message

