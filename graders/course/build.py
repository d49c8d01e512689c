"""Write ``source/<assignment>/<assignment>.ipynb`` (and its self-check inputs) from an exercise definition module.

The output is deterministic (fixed cell ids, sorted keys), so the committed
source notebooks can be compared with a fresh build. Hidden cases are never
written: the notebook holds the lesson, the loop versions, the reference
between nbgrader's solution markers, the visible examples and three grade
cells per exercise that run the student's self-check for their part (the
grader overwrites their outputs). Next to the notebook, ``<assignment>.inputs.pt``
holds random arguments at two sizes, drawn from a fixed public seed, for the
self-check's op count and speed estimate; nbgrader releases it with the notebook.
"""
from __future__ import annotations

import ast
import io
from pathlib import Path

import nbformat
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from graders.checks.static import LOOP_HINT
from graders.coursedir.paths import CoursePaths, Step
from graders.model.exercise import PARTS, Assignment, Exercise
from graders.model.notebook import SETUP_ID, answer_id, examples_id, loop_id
from graders.student import install

INSTALL_LINE = f"""\
> **Before you start.** This notebook needs the course's Python package `vecgrade` (it is not on PyPI).
> Install it from the wheel your instructor hands out with the assignment, `{install.FROM_WHEEL}`,
> or from the course's repository, `{install.FROM_REPOSITORY}`. For JupyterLab with nbgrader's
> **Validate** button, add the `lab` extra afterwards: `{install.LAB}`. Then restart the kernel.
> If the first code cell runs without an error, it is installed already (as on a course JupyterHub)."""
SETUP_IMPORT = "from graders.student.selfcheck import examples_of, grade_part, register_exercises"
SETUP_FAILED = f"this notebook needs the course's package vecgrade: install {install.WHERE}, then restart the kernel"
INPUTS_SEED = 20240601  # public: the self-check's inputs are not hidden cases

PART_TEXT = {
    "correct": "hidden inputs of several sizes and dtypes, edge cases and non-contiguous inputs; "
               "exact shape and dtype, values within tolerance",
    "vectorized": "no Python-level iteration over anything that grows with the input (a loop over `range(4)` "
                  "or a tensor's shape is fine) and no state kept between calls, in your function or anything it "
                  "calls, and work that does not grow with the input size",
    "fast": "at least {speedup:g}x faster than the loop version, and within {ref_factor:g}x of the "
            "reference solution's time",
}


