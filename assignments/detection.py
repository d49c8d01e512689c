"""Assignment 6: the chapter's applications (object detection).

Three small pieces of a detector, each written first with loops and then with
whole-tensor code: the IoU matrix of two sets of boxes, matching anchors to
ground-truth boxes, and RoI Align. ``vecgrade build`` turns this file into
``source/detection/detection.ipynb``.
"""
import torch

from graders.model.exercise import Assignment, Case, Example, Exercise, load_lesson, load_variants
from graders.model.inputs import lay_out, pick, rand

V = load_variants(__file__)
CASES = load_variants(__file__, "cases")

LESSON = load_lesson(__file__)


# ------------------------------------------------------------------------- input helpers


# -------------------------------------------------------------------------------- box_iou

def box_iou_loop(boxes1, boxes2):
    N, M = boxes1.shape[0], boxes2.shape[0]
    out = torch.zeros(N, M, dtype=boxes1.dtype)
    for i in range(N):
        for j in range(M):
            ax1, ay1, ax2, ay2 = boxes1[i]
            bx1, by1, bx2, by2 = boxes2[j]
            w = torch.clamp(torch.minimum(ax2, bx2) - torch.maximum(ax1, bx1), min=0)
            h = torch.clamp(torch.minimum(ay2, by2) - torch.maximum(ay1, by1), min=0)
            inter = w * h
            union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
            if union > 0:
                out[i, j] = inter / union
    return out


def box_iou(boxes1, boxes2):
    a = boxes1[:, None, :]
    b = boxes2[None, :, :]
    w = (torch.minimum(a[..., 2], b[..., 2]) - torch.maximum(a[..., 0], b[..., 0])).clamp(min=0)
    h = (torch.minimum(a[..., 3], b[..., 3]) - torch.maximum(a[..., 1], b[..., 1])).clamp(min=0)
    inter = w * h
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    union = area1[:, None] + area2[None, :] - inter
    return torch.where(union > 0, inter / union, torch.zeros_like(inter))


def box_iou_hidden(gen):
    for N, M in [(1, 1), (3, 5), (7, 2), (12, 9), (20, 20)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} boxes N={N}, M={M}", (CASES._boxes(gen, N, dtype), CASES._boxes(gen, M, dtype)))
    for dtype in (torch.float32, torch.float64):
        g = CASES._grid_boxes(gen, 6, dtype=dtype)
        yield Case(f"integer-corner boxes with ties and duplicates, {dtype}",
                   (CASES._grid_boxes(gen, 9, dtype=dtype), torch.cat([g, g[:3]])))
        outer, inner = CASES._nested(gen, 6, dtype)
        yield Case(f"nested boxes (second set inside the first), {dtype}", (outer, inner))
        yield Case(f"nested boxes (first set inside the second), {dtype}", (inner, outer))
    left = CASES._boxes(gen, 5, low=-20.0, span=5.0, side=4.0)
    right = CASES._boxes(gen, 4, low=5.0, span=5.0, side=4.0)
    yield Case("disjoint boxes", (left, right))
    a = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 1.0, 5.0]])
    b = torch.tensor([[2.0, 0.0, 4.0, 2.0], [0.0, 2.0, 2.0, 3.0], [3.0, 3.0, 4.0, 4.0]])
    yield Case("disjoint boxes that share an edge or a corner", (a, b))
    b1 = CASES._boxes(gen, 7, torch.float64)
    yield Case("identical box sets", (b1, b1.clone()))
    d = CASES._degenerate(gen, 8)
    yield Case("zero-area boxes (points and segments) against themselves", (d, d.clone()))
    yield Case("zero-area boxes against ordinary boxes", (CASES._degenerate(gen, 6), CASES._grid_boxes(gen, 5)))
    yield Case("N = 0", (CASES._boxes(gen, 0), CASES._boxes(gen, 4)))
    yield Case("M = 0", (CASES._boxes(gen, 3), CASES._boxes(gen, 0)))
    yield Case("N = 0 and M = 0", (CASES._boxes(gen, 0, torch.float64), CASES._boxes(gen, 0, torch.float64)))
    yield Case("large coordinates", (CASES._boxes(gen, 6, low=-500.0, span=1000.0, side=400.0),
                                     CASES._boxes(gen, 8, low=-500.0, span=1000.0, side=400.0)))
    for layout in ("transposed", "sliced"):
        yield Case(f"{layout} boxes", (CASES._boxes(gen, 6, layout=layout), CASES._boxes(gen, 5, layout=layout)))
    yield Case("transposed boxes1, sliced boxes2, float64",
               (CASES._boxes(gen, 5, torch.float64, layout="transposed"), CASES._boxes(gen, 6, torch.float64, layout="sliced")))


