"""``vecgrade --help`` stays fast: the command's modules import only typer and rich at the top (torch alone takes
seconds), and each stays a module of one command group, under 400 lines."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
