"""The built notebooks: equal to what is committed, shaped as nbgrader expects, and free of hidden data."""
import ast
import inspect
import re
import subprocess
import sys
import textwrap

import nbformat
import pytest

from graders.course.build import (
    build_notebook,
    example_labels,
    inputs_path,
    is_stale,
    notebook_path,
    render,
    render_inputs,
)
from graders.model.exercise import PARTS, load_course

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")


@pytest.mark.parametrize("name", list(COURSE))
def test_committed_source_equals_a_fresh_build(name):
    path = notebook_path(ROOT, COURSE[name])
    assert path.exists(), f"{path} missing: run `vecgrade build`"
    assert path.read_text() == render(COURSE[name]), f"{path} is stale: run `vecgrade build`"
    inputs = inputs_path(ROOT, COURSE[name])
    assert inputs.exists() and inputs.read_bytes() == render_inputs(COURSE[name]), f"{inputs} is stale"
    assert not is_stale(ROOT, COURSE[name])


def test_a_changed_inputs_file_is_stale(tmp_path, broadcasting):
    from graders.course.build import write_source
    write_source(tmp_path, broadcasting)
    assert not is_stale(tmp_path, broadcasting)
    inputs_path(tmp_path, broadcasting).write_bytes(b"")
    assert is_stale(tmp_path, broadcasting)


def def_line(source: str) -> str:
    """The first `def` line as Python reads it (name, parameters, defaults), whatever the spacing."""
    node = next(n for n in ast.parse(textwrap.dedent(source)).body if isinstance(n, ast.FunctionDef))
    return f"def {node.name}({ast.unparse(node.args)}):"


@pytest.mark.parametrize("name", list(COURSE))
def test_each_exercise_has_one_answer_cell_and_three_grade_cells(name):
    assignment = COURSE[name]
    nb = build_notebook(assignment)
    meta = {c.metadata["nbgrader"]["grade_id"]: (c, c.metadata["nbgrader"]) for c in nb.cells if "nbgrader" in c.metadata}
    for ex in assignment.exercises:
        cell, m = meta[f"{ex.name}_answer"]
        assert m["solution"] and not m["grade"]
        # the student's def line is the reference's own, parameters and defaults included
        assert def_line(cell.source) == def_line(inspect.getsource(ex.reference)), cell.source.splitlines()[0]
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
        assert meta[f"{ex.name}_loop"][1]["locked"]
        for part in PARTS:
            cell, m = meta[ex.grade_id(part)]
            assert m["grade"] and m["locked"] and m["points"] == ex.points.of(part)
            assert ex.name in cell.source and part in cell.source


