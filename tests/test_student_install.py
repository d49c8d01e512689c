"""A student's install, as the notebook's first cell tells it: the course's wheel or its repository, in a fresh venv.

The wheel is the one ``vecgrade build --wheel`` writes. The fresh venv gets the
course's dependencies without reinstalling torch: a folder of links to this
environment's packages (less vecgrade itself) is put on its path, and the modules
that only the extras bring are blocked, so what runs there is what a student who
ran ``pip install <wheel>`` has. pip still resolves the wheel's own requirements
there (they are found installed), and installs nothing from an index.
"""
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from graders.entry import INSTRUCTOR_MODULES
from graders.pipeline.nbgrader_seam import TESTED
from graders.student import install

from tests.testkit import ROOT

pytestmark = pytest.mark.e2e  # venvs, pip and a kernel's worth of cells: about a minute

EXTRA_ONLY = (*INSTRUCTOR_MODULES, "jupyterlab", "ipykernel", "jupyter_server", "notebook", "distributed",
              "matplotlib", "psycopg2")
BLOCKER = f"import sys; sys.modules.update(dict.fromkeys({EXTRA_ONLY!r}))  # only the extras install these\n"
GOOD = "def batch_outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
TRIPLE_LOOP = ("def batch_outer(a):\n    B, F = a.shape\n    out = torch.empty(B, F, F, dtype=a.dtype)\n"
               "    for b in range(B):\n        for i in range(F):\n            for j in range(F):\n"
               "                out[b, i, j] = a[b, i] * a[b, j]\n    return out\n")


def run(*command, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600, **kwargs)


