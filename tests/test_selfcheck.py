"""The self-check in a kernel: the grader's static rules over every cell run, work at two sizes, grade cells that raise.

The built broadcasting notebook runs cell by cell in an in-process IPython shell
(``run_cells``), with test answers in the answer cells; each check is shown
failing on a bad answer and passing on a good one.
"""
import contextlib
import io
import re
import signal
import time

import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell

from graders.checks.rules import grows
from graders.course.build import build_notebook
from graders.model.notebook import answer_id
from graders.student import selfcheck, work
from graders.student.selfcheck import AUTOGRADE_EXAMPLE_SECONDS, NOT_TIMED, Example, check_loops, estimate, expect

from tests.testkit import ROOT

GOOD = "def batch_outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
LOOP = ("def batch_outer(a):\n    B, F = a.shape\n    out = torch.empty(B, F, F, dtype=a.dtype)\n"
        "    for b in range(B):\n        out[b] = a[b, :, None] * a[b, None, :]\n    return out\n")
HELPER_IN_SAME_CELL = ("def rows(a):\n    # a helper the grader reaches from batch_outer\n\n\n"
                       "    return torch.stack(list(map(lambda r: r[:, None] * r[None, :], a)))\n\n"
                       "def batch_outer(a):\n    return rows(a)\n")
STUB = "def batch_outer(a):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"


def run_cells(assignment, answers: dict[str, str], extra: dict[str, str] | None = None) -> dict[str, tuple]:
    """Run every code cell of the built notebook in order, with ``answers`` (exercise -> source) in the
    answer cells and each ``extra`` (after grade_id -> source) inserted after that cell.

    Returns {grade_id: (error, printed)} where error is "Name: message" or None.
    """
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    history = shell.history_manager
    assert history is not None, "InteractiveShell.instance() sets up its history manager"
    history.enabled = False  # no sqlite history file for tests
    results = {}
    for cell in build_notebook(assignment).cells:
        if cell.cell_type != "code":
            continue
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        name = next((ex for ex in answers if answer_id(ex) == grade_id), None)
        sources = [answers[name] if name else cell.source]
        if extra and grade_id in extra:
            sources.append(extra[grade_id])
        for i, source in enumerate(sources):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                result = shell.run_cell(source, store_history=True, silent=False)
            exc = result.error_in_exec or result.error_before_exec
            error = f"{type(exc).__name__}: {exc}" if exc else None
            results[grade_id if i == 0 else f"{grade_id}+"] = (error, printed.getvalue())
    return results


HINT = "build the [B, F, F] result with broadcasting instead"


@pytest.fixture(autouse=True)
def next_to_the_notebook(monkeypatch):
    monkeypatch.chdir(ROOT / "source" / "broadcasting")  # where the release puts broadcasting.inputs.pt


def outcome(results, part):
    return results[f"batch_outer_{part}"][0]


def test_a_correct_vectorized_answer_passes_every_grade_cell(broadcasting):
    results = run_cells(broadcasting, {"batch_outer": GOOD})
    assert [outcome(results, p) for p in ("correct", "vectorized", "fast")] == [None, None, None]
    printed = results["batch_outer_examples"][1]
    assert "[ok] batch_outer(a) with a [2, 2]\n[ok] batch_outer(a) with a [2, 3]\n" in printed  # told apart
    assert "[ok] vectorized: no Python-level iteration; 4 ATen ops at size 4" in printed
    assert f"[~] fast: {NOT_TIMED} at size 24" in printed and "estimate on this machine at size 8: about" in printed
    assert "fast: not checked here: the grader times it" in results["batch_outer_fast"][1]
    assert "pass" not in results["batch_outer_fast"][1]


def test_the_stub_fails_correct_and_is_never_called_vectorized(broadcasting):
    results = run_cells(broadcasting, {"batch_outer": STUB})
    printed = results["batch_outer_examples"][1]
    assert "[ ] batch_outer(a) with a [2, 2]: not implemented yet" in printed
    assert "[ok] vectorized" not in printed and "[ ] vectorized: not graded" in printed
    assert outcome(results, "correct") == "Incorrect: batch_outer(a) with a [2, 2]: not implemented yet"
    assert outcome(results, "vectorized") == "NotVectorized: not graded until the answer is correct"
    assert outcome(results, "fast") == "TooSlow: not graded until the answer is correct"


def test_a_loop_answer_fails_vectorized_with_the_exercise_hint_and_the_cell_line(broadcasting):
    results = run_cells(broadcasting, {"batch_outer": LOOP})
    assert outcome(results, "correct") is None
    assert outcome(results, "vectorized") == f"NotVectorized: your `batch_outer` cell, line 4: `for` loop; {HINT}"


def test_a_helper_in_the_same_cell_is_seen_with_lines_counted_from_the_cell(broadcasting):
    results = run_cells(broadcasting, {"batch_outer": HELPER_IN_SAME_CELL})
    assert outcome(results, "correct") is None
    assert "your `batch_outer` cell, line 5: `map`" in outcome(results, "vectorized")
    assert "[x] vectorized: your `batch_outer` cell, line 5: `map`" in results["batch_outer_examples"][1]


