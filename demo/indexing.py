"""The demo class of ``indexing``: the standard students with one plausible wrong answer per exercise."""
from graders.course.personas import standard_class

WRONG = {
    # the row stride is the number of columns, not rows
    "select_pairs": "def select_pairs(a, idx):\n    return a.reshape(-1)[idx[:, 0] * a.shape[0] + idx[:, 1]]\n",
    # b is a copy: a is never changed
    "double_positive_": "def double_positive_(a):\n    b = a[a > 0]\n    b *= 2\n    return a\n",
    # <= instead of <
    "rows_with_small_sum": "def rows_with_small_sum(a, threshold):\n    return a[a.sum(1) <= threshold]\n",
    # the chapter's bug: padding ignored
    "conv2d_indexing": "def conv2d_indexing(img, filters, stride=1, padding=0):\n"
                       "    Cin, H, W = img.shape\n"
                       "    Cout, K = filters.shape[1], filters.shape[2]\n"
                       "    Hout, Wout = (H - K) // stride + 1, (W - K) // stride + 1\n"
                       "    rows = (torch.arange(Hout) * stride)[:, None, None, None] + torch.arange(K)[:, None]\n"
                       "    cols = (torch.arange(Wout) * stride)[:, None, None] + torch.arange(K)\n"
                       "    patches = img[:, rows, cols]\n"
                       "    return torch.einsum('chwij,coij->ohw', patches, filters)\n",
    # bool, not int64
    "one_hot": "def one_hot(labels, num_classes):\n    return labels[:, None] == torch.arange(num_classes)\n",
}


def roster(assignment):
    return standard_class(assignment, WRONG)
