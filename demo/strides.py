"""The demo class of ``strides``: the standard students with one plausible wrong answer per exercise."""
from graders.course.personas import standard_class

WRONG = {
    # forgets the storage offset
    "storage_offsets": "def storage_offsets(indices, stride, storage_offset):\n"
                       "    return (indices * torch.tensor(stride)).sum(1)\n",
    # includes each axis's own size: off by one axis
    "contiguous_strides": "def contiguous_strides(shape):\n    return shape.flip(0).cumprod(0).flip(0)\n",
    # reads the permuted view with the source's own strides: the identity for every perm
    "permute_flat": "def permute_flat(buffer, shape, perm):\n    return buffer.clone()\n",
    # assumes x is contiguous and starts at the beginning of its storage
    "sliding_windows": "def sliding_windows(x, k):\n    return x.as_strided((x.shape[0] - k + 1, k), (1, 1))\n",
    # NHWC strides read in NCHW order: the offsets of a contiguous NCHW tensor
    "nhwc_to_nchw_offsets": "def nhwc_to_nchw_offsets(shape):\n"
                            "    N, H, W, C = shape\n"
                            "    return torch.arange(N * C * H * W).view(N, C, H, W)\n",
}


def roster(assignment):
    return standard_class(assignment, WRONG)
