"""Variants of the indexing exercises (see ``__init__``)."""
import torch


def select_pairs_unbind(a, idx):
    return a[idx.unbind(1)]


def select_pairs_take(a, idx):
    return torch.take(a, idx[:, 0] * a.shape[1] + idx[:, 1])


def select_pairs_half_loop(a, idx):
    out = torch.empty(idx.shape[0], dtype=a.dtype)
    for i in range(a.shape[0]):
        here = idx[:, 0] == i
        out[here] = a[i][idx[here, 1]]
    return out


def select_pairs_half_loop_cols(a, idx):
    out = torch.empty(idx.shape[0], dtype=a.dtype)
    for j in range(a.shape[1]):
        here = idx[:, 1] == j
        out[here] = a[:, j][idx[here, 0]]
    return out


def select_pairs_half_loop_k(a, idx):
    out = torch.empty(idx.shape[0], dtype=a.dtype)
    for k in range(idx.shape[0]):
        out[k] = a[tuple(idx[k])]
    return out


def double_positive__where(a):
    a.copy_(torch.where(a > 0, a * 2, a))
    return a


def double_positive__mul(a):
    return a.mul_(1 + (a > 0).to(a.dtype))


def double_positive__half_loop(a):
    for i in range(a.shape[0]):
        row = a[i]
        row[row > 0] *= 2
    return a


def double_positive__half_loop_cols(a):
    for j in range(a.shape[1]):
        col = a[:, j]
        col[col > 0] *= 2
    return a


def rows_with_small_sum_nonzero(a, threshold):
    return a.index_select(0, torch.nonzero(a.sum(dim=1) < threshold)[:, 0])


def rows_with_small_sum_where(a, threshold):
    (rows,) = torch.where(a.sum(1) < threshold)
    return a[rows]


def rows_with_small_sum_half_loop(a, threshold):
    keep = torch.zeros(a.shape[0], dtype=torch.bool)
    for i in range(a.shape[0]):
        keep[i] = a[i].sum() < threshold
    return a[keep]


def rows_with_small_sum_half_loop_cols(a, threshold):
    sums = torch.zeros(a.shape[0], dtype=a.dtype)
    for j in range(a.shape[1]):
        sums += a[:, j]
    return a[sums < threshold]


