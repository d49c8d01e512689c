"""Variants of the scatter exercises (see ``__init__``)."""
import torch


def index_reduce_rows_inplace(base, index, source, reduce, include_self=True):
    where = index.view(-1, 1).repeat(1, base.shape[1])
    return base.clone().scatter_reduce_(0, where, source, reduce=reduce, include_self=include_self)


def index_reduce_rows_sum_count(base, index, source, reduce, include_self=True):
    where = index[:, None].expand_as(source)
    if reduce != "mean":
        return base.scatter_reduce(0, where, source, reduce, include_self=include_self)
    sums = torch.zeros_like(base).index_add_(0, index, source)
    counts = torch.bincount(index, minlength=base.shape[0]).to(base.dtype)[:, None]
    if include_self:
        sums, counts = sums + base, counts + 1
    return torch.where(counts > 0, sums / counts.clamp(min=1), base)


def index_reduce_rows_half_loop(base, index, source, reduce, include_self=True):
    out = base.clone()
    for r in range(base.shape[0]):
        rows = source[index == r]
        if rows.shape[0] == 0:
            continue
        if include_self:
            rows = torch.cat([base[r:r + 1], rows])
        if reduce == "prod":
            out[r] = rows.prod(0)
        elif reduce == "mean":
            out[r] = rows.mean(0)
        elif reduce == "amax":
            out[r] = rows.amax(0)
        else:
            out[r] = rows.amin(0)
    return out


def index_reduce_rows_half_loop_d(base, index, source, reduce, include_self=True):
    out = base.clone()
    for d in range(base.shape[1]):
        out[:, d] = base[:, d].scatter_reduce(0, index, source[:, d], reduce, include_self=include_self)
    return out


def index_reduce_rows_half_loop_s(base, index, source, reduce, include_self=True):
    out = base.clone()
    counts = [int(include_self)] * base.shape[0]   # rows combined into each row so far
    for s, r in enumerate(index.tolist()):
        if counts[r] == 0:   # the first source row of a row that forgets its base value
            out[r] = source[s]
        elif reduce == "prod":
            out[r] *= source[s]
        elif reduce == "mean":
            out[r] += source[s]
        elif reduce == "amax":
            out[r] = torch.maximum(out[r], source[s])
        else:
            out[r] = torch.minimum(out[r], source[s])
        counts[r] += 1
    if reduce == "mean":
        out /= torch.tensor(counts, dtype=base.dtype).clamp(min=1)[:, None]
    return out


def reverse_unique_take(values, inverse):
    return torch.take(values, inverse)


def reverse_unique_gather(values, inverse):
    return values.gather(0, inverse.reshape(-1)).reshape(inverse.shape)


def reverse_unique_half_loop(values, inverse):
    if inverse.dim() < 2:
        return values[inverse]
    rows = inverse.flatten(1)
    out = torch.empty(rows.shape, dtype=values.dtype)
    for i in range(rows.shape[0]):
        out[i] = values[rows[i]]
    return out.reshape(inverse.shape)


def reverse_unique_half_loop_cols(values, inverse):
    if inverse.dim() < 2:
        return values[inverse]
    columns = inverse.flatten(1)
    out = torch.empty(columns.shape, dtype=values.dtype)
    for j in range(columns.shape[1]):
        out[:, j] = values[columns[:, j]]
    return out.reshape(inverse.shape)


def reverse_unique_half_loop_values(values, inverse):
    out = torch.empty(inverse.shape, dtype=values.dtype)
    for u in range(values.shape[0]):
        out[inverse == u] = values[u]
    return out


def segment_mean_one_hot(data, segment_ids, num_segments):
    member = (segment_ids[None, :] == torch.arange(num_segments)[:, None]).to(data.dtype)   # [S, N]
    return (member @ data) / member.sum(1, keepdim=True).clamp(min=1)


def segment_mean_scatter(data, segment_ids, num_segments):
    out = torch.zeros(num_segments, data.shape[1], dtype=data.dtype)
    return out.scatter_reduce(0, segment_ids[:, None].expand_as(data), data, "mean", include_self=False)


def segment_mean_half_loop(data, segment_ids, num_segments):
    out = torch.zeros(num_segments, data.shape[1], dtype=data.dtype)
    for s in range(num_segments):
        rows = data[segment_ids == s]
        if rows.shape[0] > 0:
            out[s] = rows.mean(0)
    return out


def segment_mean_half_loop_n(data, segment_ids, num_segments):
    sums = torch.zeros(num_segments, data.shape[1], dtype=data.dtype)
    counts = [0] * num_segments
    for i, s in enumerate(segment_ids.tolist()):
        sums[s] += data[i]
        counts[s] += 1
    return sums / torch.tensor(counts, dtype=data.dtype).clamp(min=1)[:, None]


def segment_mean_half_loop_d(data, segment_ids, num_segments):
    out = torch.zeros(num_segments, data.shape[1], dtype=data.dtype)
    counts = torch.bincount(segment_ids, minlength=num_segments).to(data.dtype).clamp(min=1)
    for d in range(data.shape[1]):
        out[:, d] = torch.zeros(num_segments, dtype=data.dtype).index_add_(0, segment_ids, data[:, d]) / counts
    return out


def confusion_matrix_bincount(pred, target, num_classes):
    return torch.bincount(target * num_classes + pred, minlength=num_classes ** 2).view(num_classes, num_classes)


def confusion_matrix_scatter_add(pred, target, num_classes):
    flat = torch.zeros(num_classes * num_classes, dtype=torch.int64)
    return flat.scatter_add_(0, target * num_classes + pred, torch.ones_like(pred)).view(num_classes, num_classes)


def confusion_matrix_half_loop(pred, target, num_classes):
    out = torch.zeros(num_classes, num_classes, dtype=torch.int64)
    for t in range(num_classes):
        out[t] = torch.bincount(pred[target == t], minlength=num_classes)
    return out


def confusion_matrix_half_loop_p(pred, target, num_classes):
    out = torch.zeros(num_classes, num_classes, dtype=torch.int64)
    for p in range(num_classes):
        out[:, p] = torch.bincount(target[pred == p], minlength=num_classes)
    return out


def confusion_matrix_half_loop_n(pred, target, num_classes):
    out = torch.zeros(num_classes, num_classes, dtype=torch.int64)
    for t, p in zip(target.tolist(), pred.tolist(), strict=True):
        out[t, p] += 1
    return out
