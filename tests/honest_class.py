"""An honest class of ``broadcasting``: every answer correct and vectorized, each student with one ordinary habit.

Issue 8 ("Fair verdicts"): scratch cells, magics, shell commands, prints, helpers, a slow experiment or one
unfinished exercise must cost nothing on an exercise whose function does not reach them. Each student says
what it deserves (``Persona.deserves``): full marks everywhere, except the one exercise left unfinished.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import nbformat

from graders.course.personas import FULL, NOTHING, Persona
from graders.model.exercise import Assignment, Exercise
from graders.model.notebook import answer_id, grade_id_of

# the slow experiment sleeps far beyond the kernel's per-cell budget (ResilientExecute.timeout, lowered by the test)
CELL_TIMEOUT_S = 10
SLOW_SLEEP_S = 30 * CELL_TIMEOUT_S


@dataclass
class HonestStudent(Persona):
    """A persona whose scratch cells may also sit right after an answer (``after[exercise]``), where a student
    times or tries the function just written; ``extra_cells`` stay at the top of the notebook."""
    after: dict[str, list[str]] = field(default_factory=dict)

    def notebook(self, release_nb: nbformat.NotebookNode, assignment: Assignment) -> nbformat.NotebookNode:
        nb = super().notebook(release_nb, assignment)
        for name, sources in self.after.items():
            at = next(i for i, c in enumerate(nb.cells) if grade_id_of(c) == answer_id(name)) + 1
            for k, source in enumerate(sources):
                cell = nbformat.v4.new_code_cell(source)
                cell["id"] = f"after-{name}-{k}".replace("_", "-")
                nb.cells.insert(at + k, cell)
        return nb


def reference(ex: Exercise) -> str:
    return ex.reference_source()


def full(name: str):
    return FULL


def with_answers(overrides: dict[str, str]):
    """The reference everywhere, except the answers in ``overrides``."""
    return lambda ex: overrides.get(ex.name, ex.reference_source())


HINTED = {
    "batch_outer": '''\
def batch_outer(a: torch.Tensor) -> torch.Tensor:
    """Outer product of every row of ``a`` with itself: [B, F] -> [B, F, F]."""
    return a[:, :, None] * a[:, None, :]
''',
    "pairwise_sq_dists": '''\
def pairwise_sq_dists(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances between the rows of ``x`` and the rows of ``y``: [N, M]."""
    diff: torch.Tensor = x[:, None, :] - y[None, :, :]
    return (diff ** 2).sum(-1)
''',
    "standardize_columns": '''\