def _segment(source: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(source, node)
    assert segment is not None, "ast.parse records where every statement starts and ends"
    return segment


def reference_statements(ex) -> list[str]:
    """Every statement of the reference's body, whitespace removed, that the loop version does not show."""
    shown = "".join(ex.loop_source().split())
    source = ex.reference_source()
    body = ast.parse(source).body[0].body
    statements = ["".join(_segment(source, node).split()) for stmt in body for node in ast.walk(stmt)
                  if isinstance(node, ast.stmt)]
    return [s for s in statements if s not in shown and not re.fullmatch(r"return\w+", s)]


def leaked(ex, text: str) -> list[str]:
    squeezed = "".join(text.split())
    return [s for s in reference_statements(ex) if s in squeezed]


@pytest.mark.parametrize("ex", [ex for a in COURSE.values() for ex in a.exercises], ids=lambda ex: ex.name)
def test_every_reference_has_a_statement_to_search_for_and_the_search_finds_it(ex):
    assert reference_statements(ex), f"{ex.name}: nothing of its reference would be searched for"
    assert leaked(ex, "# scratch\n" + ex.reference_body())


@pytest.mark.parametrize("name", list(COURSE))
def test_grade_cells_run_only_the_self_check_and_the_reference_stays_inside_the_solution_markers(name):
    assignment = COURSE[name]
    nb = build_notebook(assignment)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"]["solution"]:
            code = [line for line in cell.source.splitlines() if not line.startswith("#")]
            assert len(code) == 1 and re.fullmatch(r"grade_part\('\w+', '(correct|vectorized|fast)'\)", code[0]), code
    text = "\n".join(c.source for c in nb.cells if not c.metadata.get("nbgrader", {}).get("solution"))
    for ex in assignment.exercises:
        assert not leaked(ex, text), f"reference code of {ex.name} leaks outside the solution"


def test_examples_that_share_a_call_are_labelled_apart():
    assert example_labels(["f(a)", "f(b)"], ["a [2]", "b [2]"]) == ["f(a)", "f(b)"]  # apart already: the call
    assert example_labels(["f(a)", "f(a)", "g(a)"], ["a [2, 2]", "a [2, 3]", "a [1]"]) == [
        "f(a) with a [2, 2]", "f(a) with a [2, 3]", "g(a)"]
    assert example_labels(["f(a)", "f(a)"], ["a [2]", "a [2]"]) == ["f(a) with a [2] (example 1)",
                                                                  "f(a) with a [2] (example 2)"]


@pytest.mark.parametrize("name", list(COURSE))
def test_no_two_visible_examples_of_an_exercise_print_the_same_label(name):
    for cell in (c for c in build_notebook(COURSE[name]).cells if c.cell_type == "code"):
        calls = [node for node in ast.walk(ast.parse(cell.source))
                 if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "expect"]
        labels = [next((ast.literal_eval(k.value) for k in c.keywords if k.arg == "label"), ast.literal_eval(c.args[0]))
                  for c in calls]
        assert len(labels) == len(set(labels)), labels


@pytest.mark.e2e
def test_released_notebook_has_stubs_and_runs_its_examples(tmp_path, broadcasting):
    """Execute the student's release notebook: examples report 'not implemented', every grade cell fails."""
    from graders.course.build import write_source
    from graders.course.demo import make_course
    course = make_course(tmp_path / "course")
    write_source(course.root, broadcasting)
    with course.api() as api:
        assert api.generate_assignment("broadcasting")["success"]
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    nb = nbformat.read(release, as_version=4)
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_answer")]
    assert all("raise NotImplementedError()" in c.source and "BEGIN SOLUTION" not in c.source for c in answers)
    assert (release.parent / "broadcasting.inputs.pt").exists()  # released with the notebook
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(release.parent)}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "not implemented yet" in printed and "[ok] vectorized" not in printed
    errors = {c.metadata["nbgrader"]["grade_id"]: o.get("ename") for c in nb.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error"}
    grade_ids = [ex.grade_id(p) for ex in broadcasting.exercises for p in PARTS]
    assert errors == {g: {"correct": "Incorrect", "vectorized": "NotVectorized", "fast": "TooSlow"}[g.rsplit("_", 1)[1]]
                      for g in grade_ids}


def test_cli_build_check_passes_on_the_committed_course():
    result = subprocess.run([sys.executable, "-m", "graders.cli", "build", "--check", "--course", str(ROOT)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_build_after_build_wheel_writes_nothing_unless_something_changed(tmp_path, monkeypatch):
    """`vecgrade build --wheel` builds the notebooks too: the `vecgrade build` after it (the README's workflow)
    leaves every file as it is, and a notebook or inputs file that differs from a fresh build is written again."""
    from typer.testing import CliRunner

    from graders.cli import app
    from graders.course import wheel
    from graders.course.demo import make_course

    monkeypatch.setattr(wheel, "write_wheel", lambda root: "wrote dist/the.whl")  # pip's part is test_wheel's
    course = make_course(tmp_path / "course")
    runner = CliRunner()
    first = runner.invoke(app, ["build", "--wheel", "-c", str(course.root)])
    assert first.exit_code == 0 and first.output.count("wrote source/") == len(COURSE), first.output
    files = [p for a in course.assignments.values() for p in (notebook_path(course.root, a), inputs_path(course.root, a))]
    stamps = {p: p.stat().st_mtime_ns for p in files}
    second = runner.invoke(app, ["build", "-c", str(course.root)])
    assert second.exit_code == 0 and "wrote" not in second.output, second.output
    assert f"up to date, not written: {', '.join(course.assignments)}" in second.output
    assert {p: p.stat().st_mtime_ns for p in files} == stamps
    broadcasting = course.assignments["broadcasting"]  # control: what changed is written again, and only that
    inputs_path(course.root, broadcasting).write_bytes(b"")
    third = runner.invoke(app, ["build", "-c", str(course.root)])
    assert third.exit_code == 0 and third.output.count("wrote ") == 1, third.output
    assert "wrote source/broadcasting/broadcasting.ipynb" in third.output
    assert not is_stale(course.root, broadcasting)
