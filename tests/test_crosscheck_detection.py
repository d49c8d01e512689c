"""Cross-checks of the `detection` assignment.

The references (and the loop versions) are compared with implementations
written here from the catalog's wording alone: plain Python arithmetic on
floats for box_iou, match_anchors and roi_align, and `F.grid_sample` as a
second, built-in check of roi_align. The hidden cases are inspected for the
edge cases the exercises promise to test. Wrong but plausible vectorized answers
are in ``test_crosscheck_detection_wrong.py``.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from crosscheck import Definitions, lay_out

ASSIGNMENT = Definitions("detection").assignment
DTYPES = (torch.float32, torch.float64)


def _exercise(name):
    return ASSIGNMENT.exercise(name)


# ------------------------------------------------------------------ independent versions

def plain_iou(a, b):
    """IoU of two boxes given as lists of 4 Python floats."""
    ov_w = min(a[2], b[2]) - max(a[0], b[0])
    ov_h = min(a[3], b[3]) - max(a[1], b[1])
    inter = ov_w * ov_h if ov_w > 0 and ov_h > 0 else 0.0
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def plain_box_iou(boxes1, boxes2):
    rows, cols = boxes1.tolist(), boxes2.tolist()
    table = [[plain_iou(a, b) for b in cols] for a in rows]
    return torch.tensor(table, dtype=torch.float64).reshape(len(rows), len(cols)).to(boxes1.dtype)


def plain_match(anchors, gt, threshold):
    cols = gt.tolist()
    result = []
    for a in anchors.tolist():
        if not cols:
            result.append(-1)
            continue
        ious = [plain_iou(a, b) for b in cols]
        # highest IoU first, then lowest index
        best = max(range(len(cols)), key=lambda j: (ious[j], -j))
        result.append(best if ious[best] >= threshold else -1)
    return torch.tensor(result, dtype=torch.int64)


def plain_sample(fmap, H, W, y, x):
    """One bilinear sample of the channel ``fmap`` (a list of rows), torchvision's rules."""
    if y < -1.0 or y > H or x < -1.0 or x > W:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    r0, c0 = math.floor(y), math.floor(x)
    if r0 >= H - 1:
        r0 = r1 = H - 1
        y = float(r0)
    else:
        r1 = r0 + 1
    if c0 >= W - 1:
        c0 = c1 = W - 1
        x = float(c0)
    else:
        c1 = c0 + 1
    dy, dx = y - r0, x - c0
    return ((1 - dy) * (1 - dx) * fmap[r0][c0] + (1 - dy) * dx * fmap[r0][c1]
            + dy * (1 - dx) * fmap[r1][c0] + dy * dx * fmap[r1][c1])


def plain_roi_align(features, boxes, n):
    C, H, W = features.shape
    fmaps = features.tolist()
    out = []
    for x1, y1, x2, y2 in boxes.tolist():
        step_y, step_x = (y2 - y1) / n, (x2 - x1) / n
        per_box = []
        for c in range(C):
            grid = []
            for i in range(n):
                y = y1 - 0.5 + (i + 0.5) * step_y
                grid.append([plain_sample(fmaps[c], H, W, y, x1 - 0.5 + (j + 0.5) * step_x) for j in range(n)])
            per_box.append(grid)
        out.append(per_box)
    return torch.tensor(out, dtype=torch.float64).reshape(len(out), C, n, n).to(features.dtype)


def grid_sample_roi_align(features, boxes, n):
    """The same semantics through F.grid_sample (H, W >= 2): border padding does the clamping."""
    C, H, W = features.shape
    f, b = features.double(), boxes.double()
    centres = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    ys = b[:, 1:2] - 0.5 + centres * (b[:, 3:4] - b[:, 1:2])      # [N, n]
    xs = b[:, 0:1] - 0.5 + centres * (b[:, 2:3] - b[:, 0:1])
    N = b.shape[0]
    gy = (2 * ys / (H - 1) - 1)[:, :, None].expand(N, n, n)
    gx = (2 * xs / (W - 1) - 1)[:, None, :].expand(N, n, n)
    grid = torch.stack([gx, gy], -1).reshape(1, N * n, n, 2)
    out = F.grid_sample(f[None], grid, mode="bilinear", padding_mode="border", align_corners=True)
    out = out[0].reshape(C, N, n, n).permute(1, 0, 2, 3)
    inside = ((ys >= -1) & (ys <= H))[:, None, :, None] & ((xs >= -1) & (xs <= W))[:, None, None, :]
    return torch.where(inside, out, 0.0).to(features.dtype)


