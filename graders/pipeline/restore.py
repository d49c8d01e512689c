"""nbgrader's ``OverwriteCells``, with deleted grade cells put back where they belong.

nbgrader 0.9.6 re-adds a deleted grade cell after the source cell just before
it, but only finds that cell if it is itself a grade or solution cell; in
this course it is usually the locked examples cell, and nbgrader fails with a
``KeyError`` that drops the whole submission. Here the cell goes after the
nearest earlier source cell still present (any cell with a ``grade_id``).

It also survives a pasted copy of a graded cell: nbgrader's ``DeduplicateIds``
strips the copy's ``grade_id`` but leaves its ``nbgrader`` metadata, which
``OverwriteCells`` then trips on (``KeyError: 'grade_id'``). Such a copy is an
ordinary cell of the student's, and is treated as one.
"""
from __future__ import annotations

import json

from nbgrader.preprocessors import OverwriteCells, OverwriteKernelspec

from graders.model.notebook import grade_id_of
from graders.pipeline.master import MasterCells

MASTER = "vecgrade_master"  # the resources entry of a job's release cells (graders.pipeline.master.release_cells)


class RestoreGradeCells(OverwriteCells):
    """nbgrader's ``OverwriteCells`` (see the module's docstring); in a grading job it reads the release's cells from
    ``resources[MASTER]`` (this notebook's entry of graders.pipeline.master.release_cells) rather than from the
    gradebook."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            meta = cell.get("metadata", {})
            if "nbgrader" in meta and "grade_id" not in meta["nbgrader"]:
                del meta["nbgrader"]
        master = resources.get(MASTER)
        if master is None:
            return super().preprocess(nb, resources)
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.db_url = resources["nbgrader"].get("db_url", "")
        self.gradebook = MasterCells({self.notebook_id: master})
        nb, resources = super(OverwriteCells, self).preprocess(nb, resources)  # each cell, as OverwriteCells does
        if self.add_missing_cells:
            nb, resources = self.add_missing_grade_cells(nb, resources)
            nb, resources = self.add_missing_task_cells(nb, resources)
        return nb, resources

    def add_missing_grade_cells(self, nb, resources):
        source_nb = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        source_cells = source_nb.source_cells
        source_ids = [cell.name for cell in source_cells]
        solution_ids = {cell.name for cell in source_nb.solution_cells}
        for grade_cell in source_nb.grade_cells:
            present = [grade_id_of(cell) for cell in nb.cells]
            if grade_cell.name in present:
                continue
            self.log.warning("Missing grade cell %s encountered, adding to notebook", grade_cell.name)
            index = source_ids.index(grade_cell.name)
            restored = self.missing_cell_transform(source_cells[index], grade_cell.max_score,
                                                   is_solution=grade_cell.name in solution_ids)
            earlier = [present.index(i) for i in source_ids[:index] if i in present]
            nb.cells.insert(max(earlier) + 1 if earlier else 0, restored)
        return nb, resources


class RestoreKernelspec(OverwriteKernelspec):
    """nbgrader's ``OverwriteKernelspec``; in a grading job it reads the release's kernelspec from
    ``resources[MASTER]`` (this notebook's entry of graders.pipeline.master.release_cells) rather than from the
    gradebook."""

    def preprocess(self, nb, resources):
        master = resources.get(MASTER)
        if master is None:
            return super().preprocess(nb, resources)
        found = MasterCells({resources["nbgrader"]["notebook"]: master}).find_notebook(
            resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"])
        if found.kernelspec:
            nb.metadata["kernelspec"] = json.loads(found.kernelspec)
        return nb, resources
