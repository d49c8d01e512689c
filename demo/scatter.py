"""The demo class of ``scatter``: the standard students with one plausible wrong answer per exercise."""
from graders.course.personas import standard_class

WRONG = {
    # ignores include_self
    "index_reduce_rows": "def index_reduce_rows(base, index, source, reduce, include_self=True):\n"
                         "    where = index[:, None].expand(-1, base.shape[1])\n"
                         "    return base.scatter_reduce(0, where, source, reduce)\n",
    # loses a's shape
    "reverse_unique": "def reverse_unique(values, inverse):\n    return values[inverse.reshape(-1)]\n",
    # advanced-index += drops repeated segments
    "segment_mean": "def segment_mean(data, segment_ids, num_segments):\n"
                    "    sums = torch.zeros(num_segments, data.shape[1], dtype=data.dtype)\n"
                    "    sums[segment_ids] += data\n"
                    "    counts = torch.bincount(segment_ids, minlength=num_segments).to(data.dtype)\n"
                    "    return sums / counts.clamp(min=1)[:, None]\n",
    # advanced-index += counts a repeated pair once
    "confusion_matrix": "def confusion_matrix(pred, target, num_classes):\n"
                        "    out = torch.zeros(num_classes, num_classes, dtype=torch.int64)\n"
                        "    out[target, pred] += 1\n"
                        "    return out\n",
}


def roster(assignment):
    return standard_class(assignment, WRONG)