BOX_IOU = Exercise(
    task="""\
Given two sets of boxes, `boxes1` of shape `[N, 4]` and `boxes2` of shape `[M, 4]`,
each row `(x1, y1, x2, y2)` with `x1 <= x2` and `y1 <= y2`, return the `[N, M]`
matrix of their intersections over unions: `out[i, j]` is the area covered by both
`boxes1[i]` and `boxes2[j]` divided by the area covered by at least one of them.
Where the union has area 0 (both boxes are the same point or segment) the result
is 0. `N` or `M` may be 0. The result has the dtype of the inputs.""",
    hints=("View `boxes1` as `[N, 1, 4]` and `boxes2` as `[1, M, 4]`: the overlap's width is "
           "`min` of the right edges minus `max` of the left edges, clamped at 0.",
           "`torch.where(union > 0, inter / union, 0)` avoids the `nan` of `0 / 0`."),
    reference=box_iou,
    alternatives=(V.box_iou_corners, V.box_iou_prod),
    half_loops=(V.box_iou_half_loop, V.box_iou_half_loop_m),
    python_list=V.box_iou_lists,
    loop=box_iou_loop,
    hidden=box_iou_hidden,
    sized=lambda gen, n: (CASES._boxes(gen, n), CASES._boxes(gen, n)),
    examples=(
        Example("reg = torch.tensor([[0., 1., 3., 3.], [1., 0., 3., 4.], [1., 0., 5., 2.], [-1., 0., 4., 2.]])\n"
                "gt = torch.tensor([[2., 0., 5., 2.]])",
                "box_iou(reg, gt)[:, 0]",
                note="the chapter's four boxes and its ground truth, with y pointing down"),
        Example("outer = torch.tensor([[0., 0., 4., 4.]])\n"
                "others = torch.tensor([[1., 1., 3., 3.], [5., 5., 6., 6.], [4., 0., 6., 4.], [0., 0., 4., 4.]])",
                "box_iou(outer, others)",
                note="a box inside, a box apart, a box touching the edge, the same box"),
        Example("points = torch.tensor([[1., 1., 1., 1.], [0., 0., 2., 2.]])",
                "box_iou(points, points)",
                note="a point has area 0: its IoU with itself is 0"),
    ),
    rtol=1e-4,
    loop_hint="compute the [N, M] overlaps with broadcasting instead",
    bench_size=28,
    speedup=15,
)


# -------------------------------------------------------------------------- match_anchors

def match_anchors_loop(anchors, gt, threshold):
    N, M = anchors.shape[0], gt.shape[0]
    out = torch.full((N,), -1, dtype=torch.int64)
    for i in range(N):
        best_iou, best_j = None, -1
        for j in range(M):
            ax1, ay1, ax2, ay2 = anchors[i]
            bx1, by1, bx2, by2 = gt[j]
            w = torch.clamp(torch.minimum(ax2, bx2) - torch.maximum(ax1, bx1), min=0)
            h = torch.clamp(torch.minimum(ay2, by2) - torch.maximum(ay1, by1), min=0)
            inter = w * h
            union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
            iou = inter / union if union > 0 else torch.zeros((), dtype=anchors.dtype)
            if best_j == -1 or iou > best_iou:
                best_iou, best_j = iou, j
        if best_j >= 0 and best_iou >= threshold:
            out[i] = best_j
    return out