# ------------------------------------------------------------------------ random inputs

def random_boxes(gen, n, dtype, kind):
    """Boxes (x1, y1, x2, y2) with x1 <= x2, y1 <= y2, of one of several kinds."""
    if kind == "grid":        # small integer corners: many exact ties, zero sides possible
        lo = torch.randint(0, 5, (n, 2), generator=gen).double()
        side = torch.randint(0, 4, (n, 2), generator=gen).double()
    elif kind == "wide":      # large coordinates
        lo = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 800 - 400
        side = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 300
    else:                     # continuous
        lo = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 12 - 6
        side = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 5
    return torch.cat([lo, lo + side], 1).to(dtype)


def iou_cases(gen, count):
    kinds, layouts = ("grid", "wide", "cont"), ("contiguous", "transposed", "sliced")
    for k in range(count):
        dtype = DTYPES[k % 2]
        kind = kinds[(k // 2) % 3]
        N = int(torch.randint(0, 9, (1,), generator=gen))
        M = int(torch.randint(0, 9, (1,), generator=gen))
        b1 = lay_out(random_boxes(gen, N, dtype, kind), layouts[k % 3])
        b2 = random_boxes(gen, M, dtype, kind)
        if M and k % 5 == 0:          # repeat some boxes of the first set in the second
            b2 = torch.cat([b2, b1[: min(N, 2)]])
        b2 = lay_out(b2, layouts[(k // 3) % 3])
        yield b1, b2


def roi_cases(gen, count, max_hw=9):
    layouts = ("contiguous", "transposed", "sliced")
    for k in range(count):
        dtype = DTYPES[k % 2]
        C = int(torch.randint(1, 4, (1,), generator=gen))
        H = int(torch.randint(1, max_hw, (1,), generator=gen))
        W = int(torch.randint(1, max_hw, (1,), generator=gen))
        N = int(torch.randint(0, 5, (1,), generator=gen))
        n = int(torch.randint(1, 6, (1,), generator=gen))
        feats = torch.randn(C, H, W, generator=gen, dtype=torch.float64)
        lo = torch.rand(N, 2, generator=gen, dtype=torch.float64) * torch.tensor([W + 6.0, H + 6.0]) - 4
        side = torch.rand(N, 2, generator=gen, dtype=torch.float64) * (max(H, W) + 2)
        if k % 4 == 1:
            side = side / (max(H, W) + 2)        # smaller than a pixel
        boxes = torch.cat([lo, lo + side], 1)
        if k % 6 == 5:                            # quarter-pixel corners, n a power of 2: exact arithmetic
            boxes = (boxes * 4).round() / 4
            n = (1, 2, 4)[k % 3]
        yield (lay_out(feats.to(dtype), layouts[k % 3]), lay_out(boxes.to(dtype), layouts[(k // 3) % 3]), n)


def close(actual, expected):
    if expected.dtype == torch.float32:
        torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)
    else:
        torch.testing.assert_close(actual, expected, rtol=1e-9, atol=1e-10)


# ---------------------------------------------------------------------------------- box_iou

def test_box_iou_reference_matches_plain():
    ref = _exercise("box_iou").reference
    gen = torch.Generator().manual_seed(101)
    for b1, b2 in iou_cases(gen, 240):
        out = ref(b1, b2)
        assert out.shape == (b1.shape[0], b2.shape[0]) and out.dtype == b1.dtype
        close(out, plain_box_iou(b1, b2))


def test_box_iou_loop_matches_plain():
    loop = _exercise("box_iou").loop
    gen = torch.Generator().manual_seed(102)
    for b1, b2 in iou_cases(gen, 30):
        close(loop(b1, b2), plain_box_iou(b1, b2))


def test_box_iou_chapter_example():
    reg = torch.tensor([[0., 1., 3., 3.], [1., 0., 3., 4.], [1., 0., 5., 2.], [-1., 0., 4., 2.]])
    gt = torch.tensor([[2., 0., 5., 2.]])
    out = _exercise("box_iou").reference(reg, gt)[:, 0]
    torch.testing.assert_close(out, torch.tensor([1 / 11, 1 / 6, 0.75, 1 / 3]))
    assert torch.equal(out.round(decimals=4), torch.tensor([0.0909, 0.1667, 0.7500, 0.3333]))


def test_box_iou_hidden_cases_cover_the_edge_cases():
    ex = _exercise("box_iou")
    cases = list(ex.hidden(torch.Generator().manual_seed(0)))
    seen = set()
    for case in cases:
        b1, b2 = case.args
        out = ex.reference(b1, b2)
        seen.add(b1.dtype)
        if b1.shape[0] == 0:
            seen.add("N=0")
        if b2.shape[0] == 0:
            seen.add("M=0")
        if not (b1.is_contiguous() and b2.is_contiguous()):
            seen.add("non-contiguous")
        if b1.shape == b2.shape and torch.equal(b1, b2) and b1.numel():
            seen.add("identical")
        if b1.numel() and b2.numel():
            a1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
            a2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
            inside = ((b2[None, :, 0] > b1[:, None, 0]) & (b2[None, :, 1] > b1[:, None, 1])
                      & (b2[None, :, 2] < b1[:, None, 2]) & (b2[None, :, 3] < b1[:, None, 3]))
            if inside.any():
                seen.add("nested")
            if (a1[:, None] > 0).logical_and(a2[None, :] > 0).all() and (out == 0).all():
                seen.add("disjoint")
            if ((a1[:, None] == 0) & (a2[None, :] == 0) & (b1[:, None, :] == b2[None, :, :]).all(-1)).any():
                seen.add("same point or segment (union 0)")
            top = out.amax(1, keepdim=True)
            if ((out == top) & (top > 0)).sum(1).gt(1).any():
                seen.add("ties")
    for need in ("N=0", "M=0", "non-contiguous", "identical", "nested", "disjoint",
                 "same point or segment (union 0)", "ties", torch.float32, torch.float64):
        assert need in seen, f"no hidden box_iou case with {need}"
    assert any(c.args[0].shape[0] == 0 and c.args[1].shape[0] == 0 for c in cases)


# ----------------------------------------------------------------------------- match_anchors

THRESHOLDS = (0.0, 0.1, 0.25, 0.3, 0.5, 0.7, 1.0)


def test_match_anchors_reference_matches_plain():
    ref = _exercise("match_anchors").reference
    gen = torch.Generator().manual_seed(201)
    for k, (anchors, gt) in enumerate(iou_cases(gen, 260)):
        threshold = THRESHOLDS[k % len(THRESHOLDS)]
        out = ref(anchors, gt, threshold)
        assert out.dtype == torch.int64 and out.shape == (anchors.shape[0],)
        assert torch.equal(out, plain_match(anchors, gt, threshold)), (k, threshold)


def test_match_anchors_loop_matches_plain():
    loop = _exercise("match_anchors").loop
    gen = torch.Generator().manual_seed(202)
    for k, (anchors, gt) in enumerate(iou_cases(gen, 30)):
        threshold = THRESHOLDS[k % len(THRESHOLDS)]
        assert torch.equal(loop(anchors, gt, threshold), plain_match(anchors, gt, threshold))


def test_match_anchors_hidden_cases_cover_the_edge_cases():
    ex = _exercise("match_anchors")
    cases = list(ex.hidden(torch.Generator().manual_seed(0)))
    seen = set()
    for case in cases:
        anchors, gt, threshold = case.args
        seen.add(anchors.dtype)
        N, M = anchors.shape[0], gt.shape[0]
        if M == 0:
            seen.add("M=0")
        if N == 0:
            seen.add("N=0")
        if threshold == 0:
            seen.add("threshold 0")
        if threshold == 1:
            out = ex.reference(anchors, gt, threshold)
            if (out >= 0).any() and (out == -1).any():
                seen.add("threshold 1, some matched")
        if not (anchors.is_contiguous() and gt.is_contiguous()):
            seen.add("non-contiguous")
        if N and M:
            iou = plain_box_iou(anchors.double(), gt.double())
            top = iou.amax(1, keepdim=True)
            if ((iou == top) & (top >= threshold) & (top > 0)).sum(1).gt(1).any():
                seen.add("ties")
            if threshold == 0 and (top == 0).any():
                seen.add("IoU 0 matched at threshold 0")
            if threshold > 0 and (top[:, 0] == threshold).any():
                seen.add("IoU equal to the threshold")
    for need in ("M=0", "N=0", "threshold 0", "threshold 1, some matched", "non-contiguous", "ties",
                 "IoU 0 matched at threshold 0", "IoU equal to the threshold", torch.float32, torch.float64):
        assert need in seen, f"no hidden match_anchors case with {need}"


# --------------------------------------------------------------------------------- roi_align

def test_roi_align_reference_matches_plain():
    ref = _exercise("roi_align").reference
    gen = torch.Generator().manual_seed(301)
    for feats, boxes, n in roi_cases(gen, 220):
        out = ref(feats, boxes, n)
        assert out.shape == (boxes.shape[0], feats.shape[0], n, n) and out.dtype == feats.dtype
        close(out, plain_roi_align(feats, boxes, n))


def test_roi_align_reference_matches_grid_sample():
    ref = _exercise("roi_align").reference
    gen = torch.Generator().manual_seed(302)
    checked = 0
    for feats, boxes, n in roi_cases(gen, 200, max_hw=14):
        if feats.shape[1] < 2 or feats.shape[2] < 2:
            continue
        close(ref(feats, boxes, n), grid_sample_roi_align(feats, boxes, n))
        checked += 1
    assert checked > 100


def test_roi_align_loop_matches_plain():
    loop = _exercise("roi_align").loop
    gen = torch.Generator().manual_seed(303)
    for feats, boxes, n in roi_cases(gen, 30):
        close(loop(feats, boxes, n), plain_roi_align(feats, boxes, n))


def test_roi_align_hidden_cases_cover_the_edge_cases():
    ex = _exercise("roi_align")
    cases = list(ex.hidden(torch.Generator().manual_seed(0)))
    seen = set()
    for case in cases:
        feats, boxes, n = case.args
        C, H, W = feats.shape
        seen.add(feats.dtype)
        seen.add(f"n={n}" if n == 1 else "n>1")
        if boxes.shape[0] == 0:
            seen.add("N=0")
        if C == 1:
            seen.add("C=1")
        if not feats.is_contiguous():
            seen.add("non-contiguous features")
        if not boxes.is_contiguous():
            seen.add("non-contiguous boxes")
        if H != W:
            seen.add("H != W")
        if boxes.shape[0] == 0:
            continue
        b = boxes.double()
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        if ((w > 0) & (w < 1) & (h > 0) & (h < 1)).any():
            seen.add("smaller than a pixel")
        crosses = (b[:, 0] < 0) & (b[:, 2] > 0) | (b[:, 2] > W) & (b[:, 0] < W) \
            | (b[:, 1] < 0) & (b[:, 3] > 0) | (b[:, 3] > H) & (b[:, 1] < H)
        if crosses.any():
            seen.add("crossing the border")
        centres = (torch.arange(n, dtype=torch.float64) + 0.5) / n
        ys = b[:, 1:2] - 0.5 + centres * h[:, None]
        xs = b[:, 0:1] - 0.5 + centres * w[:, None]
        out_y = (ys < -1) | (ys > H)
        out_x = (xs < -1) | (xs > W)
        if (out_y.all(1) | out_x.all(1)).any():
            seen.add("entirely outside")
        if ((ys >= -1) & (ys < 0)).any() or ((xs >= -1) & (xs < 0)).any():
            seen.add("samples in [-1, 0)")
        if ((ys >= H - 1) & (ys <= H)).any() or ((xs >= W - 1) & (xs <= W)).any():
            seen.add("samples on or past the last row or column")
    for need in ("N=0", "C=1", "n=1", "n>1", "non-contiguous features", "non-contiguous boxes", "H != W",
                 "smaller than a pixel", "crossing the border", "entirely outside", "samples in [-1, 0)",
                 "samples on or past the last row or column", torch.float32, torch.float64):
        assert need in seen, f"no hidden roi_align case with {need}"