def _meta(grade_id: str, *, grade=False, solution=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(source: str, cell_id: str, hidden: bool = False, **meta) -> nbformat.NotebookNode:
    cell = new_code_cell(source.rstrip() + "\n" if source.strip() else "", metadata=_meta(cell_id, **meta))
    cell["id"] = cell_id.replace("_", "-")
    if hidden:  # JupyterLab shows the cell collapsed; a click opens it
        cell.metadata["jupyter"] = {"source_hidden": True}
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


def selfcheck_facts(ex: Exercise) -> dict:
    """What the self-check must know of ``ex`` (all public: the task text states each), defaults left out."""
    facts: dict = {"speedup": ex.speedup, "bench_size": ex.bench_size,
                   # the expected values are written rounded (``tensor_literal``): never tighter than that
                   "rtol": max(ex.rtol, 1e-5), "atol": max(ex.atol, 1e-5)}
    if ex.loop_hint != LOOP_HINT:
        facts["loop_hint"] = ex.loop_hint
    if ex.forbidden:
        facts["forbidden"] = tuple(ex.forbidden)
    if ex.forbidden_ops:
        facts["forbidden_ops"] = tuple(ex.forbidden_ops)
    if ex.shape_params:
        facts["shape_params"] = tuple(ex.shape_params)
    return facts


def setup_source(assignment: Assignment) -> str:
    """The setup cell: the preamble and the self-check's import (one line when the package is missing), then
    every exercise's facts, so that each examples cell needs only the exercise's name."""
    guarded = "\n".join("    " + line for line in (assignment.preamble + "\n" + SETUP_IMPORT).splitlines())
    facts = ",\n".join(f"    {ex.name!r}: {selfcheck_facts(ex)!r}" for ex in assignment.exercises)
    preamble = "" if assignment.preamble == "import torch" else f", preamble={assignment.preamble!r}"
    return (f"try:\n{guarded}\nexcept ModuleNotFoundError as missing:\n"
            f"    raise ModuleNotFoundError(f\"{{missing}}; \" + {SETUP_FAILED!r}) from None\n"
            "# what the self-check needs to know of each exercise (the task texts say it too)\n"
            f"register_exercises({assignment.name!r}, {{\n{facts},\n}}{preamble})")


def _arguments(call: str, namespace: dict, skip: set[str]) -> str:
    """The values a call reads, as a label tells them apart: a tensor by its shape, anything else by its repr."""
    names = dict.fromkeys(n.id for n in ast.walk(ast.parse(call, mode="eval")) if isinstance(n, ast.Name))
    shown = []
    for name in (n for n in names if n in namespace and n not in skip):
        value = namespace[name]
        shown.append(f"{name} [{', '.join(map(str, value.shape))}]" if isinstance(value, torch.Tensor)
                     else f"{name} = {value!r}")
    return ", ".join(shown)


def example_labels(calls: list[str], arguments: list[str]) -> list[str]:
    """How the self-check names each visible example: its call; where two share a call, with the arguments that
    tell them apart (``batch_outer(a) with a [2, 3]``); where even those agree, with its number."""
    labels = [call if calls.count(call) == 1 else f"{call} with {args}" if args else call
              for call, args in zip(calls, arguments, strict=True)]
    return [label if labels.count(label) == 1 else f"{label} (example {i + 1})" for i, label in enumerate(labels)]


def _example_cell(ex: Exercise, assignment: Assignment) -> str:
    preamble = assignment.preamble
    lines = [f"# Visible examples for `{ex.name}`: run this cell after your answer cell.",
             "# The grader checks many more inputs (hidden), of several sizes and layouts.",
             f"examples = examples_of({ex.name!r})"]
    namespaces = []
    for example in ex.examples:
        namespace: dict = {}
        exec(preamble, namespace)
        skip = set(namespace)  # torch, einops: not an argument
        exec(example.setup, namespace)
        namespace[ex.name] = ex.reference
        namespaces.append((namespace, skip | {ex.name}))
    arguments = [_arguments(e.call, ns, skip) for e, (ns, skip) in zip(ex.examples, namespaces, strict=True)]
    labels = example_labels([e.call for e in ex.examples], arguments)
    for example, (namespace, _), label in zip(ex.examples, namespaces, labels, strict=True):
        expected = eval(example.call, namespace)
        if example.note:
            lines.append(f"# {example.note}")
        lines.append(example.setup)
        named = "" if label == example.call else f", label={label!r}"
        lines.append(f"examples.expect({example.call!r}, {tensor_literal(expected)}{named})")
    lines.append("examples.report()  # the grader's loop check over all your cells, work at two sizes, "
                 "a speed estimate")
    return "\n".join(lines)


def self_check_sizes(ex: Exercise) -> tuple[int, int]:
    """Two small sizes: enough for work that grows to show, small enough to ship and to run a loop at."""
    small = ex.count_sizes[0]
    return small, 2 * small


def render_inputs(assignment: Assignment) -> bytes:
    """The self-check's arguments, by exercise, at ``self_check_sizes`` (bytes of ``torch.save``, deterministic).
    Each size draws from a generator in the same state, so where ``sized`` draws which axis is long (one long axis
    per timed call, docs/calibration.md) both sizes make the same axis long, and the self-check compares one shape
    growing, as the grader's count does (graders.checks.vectorized)."""
    data = {ex.name: {"sizes": self_check_sizes(ex),
                      "args": [tuple(ex.sized(torch.Generator().manual_seed(INPUTS_SEED), n))
                               for n in self_check_sizes(ex)]}
            for ex in assignment.exercises}
    buffer = io.BytesIO()
    torch.save(data, buffer)
    return buffer.getvalue()


def _exercise_text(number: int, ex: Exercise) -> str:
    parts = [f"## {number}. `{ex.name}`", "", ex.task.strip(), ""]
    if ex.shape_note:
        parts += [ex.shape_note, ""]
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


GRADE_CELL_RUN = {
    "correct": "# Run it to check this part on the visible examples: an error here means it would fail.",
    "vectorized": "# Run it to check this part on the visible examples: an error here means it would fail.",
    "fast": "# Run it for a speed estimate; only the grader's timing decides this part (an error here\n"
            "# means the answer is not correct yet).",
}


def _grade_source(ex: Exercise, part: str) -> str:
    return (f"# Part \"{part}\" of `{ex.name}`, {ex.points.of(part):g} point(s). The autograder decides it in a\n"
            "# separate process, on hidden inputs, and ignores what this cell prints.\n"
            f"{GRADE_CELL_RUN[part]}\n"
            f"grade_part({ex.name!r}, {part!r})")


def build_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    cells = [_markdown(INSTALL_LINE + "\n\n" + assignment.lesson, "lesson"),
             _code(setup_source(assignment), SETUP_ID, hidden=True, locked=True)]
    for number, ex in enumerate(assignment.exercises, 1):
        cells.append(_markdown(_exercise_text(number, ex), f"{ex.name}_task"))
        cells.append(_markdown("The loop version (read-only). Your answer must compute the same thing.",
                               f"{ex.name}_loop_intro"))
        cells.append(_code(ex.loop_source(), loop_id(ex.name), locked=True))
        cells.append(_code(_answer_source(ex), answer_id(ex.name), solution=True))
        cells.append(_code(_example_cell(ex, assignment), examples_id(ex.name), locked=True))
        for part in PARTS:
            cells.append(_code(_grade_source(ex, part), ex.grade_id(part), grade=True, locked=True,
                               points=ex.points.of(part)))
    nb = new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    return nb


def notebook_path(course_root: Path, assignment: Assignment) -> Path:
    return CoursePaths(course_root).notebook(Step.SOURCE, assignment.name)


def render(assignment: Assignment) -> str:
    return nbformat.writes(build_notebook(assignment)) + "\n"


def inputs_path(course_root: Path, assignment: Assignment) -> Path:
    """Named as ``graders.student.work.inputs_path`` expects, next to the notebook."""
    return notebook_path(course_root, assignment).with_name(f"{assignment.name}.inputs.pt")


def is_stale(course_root: Path, assignment: Assignment) -> bool:
    """Whether the committed notebook or its self-check inputs differ from a fresh build."""
    nb, inputs = notebook_path(course_root, assignment), inputs_path(course_root, assignment)
    return (not nb.exists() or nb.read_text() != render(assignment)
            or not inputs.exists() or inputs.read_bytes() != render_inputs(assignment))


def write_source(course_root: Path, assignment: Assignment) -> Path:
    path = notebook_path(course_root, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(assignment))
    inputs_path(course_root, assignment).write_bytes(render_inputs(assignment))
    return path


def update_source(course_root: Path, assignment: Assignment) -> bool:
    """``vecgrade build``: write the notebook and its inputs only where they differ from a fresh build (a content
    check); True when written. A second build with nothing changed (after ``vecgrade build --wheel``, say) writes
    nothing, so an open notebook, nbgrader's source/ and its timestamps are left alone."""
    if not is_stale(course_root, assignment):
        return False
    write_source(course_root, assignment)
    return True