def match_anchors(anchors, gt, threshold):
    N, M = anchors.shape[0], gt.shape[0]
    if M == 0:
        return torch.full((N,), -1, dtype=torch.int64)
    a = anchors[:, None, :]
    g = gt[None, :, :]
    w = (torch.minimum(a[..., 2], g[..., 2]) - torch.maximum(a[..., 0], g[..., 0])).clamp(min=0)
    h = (torch.minimum(a[..., 3], g[..., 3]) - torch.maximum(a[..., 1], g[..., 1])).clamp(min=0)
    inter = w * h
    area_a = (anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1])
    area_g = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
    union = area_a[:, None] + area_g[None, :] - inter
    iou = torch.where(union > 0, inter / union, torch.zeros_like(inter))
    best = iou.amax(1, keepdim=True)
    columns = torch.arange(M).expand(N, M)
    first = torch.where(iou == best, columns, M).amin(1)
    return torch.where(best[:, 0] >= threshold, first, -1)


def match_anchors_hidden(gen):
    for N, M in [(1, 1), (4, 3), (9, 5), (16, 12), (30, 7)]:
        for dtype in (torch.float32, torch.float64):
            threshold = pick(gen, [0.1, 0.3, 0.5])
            yield Case(f"random {dtype} boxes N={N}, M={M}", (CASES._boxes(gen, N, dtype), CASES._boxes(gen, M, dtype), threshold))
    for dtype in (torch.float32, torch.float64):
        g = CASES._grid_boxes(gen, 5, dtype=dtype)
        gt = torch.cat([g, g[[1, 0, 3]], g[[1]]])
        yield Case(f"duplicate gt boxes (ties), {dtype}", (CASES._grid_boxes(gen, 24, dtype=dtype), gt, 0.25))
        yield Case(f"integer-corner boxes, threshold exactly reached, {dtype}",
                   (CASES._grid_boxes(gen, 20, dtype=dtype), CASES._grid_boxes(gen, 6, dtype=dtype), 0.5))
    anchors, gt = CASES._grid_boxes(gen, 12), CASES._grid_boxes(gen, 5)
    yield Case("threshold 0 (an IoU of 0 is enough)", (anchors, gt, 0.0))
    far = CASES._boxes(gen, 6, low=50.0, span=10.0)
    yield Case("threshold 0, anchors apart from every gt box", (far, CASES._grid_boxes(gen, 4), 0.0))
    yield Case("anchors apart from every gt box", (far, CASES._grid_boxes(gen, 4), 0.3))
    gt = CASES._grid_boxes(gen, 6, dtype=torch.float64)
    anchors = torch.cat([gt[[2, 5]], CASES._grid_boxes(gen, 8, dtype=torch.float64), gt[[0]]])
    yield Case("threshold 1 (only identical boxes match)", (anchors, gt, 1.0))
    d = CASES._degenerate(gen, 7)
    yield Case("zero-area anchors and gt boxes", (d, torch.cat([CASES._degenerate(gen, 3), d[:2]]), 0.0))
    yield Case("M = 0", (CASES._boxes(gen, 5), CASES._boxes(gen, 0), 0.5))
    yield Case("M = 0, threshold 0", (CASES._boxes(gen, 3, torch.float64), CASES._boxes(gen, 0, torch.float64), 0.0))
    yield Case("N = 0", (CASES._boxes(gen, 0), CASES._boxes(gen, 4), 0.5))
    yield Case("N = 0 and M = 0", (CASES._boxes(gen, 0), CASES._boxes(gen, 0), 0.5))
    for layout in ("transposed", "sliced"):
        yield Case(f"{layout} anchors and gt boxes",
                   (lay_out(CASES._grid_boxes(gen, 10), layout), lay_out(CASES._grid_boxes(gen, 6), layout), 0.3))
    yield Case("transposed anchors, sliced gt boxes, float64",
               (CASES._boxes(gen, 9, torch.float64, layout="transposed"), CASES._boxes(gen, 4, torch.float64, layout="sliced"), 0.2))


