"""The release's cells and kernelspec as the gradebook holds them, as data a grading job carries
(``release_cells``), and a stand-in for nbgrader's ``Gradebook`` that answers from that data (``MasterCells``).

nbgrader's ``OverwriteCells`` (here ``RestoreGradeCells``) and ``OverwriteKernelspec`` (here
``RestoreKernelspec``) put back what a student may not change (locked cells, grade cells, points, the kernel)
from the gradebook. A job may run where the gradebook is not (a Dask worker on another machine) and should not
read it while the coordinator writes it (SQLite), so the coordinator reads the assignment's cells once per call
(the teacher's data, the same for every student) and every job carries them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nbgrader.api import Gradebook, MissingEntry


@dataclass(frozen=True)
class SourceCell:
    name: str
    cell_type: str
    source: str
    checksum: str | None
    locked: bool


@dataclass(frozen=True)
class GradedCell:
    name: str
    max_score: float


def release_cells(db_url: str, assignment: str) -> dict[str, Any]:
    """``{notebook: {"source": [...], "grade": [...], "solution": [...], "task": [...]}}`` for ``assignment`` in the
    gradebook at ``db_url`` (``{}`` when it has no such assignment: the job then refuses as nbgrader would)."""
    out: dict[str, Any] = {}
    with Gradebook(db_url) as gb:
        try:
            notebooks = gb.find_assignment(assignment).notebooks
        except MissingEntry:
            return {}
        for nb in notebooks:
            out[nb.name] = {
                "source": [[c.name, c.cell_type, c.source, c.checksum, bool(c.locked)] for c in nb.source_cells],
                "grade": [[c.name, float(c.max_score)] for c in nb.grade_cells],
                "solution": [c.name for c in nb.solution_cells],
                "task": [[c.name, float(c.max_score)] for c in nb.task_cells],
                "kernelspec": nb.kernelspec}
    return out


@dataclass
class MasterNotebook:
    """What ``OverwriteCells`` reads of a gradebook notebook."""
    source_cells: list[SourceCell]
    grade_cells: list[GradedCell]
    solution_cells: list[GradedCell]
    task_cells: list[GradedCell]
    kernelspec: str | None = None  # JSON text, as the gradebook keeps it


class MasterCells:
    """A read-only ``Gradebook`` for ``OverwriteCells``, answering from ``release_cells``' data."""

    def __init__(self, cells: dict[str, Any]):
        self.notebooks = {
            name: MasterNotebook([SourceCell(*c) for c in nb["source"]], [GradedCell(*c) for c in nb["grade"]],
                                 [GradedCell(n, 0.0) for n in nb["solution"]], [GradedCell(*c) for c in nb["task"]],
                                 nb.get("kernelspec"))
            for name, nb in cells.items()}

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def find_notebook(self, notebook: str, assignment: str) -> MasterNotebook:
        try:
            return self.notebooks[notebook]
        except KeyError:
            raise MissingEntry() from None

    def find_source_cell(self, name: str, notebook: str, assignment: str) -> SourceCell:
        for cell in self.find_notebook(notebook, assignment).source_cells:
            if cell.name == name:
                return cell
        raise MissingEntry()

    def find_graded_cell(self, name: str, notebook: str, assignment: str) -> GradedCell:
        nb = self.find_notebook(notebook, assignment)
        for cell in nb.grade_cells + nb.task_cells:
            if cell.name == name:
                return cell
        raise MissingEntry()
