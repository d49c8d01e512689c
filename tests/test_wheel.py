"""What the course's wheel ships: the self-check and nothing a student could copy answers from.

The wheel is built as ``vecgrade build --wheel`` builds it (``pip wheel --no-deps``) and every
file in it is searched, by content, for the course's answers: the reference bodies, the
exercises' ``def`` lines (demo answers and definitions both have them) and the assignment
definitions. A file name check alone would miss an answer that moved.
"""
import subprocess
import sys
import zipfile

import pytest

from graders.course.wheel import WheelError, build_wheel
from graders.model.exercise import load_course
from graders.student.install import WHEEL

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")
EXERCISES = [ex for a in COURSE.values() for ex in a.exercises]
BLOCK_INSTRUCTOR = ("import sys\n"
                    "for m in ('nbgrader', 'typer', 'rich', 'nbformat', 'nbclient', 'jupyterlab'):\n"
                    "    sys.modules[m] = None  # as if `pip install vecgrade` had not installed them\n")


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory):
    """The files of the wheel ``vecgrade build --wheel`` hands out (pip wheel --no-deps of the checkout)."""
    wheel = build_wheel(tmp_path_factory.mktemp("wheel"))
    assert wheel.name == WHEEL
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name).decode("utf-8", "replace") for name in zf.namelist()}


def answer_lines(ex) -> list[str]:
    """The reference's distinctive lines: long enough not to be boilerplate."""
    return [line.strip() for line in ex.reference_body().splitlines() if len(line.strip()) > 12]


def leaks(files: dict[str, str], needles: list[str]) -> list[tuple[str, str]]:
    return [(name, needle) for name, text in files.items() for needle in needles if needle in text]


def test_every_exercise_has_a_distinctive_reference_line_to_search_for():
    assert all(answer_lines(ex) for ex in EXERCISES), [ex.name for ex in EXERCISES if not answer_lines(ex)]


def test_the_search_finds_an_answer_that_is_present():
    ex = EXERCISES[0]
    planted = {"graders/demo_answers.py": f"{ex.signature}\n{ex.reference_body()}\n"}
    assert leaks(planted, answer_lines(ex)) and leaks(planted, [f"def {ex.name}("])
    assert leaks({"graders/x.py": COURSE[next(iter(COURSE))].lesson}, [COURSE[next(iter(COURSE))].lesson.splitlines()[0]])


def test_the_wheel_holds_the_self_check_and_no_reference_solution(wheel_files):
    assert "graders/student/selfcheck.py" in wheel_files
    needles = [line for ex in EXERCISES for line in answer_lines(ex)]
    assert leaks(wheel_files, needles) == []


def test_the_wheel_holds_no_assignment_definitions(wheel_files):
    assert not [n for n in wheel_files if n.startswith("assignments/") or n.endswith(".ipynb")]
    texts = [a.lesson.splitlines()[0] for a in COURSE.values()] + [ex.task.splitlines()[0] for ex in EXERCISES]
    assert leaks(wheel_files, texts) == []


def test_the_wheel_defines_no_exercise_function(wheel_files):
    """Demo personas and definitions write `def <exercise>(`; the kit itself never does."""
    assert leaks(wheel_files, [f"def {ex.name}(" for ex in EXERCISES]) == []


def test_the_student_side_imports_without_the_instructor_extra():
    code = BLOCK_INSTRUCTOR + "import graders.student.selfcheck\nprint('imported')\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "imported" in result.stdout, result.stderr


def test_the_command_without_the_instructor_extra_says_what_to_install():
    code = BLOCK_INSTRUCTOR + "from graders.entry import main\nmain()\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert 'pip install "vecgrade[instructor]"' in result.stderr and "Traceback" not in result.stderr


def test_the_command_with_the_instructor_extra_runs_the_cli():
    result = subprocess.run([sys.executable, "-c", "from graders.entry import main; main()", "--help"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "build" in result.stdout, result.stderr


def test_version_works_without_the_instructor_extra():
    code = BLOCK_INSTRUCTOR + "import sys\nsys.argv[1:] = ['--version']\nfrom graders.entry import main\nmain()\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and result.stdout.strip() == f"vecgrade {WHEEL.split('-')[1]}", result


def test_a_wheel_cannot_be_built_without_the_kits_checkout(tmp_path):
    with pytest.raises(WheelError, match="has no pyproject.toml"):
        build_wheel(tmp_path / "dist", kit_root=tmp_path)
    assert not (tmp_path / "dist").exists()
