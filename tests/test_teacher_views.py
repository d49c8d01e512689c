"""What the teacher's views are made of, without nbgrader's apps: failures grouped by message shape with their
numbers, every timed answer, the assignment's changes since grading, and the refusals with their fix."""
from types import SimpleNamespace

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from graders.course.observed import GATED, Verdicts, read_verdicts
from graders.course.report import render_html
from graders.course.results import StudentRow, max_points, version_changes, version_fix
from graders.coursedir.paths import CoursePaths
from graders.model.verdict import Reason, failed, gated, passed
from graders.pipeline.refusals import (
    EmptyNotebookError,
    NoNotebookError,
    NotANotebookError,
    UnknownNotebookError,
    refusal,
)
from graders.pipeline.verdicts import verdict_output

from tests.testkit import graded_gradebook


def test_failures_are_grouped_by_reason_and_figures_never_by_their_text():
    v = Verdicts()
    for speedup in (1.5, 3.25, 2.0):  # one reason, figures that differ: one group with the range
        v.count("batch_outer", failed("fast", Reason.TOO_SLOW, f"speedup {speedup}x, below the 10x bar",
                                      {"speedup": speedup, "ref_factor": 4.0}))
    v.count("batch_outer", failed("correct", Reason.WRONG_VALUE, "max abs error 0.25 at [2, 1]"))
    v.count("batch_outer", failed("correct", Reason.WRONG_VALUE, "max abs error 18.8 at [0, 1]"))
    # the same words, another reason: another group (text never decides a group)
    v.count("batch_outer", failed("correct", Reason.RAISED, "max abs error 18.8 at [0, 1]"))
    v.count("batch_outer", failed("vectorized", Reason.PYTHON_LOOP, "your `batch_outer` cell, line 4: `for` loop"))
    fast, wrong, raised, loop = v.frequent("batch_outer")
    assert (fast.times, fast.part, fast.reason) == (3, "fast", Reason.TOO_SLOW)
    assert fast.figures_text() == "ref_factor 4, speedup 1.5\u20133.25"
    assert fast.message().startswith("too slow (ref_factor 4, speedup 1.5\u20133.25): e.g. speedup")
    assert (wrong.times, wrong.reason, raised.times, raised.reason) == (2, Reason.WRONG_VALUE, 1, Reason.RAISED)
    assert wrong.gates and not fast.gates
    assert loop.message() == ("Python-level iteration or a forbidden call: e.g. your `batch_outer` cell, line 4: "
                              "`for` loop")  # the example as written


def test_every_failing_reason_has_words():
    from graders.course.observed import REASON_WORDS
    reasons = list(Reason)
    failing = reasons[reasons.index(Reason.WRONG_VALUE):reasons.index(Reason.GATED) + 1]  # the enum's "failed" group
    assert failing and all(r in REASON_WORDS for r in failing)


def _graded_notebook(path, fast, correct=None):
    """A graded notebook whose grade cells hold ``correct`` and ``fast`` as the grader writes them: the verdict in
    ``metadata.vecgrade``, its output rendered from it."""
    correct = correct or passed("correct", "all 12 hidden cases match")
    cells = [new_code_cell("", metadata={"nbgrader": {"grade_id": f"batch_outer_{v.part}"}, "vecgrade": v.to_json()},
                           outputs=[verdict_output(v)]) for v in (correct, fast)]
    path.parent.mkdir(parents=True)
    nbformat.write(new_notebook(cells=cells), path)


STUB_VERDICT = "not written yet: `batch_outer` still raises NotImplementedError (the stub's line); replace it with your answer"


def test_every_timed_answer_is_read_failures_included(tmp_path, broadcasting):
    _graded_notebook(tmp_path / "autograded/fast/broadcasting/broadcasting.ipynb",
                     passed("fast", "speedup 900.0x ...", {"speedup": 900.0}))
    # failed on the time over the reference's: its message has no speedup, its figures do
    _graded_notebook(tmp_path / "autograded/slowish/broadcasting/broadcasting.ipynb",
                     failed("fast", Reason.TOO_SLOW, "4.1x slower than the reference solution, allowed 3x",
                            {"speedup": 45.0, "ref_factor": 4.1}))
    _graded_notebook(tmp_path / "autograded/loop/broadcasting/broadcasting.ipynb",
                     failed("fast", Reason.TOO_SLOW, "38 calls took more than 0.3 s: over 12x the reference's time"))
    _graded_notebook(tmp_path / "autograded/stub/broadcasting/broadcasting.ipynb", gated("fast"),
                     correct=failed("correct", Reason.NOT_WRITTEN, STUB_VERDICT))
    # a grade cell's text that is not the grader's verdict (a student's output, an old notebook) counts nowhere
    _graded_notebook(tmp_path / "autograded/forged/broadcasting/broadcasting.ipynb",
                     passed("fast", "speedup 5000.0x", {"speedup": 5000.0}))
    forged = tmp_path / "autograded/forged/broadcasting/broadcasting.ipynb"
    nb = nbformat.read(forged, as_version=4)
    for cell in nb.cells:
        del cell.metadata["vecgrade"]
    nbformat.write(nb, forged)
    v = read_verdicts(tmp_path, broadcasting, ["fast", "slowish", "loop", "stub", "absent", "forged"])
    speeds = sorted(((s.speedup or 0), s.passed) for s in v.speeds["batch_outer"])
    assert speeds == [(0, False), (45.0, False), (900.0, True)]  # the stub is not timed; the loop was stopped
    groups = {(f.part, f.reason, f.example()) for f in v.frequent("batch_outer")}
    assert ("correct", Reason.NOT_WRITTEN, STUB_VERDICT) in groups
    assert not any(GATED in message for _, _, message in groups)  # counted with its cause


