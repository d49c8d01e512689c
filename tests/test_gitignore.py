"""What the instructor's workflow writes in the course folder (the checkout) stays out of git: nbgrader's folders,
the gradebook and its lock, and `vecgrade serve`'s ledger and lock, named by the code that writes them."""
import shutil
import subprocess

import pytest

from graders.course.lock import LOCK_NAME
from graders.model.catalogue import CATALOGUE
from graders.serve.ledger import LEDGER_FILE
from graders.serve.service import SERVICE_LOCK

from tests.testkit import ROOT

WRITTEN = [LEDGER_FILE, f"{LEDGER_FILE}-journal", SERVICE_LOCK, LOCK_NAME, CATALOGUE, "gradebook.db", "ungraded.csv",
           "arrivals.csv", "grades.csv", "canvas.csv", "moodle.csv", "downloaded/broadcasting/archive/all.zip", "submitted/ada/broadcasting/broadcasting.ipynb",
           "docs/__pycache__/hooks.cpython-311.pyc", "site/index.html"]
KEPT = ["assignments/broadcasting.py", "nbgrader_config.py", "docs/instructor.md", "source/broadcasting/x.ipynb"]


def ignored(paths: list[str]) -> set[str]:
    """The paths git would ignore in this checkout (``git check-ignore`` reads .gitignore; the files need not exist)."""
    done = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "--no-index", "--stdin"], input="\n".join(paths),
                          capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    return set(done.stdout.split())


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_what_the_workflow_writes_is_ignored_and_the_course_is_not():
    assert ignored(WRITTEN) == set(WRITTEN)
    assert ignored(KEPT) == set()
