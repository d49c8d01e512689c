"""The README's instructor workflow, run in a git clone of this repository, leaves the clone clean: every file it
writes is ignored by git and by ruff (issue 19, point 5).

The clone holds the working tree's tracked files, committed once. Two students fetch and submit through
nbgrader's exchange, as students do; the teacher runs the README's workflow block as written, command by command
(``vecgrade demo --submissions-only`` in it adds the demo class), in the clone's ``.venv``.
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from graders import KIT_ROOT
from graders.course.personas import load_roster
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
        assignment = load_assignment(repo / "assignments" / "broadcasting.py")
        persona = next(p for p in load_roster(KIT_ROOT, assignment) if p.student == student)
        path = home / "broadcasting" / "broadcasting.ipynb"
        nbformat.write(persona.notebook(nbformat.read(path, as_version=4), assignment), path)
    run(home, "nbgrader", "submit", "broadcasting", *exchange, f"--student={student}")  # as their login would


def readme_workflow(readme: Path) -> list[str]:
    """The commands of the README's workflow block (the first ``bash`` block under "## The workflow"), each as
    written, less its comment (quoted for the shell again: a due date holds spaces)."""
    section = readme.read_text().split("## The workflow", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.join(shlex.split(line, comments=True)) for line in block.splitlines()
            if shlex.split(line, comments=True)]


def activatable(repo: Path) -> None:
    """``.venv/`` in the clone, as ``make install`` makes it: its ``bin`` is this test's venv (the clone's
    ``source .venv/bin/activate`` then activates it), or, where this Python has no activate script, a stand-in
    that puts it first on PATH."""
    (repo / ".venv").mkdir()
    if (BIN / "activate").is_file():
        (repo / ".venv" / "bin").symlink_to(BIN, target_is_directory=True)
    else:
        (repo / ".venv" / "bin").mkdir()
        (repo / ".venv" / "bin" / "activate").write_text(f'export PATH="{BIN}:$PATH"\n')


def test_the_readme_workflow_runs_as_written_and_leaves_the_clone_clean_and_ruff_passing(tmp_path):
    repo = clone_of_the_working_tree(tmp_path / "repo")
    assert run(repo, "git", "status", "--porcelain").stdout == ""  # control: a clean start
    activatable(repo)
    commands = readme_workflow(repo / "README.md")
    assert commands[0] == "source .venv/bin/activate", commands
    for needed in ("vecgrade build --wheel", "vecgrade build", "nbgrader collect --update broadcasting",
                   "vecgrade extend broadcasting ada --hours 48",
                   "vecgrade demo --submissions-only", "vecgrade grade broadcasting", "vecgrade export --to grades.csv"):
        assert needed in commands, (needed, commands)  # control: the block holds the steps asserted below
    roster = sorted(p.student for p in load_roster(KIT_ROOT, load_assignment(repo / "assignments" / "broadcasting.py")))
    for command in commands[1:]:
        # validate's timings vary with load: it may report a speed problem (exit 1), never a mistake (exit 2)
        ok = (0, 1) if command.startswith("vecgrade validate") else (0,)
        done = run(repo, "bash", "-c", f"{commands[0]} && {command}", ok=ok)
        assert "Traceback" not in done.stdout + done.stderr, (command, done.stderr)
        if command.startswith("nbgrader release_assignment"):  # the students fetch and submit, as students do
            for student in STUDENTS:
                submit_as(student, repo, tmp_path / student, answered=student == "ada")
        elif command.startswith("nbgrader collect"):
            assert sorted(p.name for p in (repo / "submitted").iterdir()) == list(STUDENTS)
        elif command.startswith("vecgrade build --wheel"):
            assert list((repo / "dist").glob("vecgrade-*.whl")), done.stdout
        elif command == "vecgrade build":  # after build --wheel: nothing left to write
            assert "up to date, not written" in done.stdout and "wrote" not in done.stdout, done.stdout
        elif command.startswith("vecgrade demo --submissions-only"):
            assert sorted(p.name for p in (repo / "submitted").iterdir()) == roster
        elif command.startswith("vecgrade grade"):
            assert f"graded {len(roster)} of {len(roster)} submissions" in done.stdout, done.stdout
        elif command == "vecgrade status":  # graded as collected: nothing resubmitted, nothing waiting
            row = next(line for line in done.stdout.splitlines() if line.startswith("│ broadcasting"))
            cells = [c.strip() for c in row.split("│")[1:-1]]
            assert cells[2:6] == [str(len(roster)), str(len(roster)), "0", "0"], done.stdout
            assert "resubmitted" not in done.stdout and "waiting in the exchange" not in done.stdout, done.stdout
            assert "broadcasting: extension ada: +48 h" in done.stdout, done.stdout
        elif command.startswith("vecgrade extend"):  # before ada's submission is in the gradebook
            assert ("ada: +48 h, due 2030-06-03 17:00 UTC (the assignment: 2030-06-01 17:00 UTC); no submission "
                    "graded yet") in done.stdout, done.stdout
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{repo / 'gradebook.db'}") as gb:  # grading kept the extension, and graded ada
        ada = gb.find_submission("broadcasting", "ada")
        assert ada.extension is not None and ada.extension.total_seconds() == 48 * 3600 and ada.timestamp
    written = [name for name in ("exchange", "gradebook.db", "ungraded.csv", "parts.csv", "report.html",
                                 "grades.csv", "canvas.csv", "feedback", "autograded", "dist") if (repo / name).exists()]
    assert {"exchange", "gradebook.db", "parts.csv", "report.html", "grades.csv", "canvas.csv", "feedback",
            "dist"} <= set(written)
    assert run(repo, "git", "status", "--porcelain", "--untracked-files=all").stdout == ""
    lint = run(repo, str(BIN / "ruff"), "check", ".", ok=(0, 1))
    assert lint.returncode == 0, lint.stdout + lint.stderr
