"""Variants of the einsum and einops exercises (see ``__init__``)."""
import einops
import torch
from einops import rearrange, reduce


def batched_bilinear_matmul(x, W, y):
    xW = (x @ W.transpose(0, 1).flatten(1)).unflatten(1, (W.shape[0], W.shape[2]))   # [B, O, J]
    return (xW * y[:, None, :]).sum(-1)


def batched_bilinear_broadcast(x, W, y):
    return (x[:, None, :, None] * W[None] * y[:, None, None, :]).sum((2, 3))


def batched_bilinear_half_loop(x, W, y):
    out = torch.empty(x.shape[0], W.shape[0], dtype=x.dtype)
    for b in range(x.shape[0]):
        out[b] = torch.einsum("i,oij,j->o", x[b], W, y[b])
    return out


def batched_bilinear_half_loop_o(x, W, y):
    out = torch.empty(x.shape[0], W.shape[0], dtype=x.dtype)
    for o in range(W.shape[0]):
        out[:, o] = torch.einsum("bi,ij,bj->b", x, W[o], y)
    return out


def batched_bilinear_half_loop_i(x, W, y):
    out = torch.zeros(x.shape[0], W.shape[0], dtype=x.dtype)
    for i in range(x.shape[1]):  # x[b, i] times the form's row i applied to y[b]
        out += x[:, i:i + 1] * (y @ W[:, i].T)
    return out


def batched_bilinear_half_loop_j(x, W, y):
    out = torch.zeros(x.shape[0], W.shape[0], dtype=x.dtype)
    for j in range(y.shape[1]):  # y[b, j] times the form's column j applied to x[b]
        out += y[:, j:j + 1] * (x @ W[:, :, j].T)
    return out


def patchify_rearrange(images, p):
    return rearrange(images, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)


