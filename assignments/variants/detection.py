"""Variants of the detection exercises (see ``__init__``)."""
import torch


def box_iou_corners(boxes1, boxes2):
    lt = torch.max(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    return torch.nan_to_num(inter / (area1[:, None] + area2 - inter), nan=0.0)


def box_iou_prod(boxes1, boxes2):
    inter = (torch.minimum(boxes1[:, None, 2:], boxes2[:, 2:]) - torch.maximum(boxes1[:, None, :2], boxes2[:, :2]))
    inter = inter.clamp(min=0).prod(-1)
    union = (boxes1[:, 2:] - boxes1[:, :2]).prod(1)[:, None] + (boxes2[:, 2:] - boxes2[:, :2]).prod(1) - inter
    return torch.where(union > 0, inter / union, 0.0)


def box_iou_half_loop(boxes1, boxes2):
    out = torch.zeros(boxes1.shape[0], boxes2.shape[0], dtype=boxes1.dtype)
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    for i in range(boxes1.shape[0]):
        b = boxes1[i]
        w = (torch.minimum(b[2], boxes2[:, 2]) - torch.maximum(b[0], boxes2[:, 0])).clamp(min=0)
        h = (torch.minimum(b[3], boxes2[:, 3]) - torch.maximum(b[1], boxes2[:, 1])).clamp(min=0)
        inter = w * h
        union = (b[2] - b[0]) * (b[3] - b[1]) + area2 - inter
        out[i] = torch.where(union > 0, inter / union, 0.0)
    return out


def box_iou_half_loop_m(boxes1, boxes2):
    out = torch.zeros(boxes1.shape[0], boxes2.shape[0], dtype=boxes1.dtype)
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    for j in range(boxes2.shape[0]):
        b = boxes2[j]
        w = (torch.minimum(boxes1[:, 2], b[2]) - torch.maximum(boxes1[:, 0], b[0])).clamp(min=0)
        h = (torch.minimum(boxes1[:, 3], b[3]) - torch.maximum(boxes1[:, 1], b[1])).clamp(min=0)
        inter = w * h
        union = area1 + (b[2] - b[0]) * (b[3] - b[1]) - inter
        out[:, j] = torch.where(union > 0, inter / union, 0.0)
    return out


def match_anchors_argmax(anchors, gt, threshold):
    if gt.shape[0] == 0:
        return torch.full((anchors.shape[0],), -1, dtype=torch.int64)
    lt = torch.max(anchors[:, None, :2], gt[:, :2])
    rb = torch.min(anchors[:, None, 2:], gt[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    union = (anchors[:, 2:] - anchors[:, :2]).prod(1)[:, None] + (gt[:, 2:] - gt[:, :2]).prod(1) - inter
    iou = torch.where(union > 0, inter / union, 0.0)
    best = iou.amax(1)
    return torch.where(best >= threshold, iou.argmax(1), -1)


def match_anchors_stable_sort(anchors, gt, threshold):
    N, M = anchors.shape[0], gt.shape[0]
    if M == 0:
        return torch.full((N,), -1, dtype=torch.int64)
    w = (torch.minimum(anchors[:, None, 2], gt[:, 2]) - torch.maximum(anchors[:, None, 0], gt[:, 0])).clamp(min=0)
    h = (torch.minimum(anchors[:, None, 3], gt[:, 3]) - torch.maximum(anchors[:, None, 1], gt[:, 1])).clamp(min=0)
    inter = w * h
    union = ((anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1]))[:, None] \
        + (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1]) - inter
    iou = torch.where(union > 0, inter / union, torch.zeros_like(inter))
    values, order = torch.sort(iou, dim=1, descending=True, stable=True)
    return torch.where(values[:, 0] >= threshold, order[:, 0], torch.full_like(order[:, 0], -1))


def match_anchors_half_loop(anchors, gt, threshold):
    out = torch.full((anchors.shape[0],), -1, dtype=torch.int64)
    if gt.shape[0] == 0:
        return out
    area_g = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
    for i in range(anchors.shape[0]):
        a = anchors[i]
        w = (torch.minimum(a[2], gt[:, 2]) - torch.maximum(a[0], gt[:, 0])).clamp(min=0)
        h = (torch.minimum(a[3], gt[:, 3]) - torch.maximum(a[1], gt[:, 1])).clamp(min=0)
        union = (a[2] - a[0]) * (a[3] - a[1]) + area_g - w * h
        iou = torch.where(union > 0, w * h / union, 0.0)
        if iou.max() >= threshold:
            out[i] = iou.argmax()
    return out


def match_anchors_half_loop_m(anchors, gt, threshold):
    N = anchors.shape[0]
    best = torch.full((N,), -1.0, dtype=anchors.dtype)
    first = torch.full((N,), -1, dtype=torch.int64)
    area_a = (anchors[:, 2] - anchors[:, 0]) * (anchors[:, 3] - anchors[:, 1])
    for j in range(gt.shape[0]):
        g = gt[j]
        w = (torch.minimum(anchors[:, 2], g[2]) - torch.maximum(anchors[:, 0], g[0])).clamp(min=0)
        h = (torch.minimum(anchors[:, 3], g[3]) - torch.maximum(anchors[:, 1], g[1])).clamp(min=0)
        union = area_a + (g[2] - g[0]) * (g[3] - g[1]) - w * h
        iou = torch.where(union > 0, w * h / union, 0.0)
        better = iou > best            # strictly: the first of equal IoUs stays
        best = torch.where(better, iou, best)
        first = torch.where(better, j, first)
    return torch.where(best >= threshold, first, -1)


def roi_align_separable(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    ys = (boxes[:, 1, None] - 0.5) + centres * ((boxes[:, 3] - boxes[:, 1]) / n)[:, None]
    xs = (boxes[:, 0, None] - 0.5) + centres * ((boxes[:, 2] - boxes[:, 0]) / n)[:, None]

    def weights(coords, size):               # [N, n] coordinates -> [N, n, size] weights, 0 outside
        inside = (coords >= -1) & (coords <= size)
        coords = coords.clamp(min=0)
        low = coords.floor().clamp(max=size - 1)
        frac = (coords - low) * (low < size - 1)
        low = low.long()
        high = (low + 1).clamp(max=size - 1)
        grid = torch.arange(size)
        both = (grid == low[..., None]) * (1 - frac)[..., None] + (grid == high[..., None]) * frac[..., None]
        return (both * inside[..., None]).to(features.dtype)
    wy, wx = weights(ys, H), weights(xs, W)
    return torch.einsum("nyh,chw,nxw->ncyx", wy, features, wx)


def roi_align_flat_take(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    ys = (boxes[:, 1, None] - 0.5) + centres * ((boxes[:, 3] - boxes[:, 1]) / n)[:, None]     # [N, n]
    xs = (boxes[:, 0, None] - 0.5) + centres * ((boxes[:, 2] - boxes[:, 0]) / n)[:, None]
    inside = (((ys >= -1) & (ys <= H))[:, :, None] & ((xs >= -1) & (xs <= W))[:, None, :])[:, None]
    ys, xs = ys.clamp(min=0), xs.clamp(min=0)
    y0, x0 = ys.floor().clamp(max=H - 1), xs.floor().clamp(max=W - 1)
    ly, lx = (ys - y0) * (y0 < H - 1), (xs - x0) * (x0 < W - 1)
    y0, x0 = y0.long(), x0.long()
    y1, x1 = (y0 + 1).clamp(max=H - 1), (x0 + 1).clamp(max=W - 1)
    flat = features.reshape(C, H * W)

    def corner(rows, cols):                                   # [N, C, n, n]
        return flat[:, (rows[:, :, None] * W + cols[:, None, :])].transpose(0, 1)
    ly, lx = ly[:, None, :, None], lx[:, None, None, :]
    value = ((1 - ly) * ((1 - lx) * corner(y0, x0) + lx * corner(y0, x1))
             + ly * ((1 - lx) * corner(y1, x0) + lx * corner(y1, x1)))
    return value * inside


def roi_align_half_loop(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    out = torch.zeros(boxes.shape[0], C, n, n, dtype=features.dtype)
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    for i in range(boxes.shape[0]):
        x1, y1, x2, y2 = boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3]
        ys = y1 - 0.5 + centres * (y2 - y1) / n
        xs = x1 - 0.5 + centres * (x2 - x1) / n
        inside = ((ys >= -1) & (ys <= H))[:, None] & ((xs >= -1) & (xs <= W))[None, :]
        ys, xs = ys.clamp(min=0), xs.clamp(min=0)
        y0, x0 = ys.floor().clamp(max=H - 1), xs.floor().clamp(max=W - 1)
        ly, lx = ((ys - y0) * (y0 < H - 1))[:, None], ((xs - x0) * (x0 < W - 1))[None, :]
        y0, x0 = y0.long(), x0.long()
        y1_, x1_ = (y0 + 1).clamp(max=H - 1), (x0 + 1).clamp(max=W - 1)
        value = ((1 - ly) * (1 - lx) * features[:, y0[:, None], x0[None, :]]
                 + (1 - ly) * lx * features[:, y0[:, None], x1_[None, :]]
                 + ly * (1 - lx) * features[:, y1_[:, None], x0[None, :]]
                 + ly * lx * features[:, y1_[:, None], x1_[None, :]])
        out[i] = value * inside
    return out


def roi_align_half_loop_y(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    out = torch.zeros(boxes.shape[0], C, n, n, dtype=features.dtype)
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    xs = boxes[:, 0, None] - 0.5 + centres * (boxes[:, 2] - boxes[:, 0])[:, None] / n             # [N, n]
    x_inside = (xs >= -1) & (xs <= W)
    xs = xs.clamp(min=0)
    x0 = xs.floor().clamp(max=W - 1)
    lx = (xs - x0) * (x0 < W - 1)
    x0 = x0.long()
    x1_ = (x0 + 1).clamp(max=W - 1)
    for r in range(n):  # one output row of every box at a time
        ys = boxes[:, 1] - 0.5 + (r + 0.5) * (boxes[:, 3] - boxes[:, 1]) / n                      # [N]
        inside = ((ys >= -1) & (ys <= H))[:, None] & x_inside
        ys = ys.clamp(min=0)
        y0 = ys.floor().clamp(max=H - 1)
        ly = ((ys - y0) * (y0 < H - 1))[:, None]
        y0 = y0.long()[:, None]
        y1_ = (y0 + 1).clamp(max=H - 1)
        value = ((1 - ly) * (1 - lx) * features[:, y0, x0] + (1 - ly) * lx * features[:, y0, x1_]
                 + ly * (1 - lx) * features[:, y1_, x0] + ly * lx * features[:, y1_, x1_])         # [C, N, n]
        out[:, :, r] = (value * inside).transpose(0, 1)
    return out


def roi_align_half_loop_x(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    out = torch.zeros(boxes.shape[0], C, n, n, dtype=features.dtype)
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    ys = boxes[:, 1, None] - 0.5 + centres * (boxes[:, 3] - boxes[:, 1])[:, None] / n             # [N, n]
    y_inside = (ys >= -1) & (ys <= H)
    ys = ys.clamp(min=0)
    y0 = ys.floor().clamp(max=H - 1)
    ly = (ys - y0) * (y0 < H - 1)
    y0 = y0.long()
    y1_ = (y0 + 1).clamp(max=H - 1)
    for c in range(n):  # one output column of every box at a time
        xs = boxes[:, 0] - 0.5 + (c + 0.5) * (boxes[:, 2] - boxes[:, 0]) / n                      # [N]
        inside = y_inside & ((xs >= -1) & (xs <= W))[:, None]
        xs = xs.clamp(min=0)
        x0 = xs.floor().clamp(max=W - 1)
        lx = ((xs - x0) * (x0 < W - 1))[:, None]
        x0 = x0.long()[:, None]
        x1_ = (x0 + 1).clamp(max=W - 1)
        value = ((1 - ly) * (1 - lx) * features[:, y0, x0] + (1 - ly) * lx * features[:, y0, x1_]
                 + ly * (1 - lx) * features[:, y1_, x0] + ly * lx * features[:, y1_, x1_])         # [C, N, n]
        out[:, :, :, c] = (value * inside).transpose(0, 1)
    return out


def box_iou_lists(boxes1, boxes2):
    def iou(p, q):
        w = max(min(p[2], q[2]) - max(p[0], q[0]), 0)
        h = max(min(p[3], q[3]) - max(p[1], q[1]), 0)
        union = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - w * h
        return w * h / union if union > 0 else 0.0

    rows = [[iou(p, q) for q in boxes2.tolist()] for p in boxes1.tolist()]
    return torch.tensor(rows, dtype=boxes1.dtype).reshape(boxes1.shape[0], boxes2.shape[0])


def match_anchors_lists(anchors, gt, threshold):
    def iou(p, q):
        w = max(min(p[2], q[2]) - max(p[0], q[0]), 0)
        h = max(min(p[3], q[3]) - max(p[1], q[1]), 0)
        union = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - w * h
        return w * h / union if union > 0 else 0.0

    truths, out = gt.tolist(), []
    for p in anchors.tolist():
        ious = [iou(p, q) for q in truths]
        best = max(ious, default=-1.0)
        out.append(ious.index(best) if truths and best >= threshold else -1)
    return torch.tensor(out, dtype=torch.int64)


def roi_align_half_loop_c(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    ys = (boxes[:, 1, None] - 0.5) + centres * ((boxes[:, 3] - boxes[:, 1]) / n)[:, None]
    xs = (boxes[:, 0, None] - 0.5) + centres * ((boxes[:, 2] - boxes[:, 0]) / n)[:, None]
    inside = ((ys >= -1) & (ys <= H))[:, :, None] & ((xs >= -1) & (xs <= W))[:, None, :]
    ys, xs = ys.clamp(min=0), xs.clamp(min=0)
    y0, x0 = ys.floor().clamp(max=H - 1), xs.floor().clamp(max=W - 1)
    ly, lx = ((ys - y0) * (y0 < H - 1))[:, :, None], ((xs - x0) * (x0 < W - 1))[:, None, :]
    y0, x0 = y0.long(), x0.long()
    y1, x1 = (y0 + 1).clamp(max=H - 1), (x0 + 1).clamp(max=W - 1)
    r0, r1, c0, c1 = y0[:, :, None], y1[:, :, None], x0[:, None, :], x1[:, None, :]
    out = torch.zeros(boxes.shape[0], C, n, n, dtype=features.dtype)
    for c in range(C):  # one channel of the feature map at a time
        f = features[c]
        value = ((1 - ly) * (1 - lx) * f[r0, c0] + (1 - ly) * lx * f[r0, c1]
                 + ly * (1 - lx) * f[r1, c0] + ly * lx * f[r1, c1])
        out[:, c] = value * inside
    return out


def roi_align_half_loop_rows(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    ys = (boxes[:, 1, None] - 0.5) + centres * ((boxes[:, 3] - boxes[:, 1]) / n)[:, None]
    xs = (boxes[:, 0, None] - 0.5) + centres * ((boxes[:, 2] - boxes[:, 0]) / n)[:, None]

    def weights(coords, size):               # [N, n] coordinates -> [N, n, size] weights, 0 outside
        inside = (coords >= -1) & (coords <= size)
        coords = coords.clamp(min=0)
        low = coords.floor().clamp(max=size - 1)
        frac = (coords - low) * (low < size - 1)
        low = low.long()
        high = (low + 1).clamp(max=size - 1)
        grid = torch.arange(size)
        both = (grid == low[..., None]) * (1 - frac)[..., None] + (grid == high[..., None]) * frac[..., None]
        return (both * inside[..., None]).to(features.dtype)
    wy, wx = weights(ys, H), weights(xs, W)
    out = torch.zeros(boxes.shape[0], C, n, n, dtype=features.dtype)
    for r in range(H):  # one row of the feature map at a time
        out += torch.einsum("ny,cw,nxw->ncyx", wy[:, :, r], features[:, r], wx)
    return out


def roi_align_half_loop_cols(features, boxes, output_size):
    C, H, W = features.shape
    n = output_size
    centres = torch.arange(n, dtype=boxes.dtype) + 0.5
    ys = (boxes[:, 1, None] - 0.5) + centres * ((boxes[:, 3] - boxes[:, 1]) / n)[:, None]
    xs = (boxes[:, 0, None] - 0.5) + centres * ((boxes[:, 2] - boxes[:, 0]) / n)[:, None]

    def weights(coords, size):               # [N, n] coordinates -> [N, n, size] weights, 0 outside
        inside = (coords >= -1) & (coords <= size)
        coords = coords.clamp(min=0)
        low = coords.floor().clamp(max=size - 1)
        frac = (coords - low) * (low < size - 1)
        low = low.long()
        high = (low + 1).clamp(max=size - 1)
        grid = torch.arange(size)
        both = (grid == low[..., None]) * (1 - frac)[..., None] + (grid == high[..., None]) * frac[..., None]
        return (both * inside[..., None]).to(features.dtype)
    wy, wx = weights(ys, H), weights(xs, W)
    out = torch.zeros(boxes.shape[0], C, n, n, dtype=features.dtype)
    for q in range(W):  # one column of the feature map at a time
        out += torch.einsum("nyh,ch,nx->ncyx", wy, features[:, :, q], wx[:, :, q])
    return out


def roi_align_lists(features, boxes, output_size):
    C, H, W = features.shape
    f, n = features.tolist(), output_size

    def sample(c, y, x):  # bilinear, zero outside [-1, H] x [-1, W], clamped at the last row and column
        if y < -1 or y > H or x < -1 or x > W:
            return 0.0
        y, x = max(y, 0.0), max(x, 0.0)
        y0, x0 = min(int(y), H - 1), min(int(x), W - 1)
        ly = y - y0 if y0 < H - 1 else 0.0
        lx = x - x0 if x0 < W - 1 else 0.0
        y1, x1 = min(y0 + 1, H - 1), min(x0 + 1, W - 1)
        return (f[c][y0][x0] * (1 - ly) * (1 - lx) + f[c][y0][x1] * (1 - ly) * lx
                + f[c][y1][x0] * ly * (1 - lx) + f[c][y1][x1] * ly * lx)

    out = []
    for left, top, right, bottom in boxes.tolist():
        ys = [top - 0.5 + (i + 0.5) * ((bottom - top) / n) for i in range(n)]
        xs = [left - 0.5 + (j + 0.5) * ((right - left) / n) for j in range(n)]
        out.append([[[sample(c, y, x) for x in xs] for y in ys] for c in range(C)])
    return torch.tensor(out, dtype=features.dtype).reshape(len(out), C, n, n)