def standardize_columns(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Each column minus its mean, over its population std plus ``eps``."""
    mean = x.mean(0, keepdim=True)
    std = x.std(0, unbiased=False, keepdim=True)
    return (x - mean) / (std + eps)
''',
    "softmax_rows": '''\
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax; the row maximum is subtracted first so exp never overflows."""
    e = (x - x.amax(1, keepdim=True)).exp()
    return e / e.sum(1, keepdim=True)
''',
}

PRINTS_INSIDE = {  # a debugging print left in every function
    "batch_outer": ("def batch_outer(a):\n    print('batch_outer', tuple(a.shape))\n"
                    "    return a[:, :, None] * a[:, None, :]\n"),
    "pairwise_sq_dists": ("def pairwise_sq_dists(x, y):\n    print('shapes', x.shape, y.shape)\n"
                          "    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)\n"),
    "standardize_columns": ("def standardize_columns(x, eps=1e-5):\n"
                            "    mean = x.mean(0, keepdim=True)\n"
                            "    std = x.std(0, unbiased=False, keepdim=True)\n"
                            "    print('std', std.shape)\n"
                            "    return (x - mean) / (std + eps)\n"),
    "softmax_rows": ("def softmax_rows(x):\n    e = (x - x.amax(1, keepdim=True)).exp()\n"
                     "    print('row sums', e.sum(1)[:3])\n    return e / e.sum(1, keepdim=True)\n"),
}


def prints_in_cell(ex: Exercise) -> str:
    """The reference, then a try-out print in the same cell."""
    call = {"batch_outer": "batch_outer(torch.arange(6.).view(2, 3))",
            "pairwise_sq_dists": "pairwise_sq_dists(torch.zeros(2, 2), torch.ones(3, 2))",
            "standardize_columns": "standardize_columns(torch.arange(6.).view(3, 2))",
            "softmax_rows": "softmax_rows(torch.tensor([[0., 1.], [2., 2.]]))"}[ex.name]
    return ex.reference_source() + f"\n\nprint({call})\nprint('done with {ex.name}')\n"


HELPERS_CELL = '''\
def _col_mean(x):
    return x.mean(0, keepdim=True)


def _row_max(x):
    return x.amax(1, keepdim=True)


def _sq(t):
    return t * t
'''

HELPED = {
    "pairwise_sq_dists": "def pairwise_sq_dists(x, y):\n    return _sq(x[:, None, :] - y[None, :, :]).sum(-1)\n",
    "standardize_columns": ("def standardize_columns(x, eps=1e-5):\n    centred = x - _col_mean(x)\n"
                            "    return centred / (_col_mean(_sq(centred)).sqrt() + eps)\n"),
    "softmax_rows": "def softmax_rows(x):\n    e = (x - _row_max(x)).exp()\n    return e / e.sum(1, keepdim=True)\n",
}

FUNCTIONAL = {
    "softmax_rows": ("import torch.nn.functional as F\n\n\ndef softmax_rows(x):\n"
                     "    e = (x - x.amax(1, keepdim=True)).exp()\n"
                     "    return F.normalize(e, p=1, dim=1)\n"),
}

EINOPS = {
    "batch_outer": ("from einops import rearrange\n\n\ndef batch_outer(a):\n"
                    "    return rearrange(a, 'b i -> b i 1') * rearrange(a, 'b j -> b 1 j')\n"),
}

ALTERNATIVES = {  # other standard formulations (the definitions' own alternatives)
    "batch_outer": "def batch_outer(a):\n    return torch.einsum('bi,bj->bij', a, a)\n",
    "pairwise_sq_dists": "def pairwise_sq_dists(x, y):\n    return torch.cdist(x, y) ** 2\n",
    "standardize_columns": ("def standardize_columns(x, eps=1e-5):\n"
                            "    std, mean = torch.std_mean(x, 0, correction=0, keepdim=True)\n"
                            "    return (x - mean) / (std + eps)\n"),
    "softmax_rows": "def softmax_rows(x):\n    return torch.exp(x - torch.logsumexp(x, 1, keepdim=True))\n",
}

SYNTAX_ERROR = {  # unfinished: a bracket left open, nothing returned yet
    "standardize_columns": ("def standardize_columns(x, eps=1e-5):\n"
                            "    mean = x.mean(0, keepdim=True\n"
                            "    # TODO std, then divide\n"),
}

NAME_ERROR = {  # unfinished: the denominator was never computed
    "softmax_rows": "def softmax_rows(x):\n    e = (x - x.amax(1, keepdim=True)).exp()\n    return e / total\n",
}

NUMPY_CELL = "import numpy as np\n\nx = np.arange(12).reshape(3, 4)\nprint(x.mean(axis=0), x.shape)\n"
TIME_CELL = "import time\n\nstart = time.perf_counter()\nsum(range(10_000))\nprint(f'{time.perf_counter() - start:.6f} s')\n"
PLOT_CELL = '''\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

sizes = [10, 100, 1000]
plt.plot(sizes, [s * s for s in sizes], marker="o")
plt.xscale("log")
plt.title("work grows with N^2")
plt.savefig("scratch.png")
plt.close("all")
'''
TIMEIT_CELL = "%timeit pairwise_sq_dists(torch.randn(64, 4), torch.randn(48, 4))\n"
TIME_MAGIC_CELL = "%%time\nout = softmax_rows(torch.randn(256, 32))\nprint(out.sum(1)[:4])\n"
PIP_CELL = "!pip install einops\n"
SLOW_CELL = f"import time\n\n# an experiment that takes far too long\ntime.sleep({SLOW_SLEEP_S})\nprint('finished')\n"


def roster() -> list[Persona]:
    def unfinished(exercise: str):
        return lambda name: NOTHING if name == exercise else FULL

    return [
        HonestStudent("nia", "scratch numpy", reference, full, extra_cells=[NUMPY_CELL]),
        HonestStudent("tom", "scratch timing with `import time`", reference, full, extra_cells=[TIME_CELL]),
        HonestStudent("pia", "a matplotlib plot (Agg)", reference, full, extra_cells=[PLOT_CELL]),
        HonestStudent("tim", "%timeit after pairwise_sq_dists", reference, full,
                      after={"pairwise_sq_dists": [TIMEIT_CELL]}),
        HonestStudent("ted", "a %%time cell after softmax_rows", reference, full,
                      after={"softmax_rows": [TIME_MAGIC_CELL]}),
        HonestStudent("pip", "!pip install einops", reference, full, extra_cells=[PIP_CELL]),
        HonestStudent("pri", "a debugging print inside every function", with_answers(PRINTS_INSIDE), full),
        HonestStudent("pam", "a try-out print in every answer cell", prints_in_cell, full),
        HonestStudent("hugo", "type hints and docstrings", with_answers(HINTED), full),
        HonestStudent("hel", "private helpers in a cell of their own", with_answers(HELPED), full,
                      extra_cells=[HELPERS_CELL]),
        HonestStudent("fred", "import torch.nn.functional as F", with_answers(FUNCTIONAL), full,
                      extra_cells=["import torch.nn.functional as F\n\nprint(F.relu(torch.tensor([-1.0, 2.0])))\n"]),
        HonestStudent("ein", "an einops answer", with_answers(EINOPS), full),
        HonestStudent("alt", "other standard formulations (einsum, cdist, std_mean, logsumexp)",
                      with_answers(ALTERNATIVES), full),
        HonestStudent("sal", "a slow experiment after batch_outer", reference, full,
                      after={"batch_outer": [SLOW_CELL]}),
        HonestStudent("syd", "standardize_columns unfinished: a syntax error", with_answers(SYNTAX_ERROR),
                      unfinished("standardize_columns")),
        HonestStudent("nat", "softmax_rows unfinished: a NameError", with_answers(NAME_ERROR),
                      unfinished("softmax_rows")),
        HonestStudent("max", "every scratch habit at once", with_answers(HELPED), full,
                      extra_cells=[PIP_CELL, PLOT_CELL, TIME_CELL, NUMPY_CELL, HELPERS_CELL],
                      after={"pairwise_sq_dists": [TIMEIT_CELL], "softmax_rows": [TIME_MAGIC_CELL]}),
    ]
