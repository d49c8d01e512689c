"""Issue 27: a verdict is a property of the program, or it is no verdict.

A poisoner's first exercise starts a process with ``os.posix_spawn`` (past the at-fork guard of the grading
child) that SIGKILLs every process started after it; its other answers are the class's popular correct
programs. Graded first, it used to store crash verdicts under those programs' keys, and every honest student
with the same programs got them. Now each exercise is judged in a jail of its own, a disrupted exercise is graded
again in a fresh one, and only verdicts decided from a clean observation are shared: every honest student keeps
every mark, serially and on two processes, and the poisoner's disruption costs only the poisoner's own exercise.
"""
import nbformat
import pytest

from graders.engine.coordinator import Engine
from graders.model.notebook import answer_id, grade_id_of
from graders.model.verdict import Reason, Status, cell_verdict

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e

KILLER = ("import os, time\n"
          "me = os.getpid()\n"
          "while True:\n"
          "    for p in os.listdir('/proc'):\n"
          "        if p.isdigit() and int(p) > me:\n"
          "            try:\n"
          "                os.kill(int(p), 9)\n"
          "            except OSError:\n"
          "                pass\n"
          "    time.sleep(0.002)\n")

POISON = ("import os, sys\n"
          "_started = []\n"
          "def batch_outer(a):\n"
          "    if not _started:\n"
          f"        _started.append(os.posix_spawn(sys.executable, [sys.executable, '-c', {KILLER!r}], {{}}))\n"
          "    return a[:, :, None] * a[:, None, :]\n")


def _notebook(course, answers: dict[str, str]):
    nb = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    for cell in nb.cells:
        for name, source in answers.items():
            if grade_id_of(cell) == answer_id(name):
                cell.source = source
    return nb


def _verdicts(course, student):
    nb = nbformat.read(course.root / "autograded" / student / "broadcasting" / "broadcasting.ipynb", as_version=4)
    out = {}
    for cell in nb.cells:
        v = cell_verdict(cell)
        if v is not None:
            out[grade_id_of(cell)] = v
    return out


@pytest.fixture(scope="module")
def course(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("poison") / "course", broadcasting)
    honest = {ex.name: ex.reference_source() for ex in broadcasting.exercises}
    classes = {"aaa-poisoner": {**honest, "batch_outer": POISON}, "zed-victim": honest}
    for student, answers in classes.items():
        dest = course.root / "submitted" / student / "broadcasting"
        dest.mkdir(parents=True)
        nbformat.write(_notebook(course, answers), dest / "broadcasting.ipynb")
    return course


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_poisoner_graded_first_takes_no_mark_from_a_classmate(course, broadcasting, jobs):
    with Engine(course, "broadcasting", jobs=jobs) as grader:
        results = {r.student: r for r in grader.grade(["aaa-poisoner", "zed-victim"])}
    assert results["zed-victim"].success, results["zed-victim"].reason
    victim = _verdicts(course, "zed-victim")
    assert len(victim) == 3 * len(broadcasting.exercises)
    assert all(v.passed for v in victim.values()), {k: v.message for k, v in victim.items() if not v.passed}
    # the poisoner's other exercises, the same programs, were judged where the killer could not reach
    assert results["aaa-poisoner"].success, results["aaa-poisoner"].reason
    poisoner = _verdicts(course, "aaa-poisoner")
    for ex in broadcasting.exercises[1:]:
        for part in ("correct", "vectorized", "fast"):
            assert poisoner[f"{ex.name}_{part}"].passed, poisoner[f"{ex.name}_{part}"].message
    # its own exercise: judged as a program (outside the checked subset), never "not graded"
    own = poisoner["batch_outer_vectorized"]
    assert own.status is Status.FAILED and own.reason is Reason.OUTSIDE_SUBSET, own


def test_only_settled_verdicts_are_shared_and_a_disrupted_program_is_graded_again(course, broadcasting):
    """Control both ways: a program whose run was disrupted is not stored (and so not shared); a failing program
    shares its failure."""
    from graders.model.store import VerdictStore
    from graders.model.verdict import failed, not_graded
    store = VerdictStore()
    assert not store.put("k1", {"correct": not_graded("correct", Reason.KILLED, "died")})
    assert "k1" not in store
    assert store.put("k2", {"correct": failed("correct", Reason.WRONG_VALUE, "max abs error 1")})
    assert store.get("k2")["correct"].reason is Reason.WRONG_VALUE