def test_a_helper_in_another_cell_is_seen(broadcasting):
    helper = "def rows(a):\n    return torch.stack([r[:, None] * r[None, :] for r in a])\n"
    answer = "def batch_outer(a):\n    return rows(a)\n"
    results = run_cells(broadcasting, {"batch_outer": answer}, extra={"batch_outer_loop": helper})
    assert "cell In [" in outcome(results, "vectorized") and "line 2: list comprehension" in outcome(results, "vectorized")


def test_a_loop_replaced_by_a_later_run_no_longer_counts(broadcasting):
    results = run_cells(broadcasting, {"batch_outer": LOOP}, extra={"batch_outer_answer": GOOD})
    assert outcome(results, "vectorized") is None


def test_a_wrong_answer_fails_correct_with_the_grader_message(broadcasting):
    wrong = "def batch_outer(a):\n    return a[:, None, :] * a[:, None, :]\n"
    results = run_cells(broadcasting, {"batch_outer": wrong})
    assert outcome(results, "correct").startswith("Incorrect: batch_outer(a) with a [2, 2]: output shape (2, 1, 2), "
                                                  "expected (2, 2, 2)")


def test_an_in_place_answer_does_not_change_the_next_check(broadcasting):
    """The examples' inputs are copied for each run, so an answer that writes into `a` is judged on the real `a`."""
    sneaky = "def batch_outer(a):\n    out = a[:, :, None] * a[:, None, :]\n    a.zero_()\n    return out\n"
    results = run_cells(broadcasting, {"batch_outer": sneaky})
    assert outcome(results, "correct") is None
    assert results["batch_outer_examples"][1].count("[ok] batch_outer(a) with a [2, ") == 2


def test_an_answer_that_fails_only_at_the_counting_sizes_fails_vectorized(broadcasting):
    """The visible examples are 2 x 2 and 2 x 3; the work is counted at 4 x 4 and 8 x 8."""
    picky = ("def batch_outer(a):\n    if a.shape[0] > 2:\n        raise ValueError('too big')\n"
             "    return a[:, :, None] * a[:, None, :]\n")
    results = run_cells(broadcasting, {"batch_outer": picky})
    assert outcome(results, "correct") is None
    assert outcome(results, "vectorized") == ("NotVectorized: raised ValueError: too big while its work was "
                                              "being counted")
    assert outcome(results, "fast") == "TooSlow: raised ValueError: too big on a benchmark input"


def test_work_that_grows_with_the_input_is_counted():
    import torch

    def loop(a):
        return torch.stack([r * 2 for r in a])

    def whole(a):
        return a * 2

    small, large = torch.ones(4, 3), torch.ones(8, 3)
    grow = [sum(work.count_work(loop, (x,))["ops"].values()) for x in (small, large)]
    flat = [sum(work.count_work(whole, (x,))["ops"].values()) for x in (small, large)]
    assert grows(grow) and not grows(flat)


def test_expect_and_check_loops_print_the_graders_messages(capsys):
    import torch
    expect("f(a)", lambda: torch.zeros(3, 4), torch.zeros(4, 3))
    assert "[x] f(a): output shape (3, 4), expected (4, 3)" in capsys.readouterr().out
    expect("f(a)", lambda: torch.ones(2), torch.ones(2))
    assert "[ok] f(a)" in capsys.readouterr().out

    def f(a):
        for _row in a:
            pass
        return a
    check_loops(f)
    assert "`for` loop" in capsys.readouterr().out

    def g(a):
        return a * 2
    check_loops(g)
    assert "[ok] no Python-level iteration in g" in capsys.readouterr().out


def _hang(x):
    while True:
        pass


def _armed(x):
    """The seconds left on the interval timer while the student's function runs."""
    return torch.tensor(signal.getitimer(signal.ITIMER_REAL)[0])