def pip(python: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    """This environment's pip, installing into ``python``'s venv (so the fresh venv needs no pip of its own)."""
    return run(sys.executable, "-m", "pip", "--python", python, *args, **kwargs)


def dependencies_folder(tmp: Path) -> Path:
    """Links to this environment's packages, vecgrade's own install left out."""
    site = Path(sysconfig.get_paths()["purelib"])
    folder = tmp / "deps"
    folder.mkdir()
    for entry in site.iterdir():
        if "vecgrade" in entry.name.lower() or entry.suffix == ".pth":
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


def fresh_venv(tmp: Path, name: str) -> Path:
    """A venv without vecgrade, with the course's dependencies found installed and the extras' modules blocked."""
    venv = tmp / name
    result = run(sys.executable, "-m", "venv", "--without-pip", venv)
    assert result.returncode == 0, result.stderr
    python = venv / "bin" / "python"
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    deps = tmp / "deps" if (tmp / "deps").exists() else dependencies_folder(tmp)
    (site / "course-dependencies.pth").write_text(f"{deps}\n{BLOCKER}")
    return python


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of ``vecgrade build --wheel``, run on a fresh course folder."""
    from graders.course.demo import make_course
    course = make_course(tmp_path_factory.mktemp("course") / "course")
    result = run(sys.executable, "-m", "graders.cli", "build", "--wheel", "--course", course.root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"wrote dist/{install.WHEEL}" in result.stdout and install.FROM_WHEEL in result.stdout
    return course.root / "dist" / install.WHEEL


@pytest.fixture(scope="module")
def student(wheel, tmp_path_factory) -> Path:
    """A fresh venv after `pip install <the wheel>`, run next to it as the first cell says."""
    tmp = tmp_path_factory.mktemp("student")
    python = fresh_venv(tmp, "venv")
    result = pip(python, "install", "--no-index", wheel.name, cwd=wheel.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "torch" not in result.stdout.split("Successfully installed")[-1]  # found installed, not reinstalled
    return python


def test_the_wheel_is_named_as_the_notebook_says_and_declares_the_lab_extra(wheel):
    with zipfile.ZipFile(wheel) as zf:
        metadata = zf.read(f"vecgrade-{wheel.name.split('-')[1]}.dist-info/METADATA").decode()
    lab = [line for line in metadata.splitlines() if line.startswith("Requires-Dist") and "extra == \"lab\"" in line]
    assert {Requirement(line.split(":", 1)[1]).name for line in lab} == {"jupyterlab", "ipykernel", "nbgrader"}
    notebook = json.loads((ROOT / "source" / "broadcasting" / "broadcasting.ipynb").read_text())
    first = "".join(notebook["cells"][0]["source"])
    assert install.FROM_WHEEL in first and install.FROM_REPOSITORY in first and install.LAB in first
    assert "pip install vecgrade`" not in first  # the old line, which finds no package


def test_version_works_in_a_student_install_and_the_instructor_commands_say_what_to_install(student):
    vecgrade = student.parent / "vecgrade"
    version = run(vecgrade, "--version")
    assert version.returncode == 0 and version.stdout.strip() == "vecgrade " + install.WHEEL.split("-")[1], version
    refused = run(vecgrade, "build")
    assert refused.returncode == 2 and refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("error: the instructor's commands need nbgrader") and install.INSTRUCTOR in line


def test_the_lab_extra_resolves_against_the_installed_wheel_without_any_index(student):
    """`pip install "vecgrade[lab]"` after the wheel: pip takes vecgrade as installed and adds only the extra."""
    result = pip(student, "install", "--no-index", "--dry-run", "vecgrade[lab]")
    assert result.returncode == 0 and "does not provide the extra" not in result.stderr, result.stdout + result.stderr
    pulled = {line.split()[3] for line in result.stdout.splitlines()
              if line.startswith("Requirement already satisfied") and "(from vecgrade[lab])" in line}
    assert {"jupyterlab>=4.2", "ipykernel>=6", f"nbgrader{TESTED}"} <= pulled, result.stdout


def test_the_notebook_runs_its_self_check_in_a_student_install(student, tmp_path):
    """The released notebook's cells, run by IPython in the student's venv: the package comes from the wheel,
    a vectorized answer passes correct and vectorized, and a triple loop is never told "fast" passes."""
    script = tmp_path / "run_cells.py"
    script.write_text(f'''
import contextlib, io, json, sys
import graders
from IPython.core.interactiveshell import InteractiveShell
assert "{ROOT}" not in graders.__file__, graders.__file__
nb = json.load(open("broadcasting.ipynb"))
shell = InteractiveShell.instance()
shell.history_manager.enabled = False
for answer in sys.argv[1:]:
    shell.reset(new_session=True)
    shown = {{}}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        grade_id = cell["metadata"]["nbgrader"]["grade_id"]
        source = open(answer).read() if grade_id == "batch_outer_answer" else "".join(cell["source"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            shell.run_cell(source, store_history=True)
        shown[grade_id] = out.getvalue()
    print(json.dumps({{k: v for k, v in shown.items() if k.startswith("batch_outer")}}))
''')
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "loop.py").write_text(TRIPLE_LOOP)
    result = run(student, script, tmp_path / "good.py", tmp_path / "loop.py", cwd=ROOT / "source" / "broadcasting",
                 env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 0, result.stderr
    good, loop = (json.loads(line) for line in result.stdout.strip().splitlines())
    assert good["batch_outer_correct"].startswith("correct: passes the self-check")
    assert good["batch_outer_vectorized"].startswith("vectorized: passes the self-check")
    assert "NotVectorized" in loop["batch_outer_vectorized"] and "`for` loop" in loop["batch_outer_vectorized"]
    for shown in (good["batch_outer_fast"], loop["batch_outer_fast"]):
        assert shown.startswith("fast: not checked here: the grader times it") and "pass" not in shown


def test_pip_installs_from_the_course_repository(tmp_path):
    """`pip install "git+<course repo>"`: the repository's committed kit, built by pip, gives the same package."""
    if run("git", "-C", ROOT, "rev-parse", "HEAD").returncode != 0:
        pytest.skip("not a git checkout: nothing to install from")
    python = fresh_venv(tmp_path, "venv")
    result = pip(python, "install", "--no-index", "--no-build-isolation", f"git+file://{ROOT}")
    assert result.returncode == 0, result.stdout + result.stderr
    version = run(python.parent / "vecgrade", "--version")
    assert version.returncode == 0 and version.stdout.startswith("vecgrade "), version
    found = run(python, "-c", "import graders.student.selfcheck as s; print(s.__file__)", cwd=tmp_path)
    assert found.returncode == 0 and str(python.parent.parent) in found.stdout, found
