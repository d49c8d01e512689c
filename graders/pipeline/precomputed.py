"""The recording end of nbgrader's autograde: the step that puts a notebook graded elsewhere back.

The expensive steps ran as a job (graders.engine.job); the coordinator then runs nbgrader's own autograde with
those steps replaced by ``PutBackPrecomputed``, which swaps in the graded notebook. Results are keyed by a
hash of the sanitized notebook, so a result computed for another version of a submission is never used.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from graders.model.errors import VecgradeError


def notebook_key(nb: NotebookNode) -> str:
    """A hash of what grading depends on: each cell's type, source and nbgrader metadata."""
    cells = [(c.cell_type, c.source, c.get("metadata", {}).get("nbgrader")) for c in nb.cells]
    return hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()[:32]


class PrecomputedMissing(VecgradeError, RuntimeError):
    pass


def result_path(results_dir: str, student: str, key: str) -> Path:
    """Where the coordinator puts one student's graded notebook: per student, so that two students who handed in
    the same notebook (with different modules beside it, say) never read each other's."""
    return Path(results_dir) / hashlib.sha256(student.encode()).hexdigest()[:32] / f"{key}.ipynb"


class PutBackPrecomputed(NbGraderPreprocessor):
    """Replace the notebook by its graded version computed elsewhere (found by student and ``notebook_key``)."""

    results_dir = Unicode("", help="Folder of <student>/<notebook_key>.ipynb files written by the "
                                   "coordinator").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        path = result_path(self.results_dir, resources["nbgrader"]["student"], notebook_key(nb))
        if not path.exists():
            raise PrecomputedMissing(f"no graded result for this version of {resources['unique_key']}.ipynb "
                                     "(its grading failed or the submission changed meanwhile)")
        return nbformat.read(path, as_version=4), resources