@pytest.mark.timing
def test_under_autograde_an_example_that_never_ends_is_stopped(monkeypatch):
    """The grader decides every part in its own process: under autograde an endless example costs the
    class two seconds, not the kernel's cell timeout; a student's own run is never cut."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    start = time.monotonic()
    problem = Example("f(x)", {"f": _hang, "x": 1}, torch.tensor(1.0), 1e-5, 1e-6).problem()
    assert problem.startswith(f"still running after {AUTOGRADE_EXAMPLE_SECONDS:g} s")
    assert time.monotonic() - start < 10 and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    assert Example("f(x)", {"f": lambda x: torch.tensor(1.0), "x": 1}, torch.tensor(1.0), 1e-5, 1e-6).problem() is None
    assert Example("f(x)", {"f": _armed, "x": 1}, torch.tensor(0.0), 0, 0).problem() is not None  # timer armed
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert Example("f(x)", {"f": _armed, "x": 1}, torch.tensor(0.0), 0, 0).problem() is None  # none outside it


ANSI = re.compile(r"\x1b\[[0-9;]*m")
TRIPLE_LOOP = ("def batch_outer(a):\n    B, F = a.shape\n    out = torch.empty(B, F, F, dtype=a.dtype)\n"
               "    for b in range(B):\n        for i in range(F):\n            for j in range(F):\n"
               "                out[b, i, j] = a[b, i] * a[b, j]\n    return out\n")


def shown(results, grade_id) -> list[str]:
    """What the cell showed, colours removed, one entry per line."""
    return ANSI.sub("", results[grade_id][1]).strip().splitlines()


def test_a_triple_loop_is_never_told_fast_passes(broadcasting):
    """The self-check cannot time "fast" as the grader does: it says so, and gives only an estimate."""
    results = run_cells(broadcasting, {"batch_outer": TRIPLE_LOOP})
    assert outcome(results, "correct") is None and outcome(results, "vectorized").startswith("NotVectorized")
    assert outcome(results, "fast") is None
    (line,) = shown(results, "batch_outer_fast")
    assert line.startswith(f"fast: {NOT_TIMED} at size 24 and requires 20x") and "estimate on this machine" in line
    assert "pass" not in line


def test_the_estimate_says_when_it_is_far_from_the_bar():
    assert estimate(1.1, 8, 20).endswith("far below 20x: as it is, it would most likely fail")
    assert estimate(400.0, 8, 20).endswith("far above 20x")
    near = estimate(30.0, 8, 20)
    assert near == "estimate on this machine at size 8: about 30.0x faster than the loop version"


def test_a_failing_grade_cell_shows_one_line_and_no_frames_of_the_kit(broadcasting):
    results = run_cells(broadcasting, {"batch_outer": LOOP})
    assert shown(results, "batch_outer_vectorized") == [
        f"NotVectorized: your `batch_outer` cell, line 4: `for` loop; {HINT}"]
    assert shown(results, "batch_outer_correct") == ["correct: passes the self-check. all 2 visible examples match "
                                                     "(the grader also checks hidden inputs). The autograder decides "
                                                     "this part on hidden inputs."]
    stub = run_cells(broadcasting, {"batch_outer": STUB})
    assert shown(stub, "batch_outer_correct") == ["Incorrect: batch_outer(a) with a [2, 2]: not implemented yet"]
    one = run_cells(broadcasting, {"softmax_rows": "def softmax_rows(x):\n    return torch.softmax(x, 1)\n"})
    assert shown(one, "softmax_rows_correct") == ["correct: passes the self-check. the visible example matches (the "
                                                   "grader also checks hidden inputs). The autograder decides this part "
                                                   "on hidden inputs."]  # one example: no "all 1 ... match"
    assert "selfcheck.py" not in stub["batch_outer_fast"][1] and "Traceback" not in stub["batch_outer_fast"][1]


def test_a_grade_cell_run_before_its_examples_says_what_to_run():
    with pytest.raises(selfcheck.NotReady) as raised:
        selfcheck.grade_part("no_such_exercise", "correct")
    assert ANSI.sub("", "".join(raised.value._render_traceback_())) == (
        "NotReady: run the examples cell of `no_such_exercise` first: it records the examples this cell checks")


def test_an_undefined_answer_and_a_ctrl_c_are_one_line_each(broadcasting):
    undefined = run_cells(broadcasting, {"batch_outer": "scratch = 1\n"})
    assert "[ ] batch_outer(a) with a [2, 2]: `batch_outer` is not defined yet: run your answer cell first" in \
        undefined["batch_outer_examples"][1]
    interrupted = run_cells(broadcasting, {"batch_outer": "def batch_outer(a):\n    raise KeyboardInterrupt\n"})
    assert outcome(interrupted, "examples") == "Interrupted: stopped while `batch_outer(a)` was running"
    assert shown(interrupted, "batch_outer_examples") == ["Interrupted: stopped while `batch_outer(a)` was running"]


def test_the_examples_cell_shows_no_internal_arguments_and_the_setup_cell_carries_them(broadcasting):
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in build_notebook(broadcasting).cells
             if c.cell_type == "code"}
    for ex in broadcasting.exercises:
        source = cells[f"{ex.name}_examples"].source
        assert f"examples = examples_of({ex.name!r})\n" in source
        assert not re.search(r"\b(forbidden|forbidden_ops|speedup|loop_hint|rtol|atol|assignment)=", source), source
    assert cells["setup"].metadata["jupyter"] == {"source_hidden": True}
    assert "'forbidden': ('softmax'" in cells["setup"].source


def test_a_forbidden_function_registered_by_the_setup_cell_fails_vectorized(broadcasting):
    """The facts moved from the examples cell to the setup cell still reach the check, both ways."""
    forbidden = "def softmax_rows(x):\n    return torch.softmax(x, dim=1)\n"
    allowed = "def softmax_rows(x):\n    e = (x - x.amax(1, keepdim=True)).exp()\n    return e / e.sum(1, keepdim=True)\n"
    bad = run_cells(broadcasting, {"batch_outer": GOOD, "softmax_rows": forbidden})
    good = run_cells(broadcasting, {"batch_outer": GOOD, "softmax_rows": allowed})
    assert "softmax" in (bad["softmax_rows_vectorized"][0] or "") and bad["softmax_rows_correct"][0] is None
    assert good["softmax_rows_vectorized"][0] is None
