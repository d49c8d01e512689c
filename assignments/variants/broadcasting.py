"""Variants of the broadcasting exercises (see ``__init__``)."""
import torch


def batch_outer_einsum(a):
    return torch.einsum("bi,bj->bij", a, a)


def batch_outer_unsqueeze(a):
    return torch.mul(a.unsqueeze(2), a.unsqueeze(1))


def batch_outer_half_loop_b(a):
    out = torch.empty(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)
    for b in range(a.shape[0]):
        out[b] = torch.outer(a[b], a[b])
    return out


def batch_outer_half_loop_f(a):
    out = torch.empty(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype)
    for i in range(a.shape[1]):
        out[:, i] = a[:, i, None] * a
    return out


def pairwise_sq_dists_expanded(x, y):
    return (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * x @ y.T


def pairwise_sq_dists_cdist(x, y):
    return torch.cdist(x, y) ** 2


def pairwise_sq_dists_half_loop_n(x, y):
    out = torch.empty(x.shape[0], y.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = ((x[i] - y) ** 2).sum(1)
    return out


def pairwise_sq_dists_half_loop_m(x, y):
    out = torch.empty(x.shape[0], y.shape[0], dtype=x.dtype)
    for j in range(y.shape[0]):
        out[:, j] = ((x - y[j]) ** 2).sum(1)
    return out


def pairwise_sq_dists_half_loop_d(x, y):
    out = torch.zeros(x.shape[0], y.shape[0], dtype=x.dtype)
    for d in range(x.shape[1]):  # one coordinate at a time
        out += (x[:, d, None] - y[None, :, d]) ** 2
    return out


def standardize_columns_var(x, eps=1e-5):
    mean = x.mean(0)
    return (x - mean) / (x.var(0, unbiased=False).sqrt() + eps)


def standardize_columns_std_mean(x, eps=1e-5):
    std, mean = torch.std_mean(x, 0, correction=0, keepdim=True)
    return (x - mean) / (std + eps)


def standardize_columns_half_loop_d(x, eps=1e-5):
    out = torch.empty_like(x)
    for d in range(x.shape[1]):
        col = x[:, d]
        out[:, d] = (col - col.mean()) / (col.std(unbiased=False) + eps)
    return out


def standardize_columns_half_loop_n(x, eps=1e-5):
    total = torch.zeros(x.shape[1], dtype=x.dtype)
    for i in range(x.shape[0]):
        total += x[i]
    mean = total / x.shape[0]
    squares = torch.zeros_like(total)
    for i in range(x.shape[0]):
        squares += (x[i] - mean) ** 2
    return (x - mean) / ((squares / x.shape[0]).sqrt() + eps)


def softmax_rows_logsumexp(x):
    return torch.exp(x - torch.logsumexp(x, 1, keepdim=True))


def softmax_rows_divide_max(x):
    e = torch.exp(x - x.max(dim=1, keepdim=True).values)
    return e / torch.sum(e, dim=1, keepdim=True)


def softmax_rows_half_loop_n(x):
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        e = (x[i] - x[i].max()).exp()
        out[i] = e / e.sum()
    return out


def softmax_rows_half_loop_d(x):
    top = torch.full((x.shape[0],), float("-inf"), dtype=x.dtype)
    for j in range(x.shape[1]):
        top = torch.maximum(top, x[:, j])
    e = (x - top[:, None]).exp()
    total = torch.zeros_like(top)
    for j in range(x.shape[1]):
        total += e[:, j]
    return e / total[:, None]
