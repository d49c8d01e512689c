"""The built notebooks: equal to what is committed, shaped as nbgrader expects, and free of hidden data."""
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from graders.course.build import build_notebook, notebook_path, render
from graders.model.exercise import PARTS, load_course
from graders.student.selfcheck import check_loops, expect

COURSE = load_course(ROOT / "assignments")


@pytest.mark.parametrize("name", list(COURSE))
def test_committed_source_equals_a_fresh_build(name):
    path = notebook_path(ROOT, COURSE[name])
    assert path.exists(), f"{path} missing: run `vecgrade build`"
    assert path.read_text() == render(COURSE[name]), f"{path} is stale: run `vecgrade build`"


@pytest.mark.parametrize("name", list(COURSE))
def test_each_exercise_has_one_answer_cell_and_three_grade_cells(name):
    assignment = COURSE[name]
    nb = build_notebook(assignment)
    meta = {c.metadata["nbgrader"]["grade_id"]: (c, c.metadata["nbgrader"]) for c in nb.cells if "nbgrader" in c.metadata}
    for ex in assignment.exercises:
        cell, m = meta[f"{ex.name}_answer"]
        assert m["solution"] and not m["grade"]
        assert cell.source.startswith(ex.signature + "\n")
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
        assert meta[f"{ex.name}_loop"][1]["locked"]
        for part in PARTS:
            cell, m = meta[ex.grade_id(part)]
            assert m["grade"] and m["locked"] and m["points"] == ex.points.of(part)
            assert ex.name in cell.source and part in cell.source


@pytest.mark.parametrize("name", list(COURSE))
def test_grade_cells_hold_no_code_and_the_reference_stays_inside_the_solution_markers(name):
    assignment = COURSE[name]
    nb = build_notebook(assignment)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"]["solution"]:
            assert all(line.startswith("#") for line in cell.source.splitlines()), cell.source
    text = "\n".join(c.source for c in nb.cells if not c.metadata.get("nbgrader", {}).get("solution"))
    for ex in assignment.exercises:
        shown = ex.loop_source()  # setup lines the loop version shares with the reference are public anyway
        body = [line.strip() for line in ex.reference_body().splitlines()
                if len(line.strip()) > 25 and line.strip() not in shown]
        assert not any(line in text for line in body), f"reference code of {ex.name} leaks outside the solution"


def test_released_notebook_has_stubs_and_runs_its_examples(tmp_path, broadcasting):
    """Execute the student's release notebook: examples report 'not implemented', nothing crashes."""
    from graders.course.demo import make_course
    from graders.course.build import write_source
    course = make_course(tmp_path / "course")
    write_source(course.root, broadcasting)
    with course.api() as api:
        assert api.generate_assignment("broadcasting")["success"]
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    nb = nbformat.read(release, as_version=4)
    answers = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_answer")]
    assert all("raise NotImplementedError()" in c.source and "BEGIN SOLUTION" not in c.source for c in answers)
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "not implemented yet" in printed


def test_self_check_messages_match_the_grader(capsys):
    import torch
    expect("f(a)", lambda: torch.zeros(3, 4), torch.zeros(4, 3))
    assert "[x] f(a): output shape (3, 4), expected (4, 3)" in capsys.readouterr().out
    expect("f(a)", lambda: torch.ones(2), torch.ones(2))
    assert "[ok] f(a)" in capsys.readouterr().out

    def f(a):
        for r in a:
            pass
        return a
    check_loops(f)
    assert "`for` loop" in capsys.readouterr().out


def test_cli_build_check_passes_on_the_committed_course():
    result = subprocess.run([sys.executable, "-m", "graders.cli", "build", "--check", "--course", str(ROOT)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
