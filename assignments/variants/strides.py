"""Variants of the strides exercises (see ``__init__``)."""
import torch


def storage_offsets_matmul(indices, stride, storage_offset):
    return indices @ torch.tensor(stride, dtype=torch.int64) + storage_offset


def storage_offsets_tensordot(indices, stride, storage_offset):
    steps = torch.as_tensor(stride, dtype=torch.int64)
    return torch.tensordot(indices, steps, dims=1).add(storage_offset)


def storage_offsets_half_loop_k(indices, stride, storage_offset):
    steps = torch.tensor(stride, dtype=torch.int64)
    out = torch.empty(indices.shape[0], dtype=torch.int64)
    for k in range(indices.shape[0]):
        out[k] = storage_offset + (indices[k] * steps).sum()
    return out


def storage_offsets_half_loop_n(indices, stride, storage_offset):
    out = torch.full((indices.shape[0],), storage_offset, dtype=torch.int64)
    for n in range(indices.shape[1]):
        out += indices[:, n] * stride[n]
    return out


def contiguous_strides_shifted(shape):
    suffix = shape.flip(0).cumprod(0).flip(0)          # prod(shape[i:])
    return torch.cat([suffix[1:], torch.ones_like(shape[:1])])


def contiguous_strides_divide(shape):
    suffix = shape.flip(0).cumprod(0).flip(0)          # prod(shape[i:])
    return suffix // shape                             # exact: prod(shape[i + 1:])


def contiguous_strides_half_loop_n(shape):
    out = torch.empty(shape.shape[0], dtype=torch.int64)
    for i in range(shape.shape[0]):
        out[i] = shape[i + 1:].prod()
    return out


def permute_flat_as_strided(buffer, shape, perm):
    sizes = torch.tensor(shape, dtype=torch.int64)
    order = torch.tensor(perm, dtype=torch.int64)
    strides = torch.cat([sizes[1:], torch.ones_like(sizes[:1])]).flip(0).cumprod(0).flip(0)
    flat = buffer.contiguous()
    return flat.as_strided(torch.Size(sizes[order]), torch.Size(strides[order])).reshape(-1)