MATCH_ANCHORS = Exercise(
    task="""\
Match anchor boxes to ground-truth boxes. `anchors` is `[N, 4]`, `gt` is `[M, 4]`,
rows `(x1, y1, x2, y2)` as in `box_iou` (IoU 0 where the union is 0), and
`threshold` is a Python float. Return an int64 tensor of shape `[N]`: for each
anchor, the index of the gt box with the highest IoU with it (the lowest index
when several gt boxes share that highest IoU), or `-1` when that highest IoU is
`< threshold`, or when there are no gt boxes (`M == 0`).
An IoU equal to the threshold is a match.

You may call your `box_iou` from the first exercise (the grader runs the whole
notebook, and checks what your function calls as well) or compute the IoU here. `N` may be 0.""",
    hints=("Compute the `[N, M]` IoU matrix; `amax(1, keepdim=True)` gives the best IoU of each anchor.",
           "`torch.where(iou == best, column_index, M).amin(1)` is the lowest index reaching the best; "
           "a reduction over an empty axis fails, so treat `M == 0` separately."),
    reference=match_anchors,
    alternatives=(V.match_anchors_argmax, V.match_anchors_stable_sort),
    half_loops=(V.match_anchors_half_loop, V.match_anchors_half_loop_m),
    python_list=V.match_anchors_lists,
    loop=match_anchors_loop,
    hidden=match_anchors_hidden,
    sized=lambda gen, n: (CASES._grid_boxes(gen, n, grid=n), CASES._grid_boxes(gen, n, grid=n), 0.3),
    examples=(
        Example("anchors = torch.tensor([[0., 0., 2., 2.], [1., 1., 3., 3.], [5., 5., 6., 6.], [0., 0., 1., 4.]])\n"
                "gt = torch.tensor([[0., 0., 2., 2.], [1., 1., 3., 3.], [1., 1., 3., 3.]])",
                "match_anchors(anchors, gt, 0.5)",
                note="anchor 1 ties between gt 1 and 2: the lower index wins; anchor 2 overlaps nothing"),
        Example("anchors = torch.tensor([[0., 0., 2., 2.], [5., 5., 6., 6.]])\n"
                "gt = torch.tensor([[1., 0., 3., 2.]])",
                "match_anchors(anchors, gt, 0.0)",
                note="with threshold 0 every anchor is matched, even with IoU 0"),
        Example("anchors = torch.tensor([[0., 0., 2., 2.]])\n"
                "gt = torch.zeros(0, 4)",
                "match_anchors(anchors, gt, 0.5)"),
    ),
    loop_hint="compute the [N, M] IoU matrix with broadcasting and reduce it over axis 1 instead",
    bench_size=32,
    speedup=15,
)


# ------------------------------------------------------------------------------ roi_align

def roi_align_loop(features, boxes, output_size):
    C, H, W = features.shape
    N = boxes.shape[0]
    n = output_size
    out = torch.zeros(N, C, n, n, dtype=features.dtype)
    for k in range(N):
        x1, y1, x2, y2 = boxes[k]
        bin_w = (x2 - x1) / n
        bin_h = (y2 - y1) / n
        for i in range(n):
            for j in range(n):
                y = y1 - 0.5 + (i + 0.5) * bin_h
                x = x1 - 0.5 + (j + 0.5) * bin_w
                if y < -1 or y > H or x < -1 or x > W:
                    continue                      # outside the map: the sample stays 0
                y = torch.clamp(y, min=0)
                x = torch.clamp(x, min=0)
                y_low, x_low = int(torch.floor(y)), int(torch.floor(x))
                if y_low >= H - 1:
                    y_low = y_high = H - 1
                    y = torch.tensor(float(y_low), dtype=features.dtype)
                else:
                    y_high = y_low + 1
                if x_low >= W - 1:
                    x_low = x_high = W - 1
                    x = torch.tensor(float(x_low), dtype=features.dtype)
                else:
                    x_high = x_low + 1
                ly, lx = y - y_low, x - x_low
                hy, hx = 1 - ly, 1 - lx
                for c in range(C):
                    out[k, c, i, j] = (hy * hx * features[c, y_low, x_low] + hy * lx * features[c, y_low, x_high]
                                       + ly * hx * features[c, y_high, x_low] + ly * lx * features[c, y_high, x_high])
    return out


