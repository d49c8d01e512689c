"""``vecgrade --help`` stays fast: the command's modules import only typer and rich at the top (torch alone takes
seconds), and each stays a module of one command group, under 400 lines. ``vecgrade status`` and ``vecgrade export``
load no torch either: they read the definitions' catalogue (``graders.model.catalogue``), not the definitions."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from graders.course.demo import make_course
from graders.course.results import max_points
from graders.model.catalogue import CATALOGUE

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "nbgrader", "nbformat", "distributed", "sqlalchemy", "matplotlib", "numpy")


def heavy_imports(module: str) -> list[str]:
    """The heavy libraries that importing ``module`` loads, in a fresh interpreter."""
    code = f"import sys, {module}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return result.stdout.split()


def test_the_command_loads_none_of_the_heavy_libraries():
    assert heavy_imports("graders.cli") == []


def test_a_module_that_imports_torch_is_caught():
    assert "torch" in heavy_imports("graders.model.exercise")


def test_help_lists_every_command():
    result = subprocess.run([sys.executable, "-m", "graders.cli", "--help"], capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    for command in ("build", "validate", "grade", "feedback", "report", "status", "export", "demo", "serve"):
        assert f" {command} " in result.stdout, command


@pytest.mark.parametrize("path", sorted((ROOT / "graders" / "cli").glob("*.py")), ids=lambda p: p.name)
def test_each_module_of_the_command_is_under_400_lines(path):
    assert len(path.read_text().splitlines()) <= 400


RUN = """import json, sys
from graders.cli import app
try:
    app(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "heavy": [m for m in HEAVY if m in sys.modules]}, f)
"""


def command_imports(tmp_path: Path, *args) -> list[str]:
    """The heavy libraries that running ``vecgrade ARGS`` loads, in a fresh interpreter (the command must succeed)."""
    out = tmp_path / "loaded.json"
    code = f"HEAVY = {HEAVY!r}\n{RUN}"
    result = subprocess.run([sys.executable, "-c", code, str(out), *map(str, args)], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    found = json.loads(out.read_text())
    assert found["code"] == 0, result.stdout + result.stderr
    return found["heavy"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A course with a gradebook: broadcasting's grade cells, ada graded."""
    course = make_course(tmp_path_factory.mktemp("startup") / "course")
    points = max_points(course.catalogue["broadcasting"])  # writes the catalogue (imports the definitions, here)
    with course.api(), Gradebook(course.db_url) as gb:
        gb.add_assignment("broadcasting")
        gb.add_notebook("broadcasting", "broadcasting")
        for gid, p in points.items():
            gb.add_grade_cell(gid, "broadcasting", "broadcasting", max_score=p, cell_type="code")
        gb.add_student("ada")
        gb.add_submission("broadcasting", "ada")
    return course


@pytest.mark.parametrize("command", ["status", "export"])
def test_status_and_export_load_no_torch(graded, tmp_path, command):
    extra = ["--to", tmp_path / "grades.csv"] if command == "export" else []
    assert "torch" not in command_imports(tmp_path, command, "-c", graded.root, *extra)


def test_a_command_that_loads_torch_is_caught(graded, tmp_path):
    """A changed definition makes status import the definitions (torch and all) once, and write the catalogue."""
    with open(graded.root / "assignments" / "lessons" / "broadcasting.md", "a") as lesson:
        lesson.write("\na change\n")
    assert "torch" in command_imports(tmp_path, "status", "-c", graded.root)
    assert (graded.root / CATALOGUE).exists()
    assert "torch" not in command_imports(tmp_path, "status", "-c", graded.root)
