"""A verdict is kept under the grader's own code as well as the definitions: a newer grader (a rule, a tolerance
or a measurement changed) never reuses a verdict an older one kept."""
import shutil
from pathlib import Path

from graders.model.fingerprint import DECIDING, code_fingerprint, grader_fingerprint

PACKAGE = Path(__file__).resolve().parent.parent / "graders"


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "graders"
    for sub in (*DECIDING, "serve"):
        shutil.copytree(PACKAGE / sub, copy / sub, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_change_to_the_deciding_code_changes_the_fingerprint(tmp_path):
    copy = _copy(tmp_path)
    before = code_fingerprint(copy)
    assert before == grader_fingerprint()  # the same files, the same digest
    compare = copy / "checks" / "compare.py"
    compare.write_text(compare.read_text() + "\n# a tolerance changed\n")
    assert code_fingerprint(copy) != before


def test_a_change_elsewhere_keeps_the_fingerprint(tmp_path):
    copy = _copy(tmp_path)
    before = code_fingerprint(copy)
    pages = copy / "serve" / "pages.py"
    pages.write_text(pages.read_text() + "\n# a page's wording changed\n")
    assert code_fingerprint(copy) == before


def test_the_verdict_salt_holds_it(monkeypatch):
    from graders import KIT_ROOT
    from graders.checks import submission
    from graders.model.exercise import load_course
    assignment = load_course(KIT_ROOT / "assignments")["broadcasting"]
    args = (0, assignment, None, None, True)
    salt = submission.verdict_salt(*args)
    monkeypatch.setattr(submission, "grader_fingerprint", lambda: "a newer grader")
    assert submission.verdict_salt(*args) != salt
