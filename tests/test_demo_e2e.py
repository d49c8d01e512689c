"""`make demo`'s command, `vecgrade demo --dir demo-course`, as a teacher runs it (issue 19, point 3): every simulated
student gets what they deserve, and its grades.csv is the file `vecgrade export` writes, not nbgrader's own format
under the same name."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.plugins.export import CsvExportPlugin

from graders.coursedir.course import Course

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent


def vecgrade(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    return subprocess.run(["vecgrade", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1500)


def test_the_demo_grades_as_deserved_and_writes_the_export(tmp_path):
    demo = vecgrade(tmp_path, "demo", "--dir", "demo-course")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "every student got the grade they deserve" in demo.stdout and demo.stderr == ""
    course = tmp_path / "demo-course"
    export = vecgrade(course, "export", "broadcasting", "--to", str(tmp_path / "export.csv"))
    assert export.returncode == 0, export.stdout + export.stderr
    written = (course / "grades.csv").read_text()
    assert written == (tmp_path / "export.csv").read_text()
    assert written.splitlines()[1].startswith("max points,")
    with Gradebook(Course(course).db_url) as gb:  # control: nbgrader's own CSV is another file
        CsvExportPlugin(to=str(tmp_path / "nbgrader.csv")).export(gb)
    assert (tmp_path / "nbgrader.csv").read_text() != written