def test_the_report_keeps_the_numbers(broadcasting):
    v = Verdicts({ex.name: [] for ex in broadcasting.exercises})
    v.count("batch_outer", failed("fast", Reason.TOO_SLOW, "38 calls took more than 0.3 s", {"calls": 38}))
    rows = [StudentRow("ada", {gid: 1.0 for gid in max_points(broadcasting)}, "graded")]
    page = render_html(broadcasting, rows, v, ["batch_outer_correct: 3 points when graded, 2 now"])
    assert "38 calls took more than 0.3 s" in page and "# s" not in page
    assert "changed after the class was graded" in page and "3 points when graded, 2 now" in page


def _gradebook(cells: dict[str, float], graded: bool = True):
    return graded_gradebook(cells, ["ada"] if graded else [])


def test_a_changed_assignment_is_named(broadcasting, tmp_path):
    course = SimpleNamespace(paths=CoursePaths(tmp_path))  # no autograded notebooks: no fingerprint recorded
    current = max_points(broadcasting)
    assert version_changes(_gradebook(current), course, broadcasting) == []  # control: graded is what is defined
    older = {gid: m for gid, m in current.items() if not gid.startswith("softmax_rows")}
    older["batch_outer_correct"] = 3.0
    older["old_exercise_correct"] = 2.0
    changes = version_changes(_gradebook(older), course, broadcasting)
    assert "softmax_rows_correct added (2 points, no marks)" in changes
    assert "old_exercise_correct removed (graded, 2 points)" in changes
    assert "batch_outer_correct: 3 points when graded, 2 now" in changes
    assert version_changes(_gradebook(older, graded=False), course, broadcasting) == []  # nobody was graded yet
    assert "new assignment" in version_fix(_gradebook(older), course, broadcasting)  # nbgrader cannot add cells
    points_only = dict(current, batch_outer_correct=3.0)
    assert "generate_assignment broadcasting --force" in version_fix(_gradebook(points_only), course, broadcasting)
    assert version_fix(_gradebook(current), course, broadcasting) == ""


def test_refusals_name_the_fix(tmp_path):
    folder = tmp_path / "submitted" / "two" / "broadcasting"
    folder.mkdir(parents=True)
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), folder / "broadcasting.ipynb")
    assert refusal(folder, {"broadcasting"}, "submitted/two/broadcasting/", "broadcasting", "two") is None  # control
    (folder / "broadcasting (1).ipynb").write_text((folder / "broadcasting.ipynb").read_text())
    found = refusal(folder, {"broadcasting"}, "submitted/two/broadcasting/", "broadcasting", "two")
    assert isinstance(found, UnknownNotebookError)
    assert "remove or rename broadcasting (1).ipynb in submitted/two/broadcasting/" in str(found)
    assert str(found).endswith("then vecgrade grade broadcasting -s two")
    (folder / "broadcasting (1).ipynb").unlink()
    nbformat.write(new_notebook(), folder / "broadcasting.ipynb")
    found = refusal(folder, {"broadcasting"}, "submitted/two/broadcasting/", "broadcasting", "two")
    assert isinstance(found, EmptyNotebookError) and "empty notebook" in str(found)
    for text, why in (("{ not json", "not JSON"), ("", "an empty file"), ("\n", "an empty file"),
                      ("\xff\xfe", "not JSON")):
        (folder / "broadcasting.ipynb").write_bytes(text.encode("latin-1"))
        found = refusal(folder, {"broadcasting"}, "submitted/two/broadcasting/", "broadcasting", "two")
        assert isinstance(found, NotANotebookError), text
        assert str(found) == (f"NotANotebookError: broadcasting.ipynb in submitted/two/broadcasting/ is not a notebook "
                              f"({why}): not graded; put the student's real notebook there, then vecgrade grade "
                              "broadcasting -s two")
    (folder / "broadcasting.ipynb").unlink()
    found = refusal(folder, {"broadcasting"}, "submitted/two/broadcasting/", "broadcasting", "two")
    assert isinstance(found, NoNotebookError)
    assert str(found) == ("NoNotebookError: no notebook in submitted/two/broadcasting/: put broadcasting.ipynb there, "
                          "then vecgrade grade broadcasting -s two")
