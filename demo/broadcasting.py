"""The demo class of ``broadcasting``: the standard students, and hal, who writes other correct formulations."""
from graders.course.personas import FULL, Persona, standard_class

WRONG = {
    "batch_outer": "def batch_outer(a):\n    return a[:, None, :] * a[:, None, :]\n",
    "pairwise_sq_dists": "def pairwise_sq_dists(x, y):\n    return (x[:, None, :] - y[None, :, :]).sum(-1) ** 2\n",
    "standardize_columns": "def standardize_columns(x, eps=1e-5):\n    return (x - x.mean(0)) / (x.std(0) + eps)\n",
    "softmax_rows": "def softmax_rows(x):\n    e = x.exp()\n    return e / e.sum(1, keepdim=True)\n",
}

ALTERNATIVE = {  # correct, vectorized, written differently from the reference
    "batch_outer": "def batch_outer(a):\n    return torch.einsum('bi,bj->bij', a, a)\n",
    "pairwise_sq_dists": ("def pairwise_sq_dists(x, y):\n"
                          "    return (x * x).sum(1)[:, None] + (y * y).sum(1)[None, :] - 2 * x @ y.T\n"),
    "standardize_columns": ("def standardize_columns(x, eps=1e-5):\n"
                            "    centred = x - x.mean(0)\n"
                            "    return centred / (centred.pow(2).mean(0).sqrt() + eps)\n"),
    "softmax_rows": "def softmax_rows(x):\n    return torch.softmax(x, dim=1)\n",  # forbidden call
}


def roster(assignment):
    return standard_class(assignment, WRONG) + [
        Persona("hal", "other correct formulations, one using a forbidden softmax",
                lambda ex: ALTERNATIVE[ex.name],
                lambda name: (1.0, 0.0, 1.0) if name == "softmax_rows" else FULL),
    ]
