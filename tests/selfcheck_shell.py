"""Run a built notebook's cells in an in-process IPython shell, as a kernel would: for the self-check tests."""
from __future__ import annotations

import contextlib
import io

from IPython.core.interactiveshell import InteractiveShell

from graders.course.build import build_notebook
from graders.model.notebook import answer_id


def run_cells(assignment, answers: dict[str, str], extra: dict[str, str] | None = None) -> dict[str, tuple]:
    """Run every code cell of the built notebook in order, with ``answers`` (exercise -> source) in the
    answer cells and each ``extra`` (after grade_id -> source) inserted after that cell.

    Returns {grade_id: (error, printed)} where error is "Name: message" or None.
    """
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    shell.history_manager.enabled = False  # no sqlite history file for tests
    results = {}
    for cell in build_notebook(assignment).cells:
        if cell.cell_type != "code":
            continue
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        name = next((ex for ex in answers if answer_id(ex) == grade_id), None)
        sources = [answers[name] if name else cell.source]
        if extra and grade_id in extra:
            sources.append(extra[grade_id])
        for i, source in enumerate(sources):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                result = shell.run_cell(source, store_history=True, silent=False)
            exc = result.error_in_exec or result.error_before_exec
            error = f"{type(exc).__name__}: {exc}" if exc else None
            results[grade_id if i == 0 else f"{grade_id}+"] = (error, printed.getvalue())
    return results
