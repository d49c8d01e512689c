"""Write ``source/<assignment>/<assignment>.ipynb`` from an exercise definition module.

The output is deterministic (fixed cell ids, sorted keys), so the committed
source notebooks can be compared with a fresh build. Hidden cases are never
written: the notebook holds the lesson, the loop versions, the reference
between nbgrader's solution markers, the visible examples and three grade
cells per exercise whose source only names the exercise and the part.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from graders.model.exercise import PARTS, Assignment, Exercise
from graders.model.notebook import SETUP_ID, answer_id, examples_id, loop_id

SETUP = "from graders.student.selfcheck import expect, check_loops"

PART_TEXT = {
    "correct": "hidden inputs of several sizes and dtypes, edge cases and non-contiguous inputs; "
               "exact shape and dtype, values within tolerance",
    "vectorized": "no Python-level iteration in your function or anything it calls, and work that does not "
                  "grow with the input size",
    "fast": "at least {speedup:g}x faster than the loop version, and within {ref_factor:g}x of the "
            "reference solution's time",
}


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(source: str, cell_id: str, **meta) -> nbformat.NotebookNode:
    cell = new_code_cell(source.rstrip() + "\n" if source.strip() else "", metadata=_meta(cell_id, **meta))
    cell["id"] = cell_id.replace("_", "-")
    return cell


def _markdown(source: str, cell_id: str) -> nbformat.NotebookNode:
    cell = new_markdown_cell(source.rstrip())
    cell["id"] = cell_id.replace("_", "-")
    return cell


def tensor_literal(t: torch.Tensor) -> str:
    """Code that rebuilds ``t`` (values rounded to 6 significant digits)."""
    def fmt(v):
        if isinstance(v, list):
            return "[" + ", ".join(map(fmt, v)) + "]"
        if isinstance(v, bool):
            return repr(v)
        if isinstance(v, float):
            text = f"{v:.6g}"
            return text if any(c in text for c in ".enai") else text + "."
        return str(v)
    body = fmt(t.tolist())
    if t.numel() == 0:
        return f"torch.empty({tuple(t.shape)}, dtype={t.dtype})"
    return f"torch.tensor({body}, dtype={t.dtype})"


def _example_cell(ex: Exercise, preamble: str) -> str:
    lines = [f"# Visible examples for `{ex.name}`: run this cell after your answer cell.",
             "# The grader checks many more inputs (hidden), of several sizes and layouts."]
    rtol, atol = max(ex.rtol, 1e-5), max(ex.atol, 1e-5)
    for example in ex.examples:
        namespace: dict = {}
        exec(preamble, namespace)
        exec(example.setup, namespace)
        namespace[ex.name] = ex.reference
        expected = eval(example.call, namespace)
        if example.note:
            lines.append(f"# {example.note}")
        lines.append(example.setup)
        lines.append(f"expect({example.call!r}, lambda: {example.call},\n       {tensor_literal(expected)},\n"
                     f"       rtol={rtol:g}, atol={atol:g})")
    extra = f", preamble={preamble!r}" if preamble != "import torch" else ""
    lines.append(f"check_loops({ex.name}, forbidden={tuple(ex.forbidden)!r}{extra})")
    return "\n".join(lines)


def _exercise_text(number: int, ex: Exercise) -> str:
    parts = [f"## {number}. `{ex.name}`", "", ex.task.strip(), ""]
    if ex.hints:
        parts += ["**Hints**", ""] + [f"- {h}" for h in ex.hints] + [""]
    if ex.forbidden:
        parts += ["**Not allowed here:** " + ", ".join(f"`{f}`" for f in ex.forbidden), ""]
    parts += ["**Grading**", ""]
    for part in PARTS:
        text = PART_TEXT[part].format(speedup=ex.speedup, ref_factor=ex.ref_factor)
        parts.append(f"- *{part}* ({ex.points.of(part):g} pt): {text}.")
    parts += ["", "Vectorized and fast count only once the answer is correct."]
    return "\n".join(parts)


def _answer_source(ex: Exercise) -> str:
    body = ex.reference_body()
    indent = " " * (len(body) - len(body.lstrip()))
    return f"{ex.signature}\n{indent}### BEGIN SOLUTION\n{body}\n{indent}### END SOLUTION"


def _grade_source(ex: Exercise, part: str) -> str:
    return (f"# Part \"{part}\" of `{ex.name}`, {ex.points.of(part):g} point(s).\n"
            "# The autograder decides this part in a separate process, on hidden inputs;\n"
            "# running this cell does nothing. Use the examples cell above to check your work.")


def build_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    cells = [_markdown(assignment.lesson, "lesson"),
             _code(assignment.preamble + "\n" + SETUP, SETUP_ID, locked=True)]
    for number, ex in enumerate(assignment.exercises, 1):
        cells.append(_markdown(_exercise_text(number, ex), f"{ex.name}_task"))
        cells.append(_markdown("The loop version (read-only). Your answer must compute the same thing.",
                               f"{ex.name}_loop_intro"))
        cells.append(_code(ex.loop_source(), loop_id(ex.name), locked=True))
        cells.append(_code(_answer_source(ex), answer_id(ex.name), solution=True))
        cells.append(_code(_example_cell(ex, assignment.preamble), examples_id(ex.name), locked=True))
        for part in PARTS:
            cells.append(_code(_grade_source(ex, part), ex.grade_id(part), grade=True, locked=True,
                               points=ex.points.of(part)))
    nb = new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    return nb


def notebook_path(course_root: Path, assignment: Assignment) -> Path:
    return Path(course_root) / "source" / assignment.name / f"{assignment.name}.ipynb"


def render(assignment: Assignment) -> str:
    return nbformat.writes(build_notebook(assignment)) + "\n"


def write_source(course_root: Path, assignment: Assignment) -> Path:
    path = notebook_path(course_root, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(assignment))
    return path