def conv2d_indexing_as_strided(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    K = filters.shape[2]
    padded = torch.nn.functional.pad(img, (padding, padding, padding, padding))
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    s0, s1, s2 = padded.stride()
    patches = padded.as_strided((Hout, Wout, Cin, K, K), (s1 * stride, s2 * stride, s0, s1, s2))
    weights = filters.movedim(1, 3).reshape(Cin * K * K, -1)                 # [(c i j), Cout]
    return (patches.reshape(Hout * Wout, Cin * K * K) @ weights).T.reshape(-1, Hout, Wout)


def conv2d_indexing_gather(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    K = filters.shape[2]
    padded = torch.zeros(Cin, H + 2 * padding, W + 2 * padding, dtype=img.dtype)
    padded[:, padding:padding + H, padding:padding + W] = img
    rows = torch.arange(0, H + 2 * padding - K + 1, stride)[:, None] + torch.arange(K)    # [Hout, K]
    cols = torch.arange(0, W + 2 * padding - K + 1, stride)[:, None] + torch.arange(K)    # [Wout, K]
    patches = padded[:, rows[:, None, :, None], cols[None, :, None, :]]                   # [Cin, Hout, Wout, K, K]
    return torch.tensordot(filters, patches, dims=([0, 2, 3], [0, 3, 4]))


def conv2d_indexing_half_loop(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    K = filters.shape[2]
    padded = torch.nn.functional.pad(img, (padding, padding, padding, padding))
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    cols = (torch.arange(Wout) * stride)[:, None] + torch.arange(K)                        # [Wout, K]
    out = torch.empty(filters.shape[1], Hout, Wout, dtype=img.dtype)
    for y in range(Hout):
        band = padded[:, y * stride:y * stride + K]                                        # [Cin, K, W + 2p]
        out[:, y] = torch.einsum("cixj,coij->ox", band[:, :, cols], filters)
    return out


def conv2d_indexing_half_loop_x(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    K = filters.shape[2]
    padded = torch.nn.functional.pad(img, (padding, padding, padding, padding))
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    rows = (torch.arange(Hout) * stride)[:, None] + torch.arange(K)                        # [Hout, K]
    out = torch.empty(filters.shape[1], Hout, Wout, dtype=img.dtype)
    for x in range(Wout):
        band = padded[:, :, x * stride:x * stride + K]                                     # [Cin, H + 2p, K]
        out[:, :, x] = torch.einsum("cyij,coij->oy", band[:, rows], filters)
    return out


def conv2d_indexing_half_loop_c(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    K = filters.shape[2]
    padded = torch.nn.functional.pad(img, (padding, padding, padding, padding))
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    rows = (torch.arange(Hout) * stride)[:, None, None, None] + torch.arange(K)[:, None]    # [Hout, 1, K, 1]
    cols = (torch.arange(Wout) * stride)[:, None, None] + torch.arange(K)                    # [Wout, 1, K]
    out = torch.zeros(filters.shape[1], Hout, Wout, dtype=img.dtype)
    for c in range(Cin):  # one input channel at a time
        out += torch.einsum("yxij,oij->oyx", padded[c][rows, cols], filters[c])
    return out


def conv2d_indexing_half_loop_o(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    Cout, K = filters.shape[1], filters.shape[2]
    padded = torch.nn.functional.pad(img, (padding, padding, padding, padding))
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    rows = (torch.arange(Hout) * stride)[:, None, None, None] + torch.arange(K)[:, None]    # [Hout, 1, K, 1]
    cols = (torch.arange(Wout) * stride)[:, None, None] + torch.arange(K)                    # [Wout, 1, K]
    patches = padded[:, rows, cols]                                                          # [Cin, Hout, Wout, K, K]
    out = torch.empty(Cout, Hout, Wout, dtype=img.dtype)
    for o in range(Cout):  # one output channel at a time
        out[o] = torch.einsum("cyxij,cij->yx", patches, filters[:, o])
    return out


def conv2d_indexing_half_loop_taps(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    K = filters.shape[2]
    padded = torch.nn.functional.pad(img, (padding, padding, padding, padding))
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1
    cols = (torch.arange(Wout) * stride)[:, None] + torch.arange(K)                          # [Wout, K]
    out = torch.zeros(filters.shape[1], Hout, Wout, dtype=img.dtype)
    for i in range(K):  # one row of kernel taps at a time
        band = padded[:, (torch.arange(Hout) * stride + i)[:, None, None], cols]             # [Cin, Hout, Wout, K]
        out += torch.einsum("cyxj,coj->oyx", band, filters[:, :, i])
    return out


def one_hot_compare(labels, num_classes):
    return (labels[:, None] == torch.arange(num_classes)).long()


def one_hot_scatter(labels, num_classes):
    out = torch.zeros(labels.shape[0], num_classes, dtype=torch.int64)
    return out.scatter_(1, labels[:, None], 1)


def one_hot_half_loop(labels, num_classes):
    out = torch.zeros(labels.shape[0], num_classes, dtype=torch.int64)
    classes = torch.arange(num_classes)
    for n in range(labels.shape[0]):
        out[n] = (classes == labels[n]).long()
    return out


def one_hot_half_loop_c(labels, num_classes):
    out = torch.empty(labels.shape[0], num_classes, dtype=torch.int64)
    for c in range(num_classes):  # one class (one column) at a time
        out[:, c] = labels == c
    return out


def conv2d_indexing_lists(img, filters, stride=1, padding=0):
    Cin, H, W = img.shape
    Cout, K = filters.shape[1], filters.shape[2]
    x, f = img.tolist(), filters.tolist()
    Hout = (H + 2 * padding - K) // stride + 1
    Wout = (W + 2 * padding - K) // stride + 1

    def pixel(c, y, z):  # zero outside the image: the padding
        return x[c][y][z] if 0 <= y < H and 0 <= z < W else 0

    out = [[[sum(f[c][o][i][j] * pixel(c, r * stride + i - padding, q * stride + j - padding)
                 for c in range(Cin) for i in range(K) for j in range(K))
             for q in range(Wout)] for r in range(Hout)] for o in range(Cout)]
    return torch.tensor(out, dtype=img.dtype).reshape(Cout, Hout, Wout)
