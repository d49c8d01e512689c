"""``vecgrade status``: what changed in one assignment's definitions after it was built, released or graded, and
each step to take.

The contract: ``definition_changes`` compares, for one assignment, its definitions modules (its own and the shared
ones, ``graders.model.fingerprint.defines``) with the built notebook's time, the built notebook (``source/``) with
what the students got (``release/``) cell by cell, and the fingerprint a graded notebook records with the
assignment's own now (``fingerprint.graded_under_other``): it names the exercises and settings that differ
(``cell_changes``: task text, examples, parts, by the cells' ids) and the steps to take, in order (``build``,
``generate_assignment``/``release_assignment``, ``grade``, ``feedback``). Another assignment's edit is never this
one's change; a shared file's is every assignment's.
"""
from __future__ import annotations

import difflib
from pathlib import Path

from graders.course.content import locked, notebook_cells, text
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.catalogue import AssignmentEntry
from graders.model.fingerprint import assignment_names, defines, graded_under_other


def _modules(folder: Path, name: str) -> list[Path]:
    """The definitions folder's top-level modules that ``name`` is defined by (``fingerprint.defines``): its own
    and the shared ones (what ``vecgrade build`` renders its notebook from; ``variants/`` never changes it)."""
    files = sorted(folder.glob("*.py"))
    names = assignment_names(p.name for p in files)
    return [p for p in files if defines(p.name, name, names)]


_KINDS = (("-task", "task text"), ("-loop-intro", "loop version's text"), ("-loop", "loop version"),
          ("-examples", "visible examples"), ("-correct", "part correct"), ("-vectorized", "part vectorized"),
          ("-fast", "part fast"))


def _exercise_cells(cells: list[dict], entry: AssignmentEntry) -> dict[tuple[str, str], str]:
    """{(exercise, what): text} of a notebook's teacher-written cells (by their ids; answers are not included)."""
    prefixes = {e.name.replace("_", "-"): e.name for e in entry.exercises}
    out = {}
    for cell in cells:
        cid = str(cell.get("id", ""))
        if cell.get("cell_type") == "code" and not locked(cell):
            continue  # an answer cell: the release holds a stub, a student's copy their answer
        for suffix, what in _KINDS:
            if cid.endswith(suffix) and cid[:-len(suffix)] in prefixes:
                out[prefixes[cid[:-len(suffix)]], what] = text(cell.get("source", ""))
                break
    return out


def _first_change(old: str, new: str) -> str:
    """The first words that differ: '"within 3x" -> "within 8x"'."""
    a, b = old.split(), new.split()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            lo_a, lo_b = max(i1 - 1, 0), max(j1 - 1, 0)
            return f'"{" ".join(a[lo_a:i2][:8])}" -> "{" ".join(b[lo_b:j2][:8])}"'
    return "whitespace"


def cell_changes(old: list[dict] | None, new: list[dict] | None, entry: AssignmentEntry) -> list[str]:
    """Per exercise, what differs between two versions of the assignment's notebook ([] when either is missing)."""
    if old is None or new is None:
        return []
    before, after = _exercise_cells(old, entry), _exercise_cells(new, entry)
    out = []
    for key in sorted(set(before) | set(after), key=lambda k: ([e.name for e in entry.exercises].index(k[0]), k[1])):
        exercise, what = key
        if key not in before:
            out.append(f"{exercise}: {what} added")
        elif key not in after:
            out.append(f"{exercise}: {what} removed")
        elif before[key] != after[key]:
            out.append(f"{exercise}: {what} {_first_change(before[key], after[key])}")
    return out


def definition_changes(course: Course, entry: AssignmentEntry, graded_notebook: Path | None,
                       graded_metadata: object, points: list[str]) -> tuple[list[str], list[str]]:
    """(what changed, the steps to take, in order) between the assignment's definitions (its own files and the
    shared ones, ``fingerprint.defines``: another assignment's edit is not this one's change), the built notebook,
    the released one and what was graded (``graded_notebook``, a graded student's, graded under other definitions
    when one is, and its metadata, which records the fingerprint it was graded under; ``points``: the gradebook's
    grade cells against the definitions')."""
    name = entry.name
    source = course.paths.notebook(Step.SOURCE, name)
    release = course.paths.notebook(Step.RELEASE, name)
    changes: list[str] = []
    steps: list[str] = []
    built = source.stat().st_mtime if source.exists() else 0.0
    newer = [p.name for p in _modules(course.root / "assignments", name) if p.stat().st_mtime > built] if built else []
    if newer:
        changes.append(f"the definitions ({', '.join(newer)}) changed after source/{name} was built")
        steps.append("`vecgrade build` (writes the changed notebooks into source/)")
    source_cells = notebook_cells(source) if source.exists() else None
    released = cell_changes(notebook_cells(release), source_cells, entry) if release.exists() else []
    if released:
        changes.append("the students' notebook differs from the built one: " + "; ".join(released))
        steps += [f"`nbgrader generate_assignment {name} --force`",
                  f"`nbgrader release_assignment {name} --force` (students fetch the new notebook)"]
    points = points if graded_notebook is not None else []
    if points:
        changes.append("points: " + "; ".join(points))
    older = graded_notebook is not None and graded_under_other(graded_metadata, entry.fingerprint, entry.folder_print)
    if older and graded_notebook is not None:
        graded_cells = notebook_cells(graded_notebook)
        graded = cell_changes(graded_cells, source_cells, entry)
        if graded:
            what = "; ".join(graded)
        elif graded_cells is not None and source_cells is not None:
            what = "hidden cases, rules or lessons only (no cell of the notebook)"
        else:
            what = "the graded notebook and the built one cannot be compared cell by cell"
        changes.append(f"graded under older definitions: {what}")
    if points or older:
        if points and not any("generate_assignment" in s for s in steps):
            steps.append(f"`nbgrader generate_assignment {name} --force` (the gradebook's points)")
        steps += [f"`vecgrade grade {name}` (every student, on the current definitions)",
                  f"`vecgrade feedback {name}`, then `nbgrader release_feedback {name}`"]
    return changes, steps