def roi_align(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5                                # [n]
    ys = (boxes[:, 1, None] - 0.5) + centres * ((boxes[:, 3] - boxes[:, 1]) / n)[:, None]   # [N, n]
    xs = (boxes[:, 0, None] - 0.5) + centres * ((boxes[:, 2] - boxes[:, 0]) / n)[:, None]   # [N, n]
    inside = ((ys >= -1) & (ys <= H))[:, :, None] & ((xs >= -1) & (xs <= W))[:, None, :]  # [N, n, n]
    ys, xs = ys.clamp(min=0), xs.clamp(min=0)
    y_low = ys.floor().clamp(max=H - 1)
    x_low = xs.floor().clamp(max=W - 1)
    ly = (ys - y_low) * (y_low < H - 1)          # 0 at or past the last row
    lx = (xs - x_low) * (x_low < W - 1)
    y_low, x_low = y_low.long(), x_low.long()
    y_high = (y_low + 1).clamp(max=H - 1)
    x_high = (x_low + 1).clamp(max=W - 1)
    r0, r1 = y_low[:, :, None], y_high[:, :, None]        # [N, n, 1]: broadcast against the columns
    c0, c1 = x_low[:, None, :], x_high[:, None, :]        # [N, 1, n]
    wy0, wy1 = (1 - ly)[:, :, None], ly[:, :, None]
    wx0, wx1 = (1 - lx)[:, None, :], lx[:, None, :]
    value = (features[:, r0, c0] * (wy0 * wx0) + features[:, r0, c1] * (wy0 * wx1)
             + features[:, r1, c0] * (wy1 * wx0) + features[:, r1, c1] * (wy1 * wx1))   # [C, N, n, n]
    value = torch.where(inside, value, torch.zeros((), dtype=value.dtype))
    return value.permute(1, 0, 2, 3)


def roi_align_hidden(gen):
    for C, H, W, N, n in [(1, 5, 7, 3, 2), (3, 8, 6, 4, 3), (2, 12, 15, 6, 5), (4, 16, 10, 5, 7)]:
        for dtype in (torch.float32, torch.float64):
            yield Case(f"random {dtype} map C={C}, H={H}, W={W}, N={N} boxes, n={n}",
                       (rand(gen, C, H, W, dtype=dtype), CASES._roi_boxes(gen, N, H, W, dtype), n))
    yield Case("boxes mostly inside the map", (rand(gen, 2, 9, 11), CASES._roi_boxes(gen, 5, 9, 11, margin=0.0, side=3.0), 4))
    lo = rand(gen, 4, 2, dtype=torch.float64, low=-4.0, scale=3.0)
    hi = rand(gen, 4, 2, dtype=torch.float64, low=1.0, scale=3.0) + torch.tensor([8.0, 7.0], dtype=torch.float64)
    yield Case("boxes larger than the map, crossing the border on every side",
               (rand(gen, 3, 7, 8), torch.cat([lo, hi], 1).float(), 6))
    for dtype in (torch.float32, torch.float64):
        outside = torch.tensor([[-9.0, 1.0, -3.0, 4.0], [1.0, -8.0, 5.0, -2.5], [12.5, 0.0, 16.0, 3.0],
                                [0.0, 10.8, 4.0, 14.0], [-6.0, -6.0, -2.2, -2.2]], dtype=dtype)
        yield Case(f"boxes entirely outside the map, {dtype}", (rand(gen, 2, 8, 10, dtype=dtype), outside, 3))
    yield Case("boxes on the last row and column and past them",
               (rand(gen, 2, 6, 9), torch.tensor([[6.0, 3.0, 10.5, 7.2], [7.7, 4.6, 9.3, 5.9], [-1.4, 5.1, 2.0, 6.4]]), 4))
    small = CASES._roi_boxes(gen, 6, 10, 10, margin=1.0, side=0.9)
    yield Case("boxes smaller than a pixel", (rand(gen, 3, 10, 10), small, 3))
    zero = CASES._roi_boxes(gen, 4, 8, 8, side=0.0)
    yield Case("zero-size boxes", (rand(gen, 2, 8, 8, dtype=torch.float64), zero.double(), 2))
    yield Case("n = 1", (rand(gen, 3, 9, 7), CASES._roi_boxes(gen, 5, 9, 7), 1))
    yield Case("N = 0", (rand(gen, 2, 6, 5), CASES._roi_boxes(gen, 0, 6, 5), 3))
    yield Case("C = 1, large n", (rand(gen, 1, 11, 13), CASES._roi_boxes(gen, 3, 11, 13), 9))
    yield Case("a map of one row", (rand(gen, 2, 1, 9), CASES._roi_boxes(gen, 4, 1, 9, margin=1.5, side=3.0), 3))
    yield Case("a map of one column", (rand(gen, 2, 8, 1), CASES._roi_boxes(gen, 4, 8, 1, margin=1.5, side=3.0), 3))
    yield Case("large boxes, the map much smaller",
               (rand(gen, 2, 5, 4), CASES._roi_boxes(gen, 3, 5, 4, margin=10.0, side=30.0), 8))
    for layout in ("transposed", "sliced"):
        yield Case(f"{layout} map and boxes",
                   (rand(gen, 3, 9, 12, layout=layout), CASES._roi_boxes(gen, 5, 9, 12, layout=layout), 4))
    yield Case("sliced map, transposed boxes, float64",
               (rand(gen, 2, 10, 7, dtype=torch.float64, layout="sliced"),
                CASES._roi_boxes(gen, 4, 10, 7, torch.float64, layout="transposed"), 3))


def _roi_inputs(gen, n):
    """One timed call: 4 boxes on a ``[1, 24, 20]`` feature map with ``output_size`` 8, and one of five axes,
    drawn for every call, longer: ``4 n`` boxes, ``16 n`` channels (``output_size`` 2), ``output_size`` ``4 n``
    (the output's rows and columns, one box), or a feature map of ``24 n`` rows or ``20 n`` columns (with
    ``output_size`` ``2 n``). Every call does the same work (``N * C * output_size ** 2`` samples), the loop
    version's too (it is timed on one call: with 4 boxes of 8 x 8 bins on a long feature map it read 27x the
    reference against 350x or more; with ``4 n`` boxes there the separable alternative, whose weights are ``[N,
    output_size, H]``, read 2.0-3.3x), and a long feature map adds only its transfer to the reference, while a loop
    over its rows or columns runs ``n`` times more often. The four coordinates of a box are fixed by the exercise's meaning: a loop over them is
    fixed-size work (docs/calibration.md)."""
    N, C, size, H, W = 4, 1, 8, 24, 20
    axis = int(torch.randint(5, (1,), generator=gen))
    if axis == 0:
        N *= n
    elif axis == 1:
        C, size = C * 16 * n, 2  # the reference's many small ops outweigh its arithmetic: a loop over 64
        # channels read 2.7x the reference, in-process (and output_size 4)
    elif axis == 2:
        N, size = 1, 4 * n  # one box: 2 n bins a side and 4 boxes read 4.7-5.8x for a loop over them
    elif axis == 3:
        H, size = H * n, 2 * n
    else:
        W, size = W * n, 2 * n
    return rand(gen, C, H, W), CASES._roi_boxes(gen, N, H, W), size


ROI_ALIGN = Exercise(
    task="""\
RoI Align with one sample per bin. `features` is a `[C, H, W]` float map, `boxes`
is `[N, 4]` with rows `(x1, y1, x2, y2)` in feature-map pixels (x along `W`, y
along `H`), and `output_size` is an int `n`. Return `[N, C, n, n]`: bin `(i, j)`
of box `k` holds the bilinear sample of every channel at

- `y = y1 - 0.5 + (i + 0.5) * (y2 - y1) / n`, `x = x1 - 0.5 + (j + 0.5) * (x2 - x1) / n`
  (the box is shifted by half a pixel, as `aligned=True` in torchvision).

The sample is 0 if `y < -1` or `y > H` or `x < -1` or `x > W`. Otherwise a negative
`y` (or `x`) becomes 0; with `y0 = floor(y)`, if `y0 >= H - 1` both neighbour rows are
`H - 1` (and the weight is all on that row), else they are `y0` and `y0 + 1`; the
same for `x` with `W`. The value is the usual bilinear mix of the four neighbours
with weights `(1 - ly)(1 - lx)`, `(1 - ly) lx`, `ly (1 - lx)`, `ly lx`, where
`ly = y - y0`, `lx = x - x0`. This is `torchvision.ops.roi_align(features[None], [boxes],
output_size=n, spatial_scale=1.0, sampling_ratio=1, aligned=True)`. `N` may be 0.""",
    hints=("The sample rows depend on (box, bin row) only: compute them as `[N, n]`, the columns as `[N, n]`, "
           "and the four weights from them.",
           "`features[:, rows[:, :, None], cols[:, None, :]]` gathers a `[C, N, n, n]` tensor in one step."),
    reference=roi_align,
    alternatives=(V.roi_align_separable, V.roi_align_flat_take),
    half_loops=(V.roi_align_half_loop, V.roi_align_half_loop_y, V.roi_align_half_loop_x, V.roi_align_half_loop_c,
                V.roi_align_half_loop_rows, V.roi_align_half_loop_cols),
    python_list=V.roi_align_lists,
    loop=roi_align_loop,
    hidden=roi_align_hidden,
    # one long axis per call (issue 38): the boxes, the output's rows and columns, the channels, the feature map's
    # rows or its columns; before, the channels (one) and the feature map ([24, 20]) were fixed
    sized=_roi_inputs,
    examples=(
        Example("ramp = torch.arange(25.).view(1, 5, 5)   # value 5 * y + x at row y, column x\n"
                "boxes = torch.tensor([[1., 1., 3., 3.], [0.5, 1., 2.5, 2.]])",
                "roi_align(ramp, boxes, 2)"),
        Example("ramp = torch.arange(1., 26.).view(1, 5, 5)   # value 5 * y + x + 1\n"
                "boxes = torch.tensor([[-2., -2., 1., 1.], [3., 3., 7., 7.]])",
                "roi_align(ramp, boxes, 3)",
                note="samples below -1 or above 5 are 0; those in [-1, 0) or past the last row are clamped"),
        Example("feature_map = torch.arange(40000.).view(1, 200, 200)\n"
                "boxes = torch.tensor([[50., 40., 100., 120.], [30., 40., 90., 100.]])",
                "roi_align(feature_map, boxes, 2)",
                note="the chapter's boxes on its 200 x 200 ramp, with n = 2"),
    ),
    rtol=1e-4,
    loop_hint="compute the sample positions as [N, n] tensors and gather with integer-array indexing instead",
    bench_size=16,
    speedup=12,
)


ASSIGNMENT = Assignment(
    name="detection",
    title="Applications: IoU, anchor matching and RoI Align",
    lesson=LESSON,
    exercises=(BOX_IOU, MATCH_ANCHORS, ROI_ALIGN),
    order=6,
)