def patchify_unflatten(images, p):
    B, C, H, W = images.shape
    blocks = images.unflatten(2, (H // p, p)).unflatten(4, (W // p, p))   # b c h p1 w p2
    return blocks.movedim(1, 5).transpose(2, 3).flatten(3).flatten(1, 2)


def patchify_half_loop(images, p):
    B, C, H, W = images.shape
    out = torch.empty(B, (H // p) * (W // p), p * p * C, dtype=images.dtype)
    for b in range(B):
        out[b] = images[b].reshape(C, H // p, p, W // p, p).permute(1, 3, 2, 4, 0).reshape(-1, p * p * C)
    return out


def patchify_half_loop_c(images, p):
    B, C, H, W = images.shape
    out = torch.empty(B, (H // p) * (W // p), p * p * C, dtype=images.dtype)
    for c in range(C):  # the channels are innermost in each patch: every C-th value of the token
        out[:, :, c::C] = images[:, c].reshape(B, H // p, p, W // p, p).permute(0, 1, 3, 2, 4) \
            .reshape(B, (H // p) * (W // p), p * p)
    return out


def patchify_half_loop_p1(images, p):
    B, C, H, W = images.shape
    nh, nw = H // p, W // p
    out = torch.empty(B, nh * nw, p * p * C, dtype=images.dtype)
    for i in range(p):  # one row of every patch at a time: a slice of p * C values of each token
        rows = images[:, :, i::p]                                             # b c h (w p2)
        out[:, :, i * p * C:(i + 1) * p * C] = rows.reshape(B, C, nh, nw, p).permute(0, 2, 3, 4, 1) \
            .reshape(B, nh * nw, p * C)
    return out


def patchify_half_loop_rows(images, p):
    B, C, H, W = images.shape
    nh, nw = H // p, W // p
    out = torch.empty(B, nh, nw, p * p * C, dtype=images.dtype)
    for h in range(nh):  # one row of patches at a time
        strip = images[:, :, h * p:(h + 1) * p]                              # b c p1 (w p2)
        out[:, h] = strip.reshape(B, C, p, nw, p).permute(0, 3, 2, 4, 1).reshape(B, nw, p * p * C)
    return out.reshape(B, nh * nw, p * p * C)


def patchify_half_loop_cols(images, p):
    B, C, H, W = images.shape
    nh, nw = H // p, W // p
    out = torch.empty(B, nh, nw, p * p * C, dtype=images.dtype)
    for w in range(nw):  # one column of patches at a time
        strip = images[:, :, :, w * p:(w + 1) * p]                           # b c (h p1) p2
        out[:, :, w] = strip.reshape(B, C, nh, p, p).permute(0, 2, 3, 4, 1).reshape(B, nh, p * p * C)
    return out.reshape(B, nh * nw, p * p * C)


def space_to_depth_rearrange(x, r):
    return rearrange(x, "b c (h h0) (w w0) -> b (h0 w0 c) h w", h0=r, w0=r)


def space_to_depth_unflatten(x, r):
    B, C, H, W = x.shape
    blocks = x.unflatten(3, (W // r, r)).unflatten(2, (H // r, r))     # b c h h0 w w0
    return blocks.movedim((3, 5), (1, 2)).flatten(1, 3)


def space_to_depth_half_loop(x, r):
    B, C, H, W = x.shape
    out = torch.empty(B, r * r * C, H // r, W // r, dtype=x.dtype)
    for b in range(B):
        out[b] = x[b].reshape(C, H // r, r, W // r, r).permute(2, 4, 0, 1, 3).reshape(r * r * C, H // r, W // r)
    return out


def space_to_depth_half_loop_c(x, r):
    B, C, H, W = x.shape
    out = torch.empty(B, r * r, C, H // r, W // r, dtype=x.dtype)
    for c in range(C):
        out[:, :, c] = x[:, c].reshape(B, H // r, r, W // r, r).permute(0, 2, 4, 1, 3).reshape(B, r * r, H // r, W // r)
    return out.reshape(B, r * r * C, H // r, W // r)


def space_to_depth_half_loop_h0(x, r):
    B, C, H, W = x.shape
    out = torch.empty(B, r * r * C, H // r, W // r, dtype=x.dtype)
    for i in range(r):  # one row of every block at a time: r * C output channels
        rows = x[:, :, i::r]                                                  # b c h (w w0)
        out[:, i * r * C:(i + 1) * r * C] = rows.reshape(B, C, H // r, W // r, r).permute(0, 4, 1, 2, 3) \
            .reshape(B, r * C, H // r, W // r)
    return out


def space_to_depth_half_loop_rows(x, r):
    B, C, H, W = x.shape
    out = torch.empty(B, r * r * C, H // r, W // r, dtype=x.dtype)
    for h in range(H // r):  # one output row: r input rows
        strip = x[:, :, h * r:(h + 1) * r]                                    # b c h0 (w w0)
        out[:, :, h] = strip.reshape(B, C, r, W // r, r).permute(0, 2, 4, 1, 3).reshape(B, r * r * C, W // r)
    return out


def space_to_depth_half_loop_cols(x, r):
    B, C, H, W = x.shape
    out = torch.empty(B, r * r * C, H // r, W // r, dtype=x.dtype)
    for w in range(W // r):  # one output column: r input columns
        strip = x[:, :, :, w * r:(w + 1) * r]                                 # b c (h h0) w0
        out[:, :, :, w] = strip.reshape(B, C, H // r, r, r).permute(0, 3, 4, 1, 2).reshape(B, r * r * C, H // r)
    return out


def channel_shuffle_rearrange(x, groups):
    return rearrange(x, "b (g c) h w -> b (c g) h w", g=groups)


def channel_shuffle_index(x, groups):
    C = x.shape[1]
    order = torch.arange(C).view(groups, C // groups).T.reshape(-1)
    return x[:, order]


def channel_shuffle_half_loop(x, groups):
    B, C, H, W = x.shape
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    for b in range(B):
        out[b] = x[b].reshape(groups, C // groups, H, W).transpose(0, 1).reshape(C, H, W)
    return out


def channel_shuffle_half_loop_c(x, groups):
    B, C, H, W = x.shape
    k = C // groups
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    for c in range(C):  # output channel c * groups + g comes from input channel g * k + c
        out[:, c] = x[:, (c % groups) * k + c // groups]
    return out


def channel_shuffle_half_loop_g(x, groups):
    B, C, H, W = x.shape
    k = C // groups
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    for g in range(groups):  # group g's channels go to every groups-th output channel, from g on
        out[:, g::groups] = x[:, g * k:(g + 1) * k]
    return out


def channel_shuffle_half_loop_k(x, groups):
    B, C, H, W = x.shape
    k = C // groups
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    for c in range(k):  # the c-th channel of every group, side by side
        out[:, c * groups:(c + 1) * groups] = x[:, c::k]
    return out


def channel_shuffle_half_loop_rows(x, groups):
    B, C, H, W = x.shape
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    for i in range(H):
        out[:, :, i] = x[:, :, i].reshape(B, groups, C // groups, W).transpose(1, 2).reshape(B, C, W)
    return out


def channel_shuffle_half_loop_cols(x, groups):
    B, C, H, W = x.shape
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    for j in range(W):
        out[:, :, :, j] = x[:, :, :, j].reshape(B, groups, C // groups, H).transpose(1, 2).reshape(B, C, H)
    return out


def max_pool_2x2_amax(x):
    B, C, H, W = x.shape
    return x.reshape(B, C, H // 2, 2, W // 2, 2).amax((3, 5))


def max_pool_2x2_maximum(x):
    return torch.maximum(torch.maximum(x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2]),
                         torch.maximum(x[:, :, 1::2, 0::2], x[:, :, 1::2, 1::2]))


def max_pool_2x2_half_loop(x):
    B, C, H, W = x.shape
    out = torch.empty(B, C, H // 2, W // 2, dtype=x.dtype)
    for b in range(B):
        out[b] = reduce(x[b], "c (h h0) (w w0) -> c h w", "max", h0=2, w0=2)
    return out


def max_pool_2x2_half_loop_c(x):
    B, C, H, W = x.shape
    out = torch.empty(B, C, H // 2, W // 2, dtype=x.dtype)
    for c in range(C):
        out[:, c] = x[:, c].reshape(B, H // 2, 2, W // 2, 2).amax((2, 4))
    return out


def max_pool_2x2_half_loop_rows(x):
    B, C, H, W = x.shape
    out = torch.empty(B, C, H // 2, W // 2, dtype=x.dtype)
    for i in range(H // 2):  # one output row: the max of two input rows, then of column pairs
        pair = torch.maximum(x[:, :, 2 * i], x[:, :, 2 * i + 1])
        out[:, :, i] = pair.reshape(B, C, W // 2, 2).amax(-1)
    return out


def max_pool_2x2_half_loop_cols(x):
    B, C, H, W = x.shape
    out = torch.empty(B, C, H // 2, W // 2, dtype=x.dtype)
    for j in range(W // 2):  # one output column: the max of two input columns, then of row pairs
        pair = torch.maximum(x[:, :, :, 2 * j], x[:, :, :, 2 * j + 1])
        out[:, :, :, j] = pair.reshape(B, C, H // 2, 2).amax(-1)
    return out


def batched_bilinear_lists(x, W, y):
    xs, ws, ys = x.tolist(), W.tolist(), y.tolist()
    rows = [[sum(a * w_ij * c for a, w_i in zip(xb, w, strict=True) for w_ij, c in zip(w_i, yb, strict=True)) for w in ws]
            for xb, yb in zip(xs, ys, strict=True)]
    return torch.tensor(rows, dtype=x.dtype).reshape(x.shape[0], W.shape[0])


__all__ = ["einops", "torch"]
