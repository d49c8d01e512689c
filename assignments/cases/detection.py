"""Input generators of the detection assignment's hidden cases (moved out to keep the file short)."""
import torch

from graders.model.inputs import lay_out, rand, randint


def _boxes(gen, n, dtype=torch.float32, low=-5.0, span=10.0, side=6.0, layout="contiguous"):
    """``n`` random boxes (x1, y1, x2, y2): corners uniform in [low, low + span), sides in [0, side)."""
    x1 = rand(gen, n, dtype=torch.float64, low=low, scale=span)
    y1 = rand(gen, n, dtype=torch.float64, low=low, scale=span)
    w = rand(gen, n, dtype=torch.float64, low=0.0, scale=side)
    h = rand(gen, n, dtype=torch.float64, low=0.0, scale=side)
    return lay_out(torch.stack([x1, y1, x1 + w, y1 + h], 1).to(dtype), layout)


def _grid_boxes(gen, n, grid=6, side=4, dtype=torch.float32, min_side=1):
    """``n`` boxes with integer corners in [0, grid) and integer sides in [min_side, side]:
    many IoUs are exactly equal, which tests the tie rules."""
    x1 = randint(gen, 0, grid, n)
    y1 = randint(gen, 0, grid, n)
    w = randint(gen, min_side, side + 1, n)
    h = randint(gen, min_side, side + 1, n)
    return torch.stack([x1, y1, x1 + w, y1 + h], 1).to(dtype)


def _nested(gen, n, dtype=torch.float32):
    """Pairs (outer[i], inner[i]) with inner[i] strictly inside outer[i]."""
    outer = _boxes(gen, n, dtype=torch.float64, side=8.0) + torch.tensor([0.0, 0.0, 2.0, 2.0], dtype=torch.float64)
    w = outer[:, 2] - outer[:, 0]
    h = outer[:, 3] - outer[:, 1]
    f = rand(gen, n, 4, dtype=torch.float64, low=0.05, scale=0.4)
    inner = torch.stack([outer[:, 0] + f[:, 0] * w, outer[:, 1] + f[:, 1] * h,
                         outer[:, 2] - f[:, 2] * w, outer[:, 3] - f[:, 3] * h], 1)
    return outer.to(dtype), inner.to(dtype)


def _degenerate(gen, n, dtype=torch.float32):
    """Zero-area boxes: points and horizontal and vertical segments, on a small integer grid."""
    b = _grid_boxes(gen, n, grid=4, side=2, dtype=torch.float64, min_side=0)
    kind = randint(gen, 0, 3, n)
    b[:, 2] = torch.where(kind != 2, b[:, 0], b[:, 2])   # kinds 0, 1: zero width
    b[:, 3] = torch.where(kind != 1, b[:, 1], b[:, 3])   # kinds 0, 2: zero height
    return b.to(dtype)


def _roi_boxes(gen, N, H, W, dtype=torch.float32, margin=3.0, side=None, layout="contiguous"):
    """Boxes whose corners lie up to ``margin`` pixels outside the map: many cross the border."""
    side = max(H, W) / 2 + 1 if side is None else side
    x1 = rand(gen, N, dtype=torch.float64, low=-margin, scale=W + margin)
    y1 = rand(gen, N, dtype=torch.float64, low=-margin, scale=H + margin)
    w = rand(gen, N, dtype=torch.float64, low=0.0, scale=side)
    h = rand(gen, N, dtype=torch.float64, low=0.0, scale=side)
    return lay_out(torch.stack([x1, y1, x1 + w, y1 + h], 1).to(dtype), layout)
