"""The README's instructor workflow, run in a git clone of this repository, leaves the clone clean: every file it
writes is ignored by git and by ruff (issue 19, point 5).

The clone holds the working tree's tracked files, committed once. Two students fetch and submit through
nbgrader's exchange, as students do; the teacher then runs every command of the README's workflow in order.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from graders import KIT_ROOT
from graders.model.exercise import load_assignment

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent
STUDENTS = ("ada", "gus")  # vectorized answers / the release notebook untouched


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200", **extra}


def run(cwd: Path, *args: str, ok: tuple[int, ...] = (0,), **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(args), cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=900)
    assert proc.returncode in ok, f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def clone_of_the_working_tree(dest: Path) -> Path:
    """The working tree as git sees it (tracked files with their edits, new files not ignored), committed in a
    fresh repository."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=KIT_ROOT,
                            capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = KIT_ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    run(dest, "git", "init", "-q")
    run(dest, "git", "add", "-A")
    run(dest, *git, "commit", "-q", "-m", "clone")
    return dest


def submit_as(student: str, repo: Path, home: Path, answered: bool) -> None:
    """``nbgrader fetch_assignment`` and ``nbgrader submit`` as ``student`` would run them, in their own folder."""
    home.mkdir()
    exchange = [f"--Exchange.root={repo / 'exchange'}", "--course=vecgrade"]
    run(home, "nbgrader", "fetch_assignment", "broadcasting", *exchange)
    if answered:
        from graders.course.personas import load_roster
        assignment = load_assignment(repo / "assignments" / "broadcasting.py")
        persona = next(p for p in load_roster(KIT_ROOT, assignment) if p.student == student)
        path = home / "broadcasting" / "broadcasting.ipynb"
        nbformat.write(persona.notebook(nbformat.read(path, as_version=4), assignment), path)
    run(home, "nbgrader", "submit", "broadcasting", *exchange, f"--student={student}")  # as their login would


def test_the_readme_workflow_leaves_the_clone_clean_and_ruff_passing(tmp_path):
    repo = clone_of_the_working_tree(tmp_path / "repo")
    assert run(repo, "git", "status", "--porcelain").stdout == ""  # control: a clean start
    run(repo, "vecgrade", "build")
    run(repo, "vecgrade", "validate", "broadcasting", "-e", "batch_outer", ok=(0, 1))  # its timings vary with load
    run(repo, "nbgrader", "generate_assignment", "broadcasting", "--force")
    run(repo, "nbgrader", "release_assignment", "broadcasting")
    for student in STUDENTS:
        submit_as(student, repo, tmp_path / student, answered=student == "ada")
    run(repo, "nbgrader", "collect", "broadcasting")
    assert sorted(p.name for p in (repo / "submitted").iterdir()) == list(STUDENTS)
    run(repo, "vecgrade", "grade", "broadcasting")
    run(repo, "vecgrade", "status", "broadcasting")
    run(repo, "vecgrade", "feedback", "broadcasting")
    run(repo, "vecgrade", "report", "broadcasting", "--csv", "parts.csv", "--html", "report.html")
    run(repo, "vecgrade", "export", "--to", "grades.csv")
    written = [name for name in ("exchange", "gradebook.db", "ungraded.csv", "parts.csv", "report.html",
                                 "grades.csv", "feedback", "autograded") if (repo / name).exists()]
    assert {"exchange", "gradebook.db", "parts.csv", "report.html", "grades.csv", "feedback"} <= set(written)
    assert run(repo, "git", "status", "--porcelain", "--untracked-files=all").stdout == ""
    lint = run(repo, str(BIN / "ruff"), "check", ".", ok=(0, 1))
    assert lint.returncode == 0, lint.stdout + lint.stderr
