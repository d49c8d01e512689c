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

from nbgrader.preprocessors import OverwriteCells

from graders.model.notebook import grade_id_of


class RestoreGradeCells(OverwriteCells):
    def preprocess(self, nb, resources):
        for cell in nb.cells:
            meta = cell.get("metadata", {})
            if "nbgrader" in meta and "grade_id" not in meta["nbgrader"]:
                del meta["nbgrader"]
        return super().preprocess(nb, resources)

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