def permute_flat_digits(buffer, shape, perm):
    sizes = torch.tensor(shape, dtype=torch.int64)
    order = torch.tensor(perm, dtype=torch.int64)
    strides = torch.cat([sizes[1:], torch.ones_like(sizes[:1])]).flip(0).cumprod(0).flip(0)
    new_sizes = sizes[order]
    inner = torch.cat([new_sizes[1:], torch.ones_like(new_sizes[:1])]).flip(0).cumprod(0).flip(0)
    outer = inner * new_sizes
    q = torch.arange(buffer.shape[0])[:, None]
    return buffer[((q % outer) // inner * strides[order]).sum(1)]


def permute_flat_half_loop_first(buffer, shape, perm):
    sizes = torch.tensor(shape, dtype=torch.int64)
    order = torch.tensor(perm, dtype=torch.int64)
    strides = torch.cat([sizes[1:], torch.ones_like(sizes[:1])]).flip(0).cumprod(0).flip(0)
    new_sizes, new_strides = sizes[order], strides[order]
    place = torch.cat([new_sizes[1:], torch.ones_like(new_sizes[:1])]).flip(0).cumprod(0).flip(0)
    last = int(new_sizes[-1]) if new_sizes.shape[0] else 1
    out = torch.empty(buffer.shape[0], dtype=buffer.dtype)
    for j in range(last):  # one position of the result's last axis at a time
        q = torch.arange(j, buffer.shape[0], last)
        out[q] = buffer[(q[:, None] // place % new_sizes * new_strides).sum(1)]
    return out


def permute_flat_half_loop_outer(buffer, shape, perm):
    sizes = torch.tensor(shape, dtype=torch.int64)
    order = torch.tensor(perm, dtype=torch.int64)
    strides = torch.cat([sizes[1:], torch.ones_like(sizes[:1])]).flip(0).cumprod(0).flip(0)
    new_sizes, new_strides = sizes[order], strides[order]
    place = torch.cat([new_sizes[1:], torch.ones_like(new_sizes[:1])]).flip(0).cumprod(0).flip(0)
    axis = 0
    size, inner = int(new_sizes[axis]), int(place[axis])
    positions = torch.arange(buffer.shape[0])
    out = torch.empty(buffer.shape[0], dtype=buffer.dtype)
    for j in range(size):  # one position of the result's first axis at a time
        q = positions[positions // inner % size == j]
        out[q] = buffer[(q[:, None] // place % new_sizes * new_strides).sum(1)]
    return out


def permute_flat_half_loop_middle(buffer, shape, perm):
    sizes = torch.tensor(shape, dtype=torch.int64)
    order = torch.tensor(perm, dtype=torch.int64)
    strides = torch.cat([sizes[1:], torch.ones_like(sizes[:1])]).flip(0).cumprod(0).flip(0)
    new_sizes, new_strides = sizes[order], strides[order]
    place = torch.cat([new_sizes[1:], torch.ones_like(new_sizes[:1])]).flip(0).cumprod(0).flip(0)
    axis = min(1, len(shape) - 1)
    size, inner = int(new_sizes[axis]), int(place[axis])
    positions = torch.arange(buffer.shape[0])
    out = torch.empty(buffer.shape[0], dtype=buffer.dtype)
    for j in range(size):  # one position of the result's second axis at a time
        q = positions[positions // inner % size == j]
        out[q] = buffer[(q[:, None] // place % new_sizes * new_strides).sum(1)]
    return out


def sliding_windows_unfold(x, k):
    return x.unfold(0, k, 1)


def sliding_windows_strides(x, k):
    return torch.as_strided(x, (x.shape[0] - k + 1, k), x.stride() * 2, x.storage_offset())


def sliding_windows_half_loop_rows(x, k):
    rows = x.shape[0] - k + 1
    position = torch.empty(rows, k, dtype=torch.int64)
    for i in range(rows):
        position[i] = x.storage_offset() + (i + torch.arange(k)) * x.stride(0)
    col_stride = int(position[0, 1] - position[0, 0]) if k > 1 else x.stride(0)
    row_stride = int(position[1, 0] - position[0, 0]) if rows > 1 else x.stride(0)
    return x.as_strided((rows, k), (row_stride, col_stride), int(position[0, 0]))


def sliding_windows_half_loop_k(x, k):
    rows = x.shape[0] - k + 1
    position = torch.empty(rows, k, dtype=torch.int64)
    for j in range(k):
        position[:, j] = x.storage_offset() + (torch.arange(rows) + j) * x.stride(0)
    col_stride = int(position[0, 1] - position[0, 0]) if k > 1 else x.stride(0)
    row_stride = int(position[1, 0] - position[0, 0]) if rows > 1 else x.stride(0)
    return x.as_strided((rows, k), (row_stride, col_stride), int(position[0, 0]))


def nhwc_to_nchw_offsets_meshgrid(shape):
    N, H, W, C = shape
    n, c, h, w = torch.meshgrid(torch.arange(N) * (H * W * C), torch.arange(C), torch.arange(H) * (W * C),
                                torch.arange(W) * C, indexing="ij")
    return n + c + h + w


def nhwc_to_nchw_offsets_horner(shape):
    N, H, W, C = shape
    # ((n*H + h)*W + w)*C + c, each index on its own axis of [N, C, H, W]
    n, c, h, w = (torch.arange(N)[:, None, None, None], torch.arange(C)[:, None, None],
                  torch.arange(H)[:, None], torch.arange(W))
    return ((n * H + h) * W + w) * C + c


def nhwc_to_nchw_offsets_half_loop_h(shape):
    N, H, W, C = shape
    out = torch.empty(N, C, H, W, dtype=torch.int64)
    for h in range(H):  # one image row at a time
        out[:, :, h, :] = (torch.arange(N)[:, None, None] * (H * W * C) + torch.arange(C)[:, None]
                           + h * (W * C) + torch.arange(W) * C)
    return out


def nhwc_to_nchw_offsets_half_loop_w(shape):
    N, H, W, C = shape
    out = torch.empty(N, C, H, W, dtype=torch.int64)
    for w in range(W):  # one image column at a time
        out[:, :, :, w] = (torch.arange(N)[:, None, None] * (H * W * C) + torch.arange(C)[:, None]
                           + torch.arange(H) * (W * C) + w * C)
    return out


def permute_flat_lists(buffer, shape, perm):
    values, shape = buffer.tolist(), list(shape)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    new_shape, new_strides = [shape[p] for p in perm], [strides[p] for p in perm]
    out = []
    for q in range(len(values)):
        rest, source = q, 0
        for n in range(len(shape) - 1, -1, -1):
            source += rest % new_shape[n] * new_strides[n]
            rest //= new_shape[n]
        out.append(values[source])
    return torch.tensor(out, dtype=buffer.dtype)


def storage_offsets_lists(indices, stride, storage_offset):
    steps = list(stride)
    return torch.tensor([storage_offset + sum(i * s for i, s in zip(row, steps, strict=True)) for row in indices.tolist()],
                        dtype=torch.int64)


def contiguous_strides_lists(shape):
    out, product = [], 1
    for size in reversed(shape.tolist()):
        out.append(product)
        product *= size
    return torch.tensor(out[::-1], dtype=torch.int64)
