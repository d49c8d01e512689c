"""One reader of a cell's code, as IPython runs it (graders.checks.reader), and the refusal of deep cells.

Each case is shown both ways: what IPython runs as a magic, shell or help line is not code, and what it runs
as Python (a black-formatted continuation line starting with ``%`` or ``!=``) is; a cell magic that runs its
body elsewhere holds no code, and one that runs it in the kernel (``%%time``, ``%%capture``) does. The
self-check and the grader read the same cells the same way, and as the kernel ran them
(``test_the_kernel_the_self_check_and_the_grader_agree``).
"""
from __future__ import annotations

import contextlib
import io

import pytest
from IPython.core.interactiveshell import InteractiveShell

from graders.checks.finding import ITERATION
from graders.checks.identity import near_key, program_key
from graders.checks.nesting import MAX_NESTING, TooDeep, depth
from graders.checks.reader import parse_cell, read_cell, too_deep
from graders.checks.static import Submission
from graders.checks.submission import with_load_errors
from graders.model.errors import VecgradeError
from graders.model.verdict import Reason, failed, gated, passed
from graders.student import history

NAME = "permute_flat"
VECTORIZED = f"def {NAME}(x, n):\n    return x.flatten() * n\n"
LOOP = f"def {NAME}(x, n):\n    return torch.stack([v * n for v in x.flatten()])\n"
# black's layout of a long expression: continuation lines that start with the `%` and `!=` operators
BLACK = (f"def {NAME}(x, n):\n"
         "    keep = (\n"
         "        torch.arange(x.numel())\n"
         "        % n\n"
         "        != 0\n"
         "    )\n"
         "    return x.flatten() * keep\n")


def graded(cells: list[str]) -> Submission:
    return Submission([("preamble", "import torch")] + [(f"cell {i}", c) for i, c in enumerate(cells, 1)])


def verdict_of(submission: Submission) -> str:
    """What the static reading makes of ``permute_flat``: "undefined", "loop" or "vectorized"."""
    if not any(NAME in s.binds for s in submission.statements):
        return "undefined"
    kinds = {f.kind for f in submission.iteration_findings(NAME)}
    return "loop" if ITERATION in kinds else "vectorized"


# -- magic, shell and help lines: blanked exactly where IPython runs them as such ------------------------------

@pytest.mark.parametrize("magic", ["%timeit -n 1 -r 1 torch.zeros(3)",
                                   "%config InteractiveShell.ast_node_interactivity = 'last_expr'"])
def test_a_black_formatted_answer_beside_a_line_magic_is_read_whole(magic):
    submission = graded([f"{magic}\n{BLACK}"])
    assert verdict_of(submission) == "vectorized"
    assert submission.problems_for(NAME) == []
    program = "".join(source for _, source in submission.program_for(NAME))
    assert "        % n\n        != 0\n" in program  # the operators' lines are the answer's, not magics
    assert "timeit" not in program and "config" not in program


def test_a_line_that_starts_with_a_magic_inside_a_block_is_still_a_magic():
    cell = f"{VECTORIZED}for size in (8, 16):\n    %timeit -n 1 {NAME}(torch.ones(size), 2)\n"
    assert read_cell(cell).lines[-2] == "    pass"
    assert verdict_of(graded([cell])) == "vectorized"


@pytest.mark.parametrize("help_line", ["?torch.take_along_dim", "torch.take_along_dim?", "??torch.take_along_dim",
                                       "torch.take_along_dim??", "%pinfo torch.take_along_dim"])
def test_help_lines_prefix_or_suffix_are_not_code(help_line):
    cell = f"{help_line}\n{VECTORIZED}"
    assert read_cell(cell).lines[0] == "pass"
    assert verdict_of(graded([cell])) == "vectorized"


def test_every_line_keeps_its_number_after_a_magic_that_spans_lines():
    cell = ("\n%timeit -n 1 \\\n    torch.zeros(3)\nfiles = !ls \\\n   -la\n" + LOOP)
    code = read_cell(cell)
    assert len(code.lines) == len(cell.split("\n"))
    assert code.lines[1:5] == ("pass", "", "pass", "")
    [finding] = [f for f in graded([cell]).iteration_findings(NAME) if f.kind == ITERATION]
    assert (finding.cell, finding.line) == ("cell 1", 7)  # the comprehension's own line in the cell


def test_an_autocall_escape_is_python_not_a_magic():
    assert read_cell("/print 1\n").lines[0] == "print(1)"
    assert read_cell("x = 1\n").lines[0] == "x = 1"


# -- cell magics: foreign bodies are not code, kernel bodies are ------------------------------------------------

@pytest.mark.parametrize("header", ["%%python3", "%%python", "%%python2", "%%pypy", "%%script python3",
                                    "%%bash", "%%sh", "%%html", "%%javascript", "%%latex", "%%perl", "%%ruby",
                                    "%%foo", "%%capture out\n%%python3"])
def test_a_cell_magic_that_runs_its_body_elsewhere_holds_no_code(header):
    submission = graded([VECTORIZED, f"{header}\n{LOOP}"])
    assert read_cell(f"{header}\n{LOOP}").foreign
    assert verdict_of(submission) == "vectorized"
    assert submission.iteration_findings(NAME) == []


@pytest.mark.parametrize("header", ["%%time", "%%capture out", "%%prun -q", "\n\n%%capture\n%%time"])
def test_a_cell_magic_that_runs_its_body_in_the_kernel_is_read(header):
    submission = graded([VECTORIZED, f"{header}\n{LOOP}"])
    assert verdict_of(submission) == "loop"
    [finding] = [f for f in submission.iteration_findings(NAME) if f.kind == ITERATION]
    assert (finding.cell, finding.line) == ("cell 2", header.count("\n") + 3)


@pytest.mark.parametrize("header", ["%%timeit -n 1 -r 1", "%%capture\n%%timeit -n 1 -r 1"])
def test_a_timeit_body_runs_inside_a_function_and_binds_no_name_of_the_notebook(header):
    """``%%timeit`` times its body inside a function of its own: a `def` there defines nothing in the kernel."""
    submission = graded([VECTORIZED, f"{header}\n{LOOP}"])
    assert read_cell(f"{header}\n{LOOP}").binds_nothing
    assert verdict_of(submission) == "vectorized"
    assert graded([f"{header}\n{LOOP}"]).problems_for(NAME)[0].what == f"`{NAME}` is not defined"


# -- syntax errors: the cell does not run, and the failure says why -----------------------------------------------

def test_a_syntax_error_says_which_cell_and_line():
    broken = f"def {NAME}(x, n):\n    y = x.flatten(\n    return y * n\n"
    submission = graded(["x = 1", broken])
    assert verdict_of(submission) == "undefined"
    [error] = submission.syntax_errors_for(NAME)
    assert error.startswith("cell 2 has a syntax error at line 2: ")
    assert graded(["x = 1", VECTORIZED]).syntax_errors_for(NAME) == []


def test_a_cell_ipython_rejects_is_the_students_syntax_error():
    cell = f"{VECTORIZED}%timeit -n 1 \\\n"  # a magic's continuation that never ends
    parsed = parse_cell("cell 4", cell)
    if parsed.error is None:  # IPython joins the dangling continuation: nothing to reject then
        assert verdict_of(graded([cell])) == "vectorized"
    else:
        assert parsed.describe_error().startswith("cell 4 has a syntax error")


def test_the_correct_failure_names_the_syntax_error_when_the_function_is_not_defined():
    undefined = {"correct": failed("correct", Reason.NOT_DEFINED, f"no function `{NAME}` is defined"),
                 "vectorized": gated("vectorized"), "fast": gated("fast")}
    said = with_load_errors(undefined, NAME, [], ["cell 2 has a syntax error at line 2: '(' was never closed"])
    assert said["correct"].message == (f"`{NAME}` is not defined because a cell it needs does not run: "
                                       "cell 2 has a syntax error at line 2: '(' was never closed")
    assert with_load_errors(undefined, NAME, [], []) == undefined
    right = {"correct": passed("correct", "ok"), "vectorized": gated("vectorized"), "fast": gated("fast")}
    assert with_load_errors(right, NAME, [], ["cell 2 has a syntax error at line 2: x"]) == right


# -- deep cells: measured without recursion, refused with a reason, never a RecursionError -----------------------

DEEP_SCRATCH = "junk = " + " + ".join(["0"] * 600)
DEEP_CALLS = "junk = " + "abs(" * 150 + "0" + ")" * 150


def test_depth_is_measured_without_recursion_at_any_depth():
    import ast
    value: ast.expr = ast.Constant(1)
    for _ in range(20000):  # deeper than Python itself parses: built node by node
        value = ast.BinOp(value, ast.Add(), ast.Constant(1))
    tree = ast.Module([ast.Expr(value)], [])
    assert depth(tree).levels == 20002  # an Expr, 20000 BinOps, a Constant
    assert depth(ast.parse(VECTORIZED)).levels < 10


@pytest.mark.parametrize("scratch", [DEEP_SCRATCH, DEEP_CALLS, "x = " + "-" * 10000 + "1"])
def test_a_deep_scratch_cell_refuses_the_notebook_with_a_reason(scratch):
    cells = [("preamble", "import torch"), ("your `permute_flat` cell", VECTORIZED), ("cell 7", scratch)]
    reason = too_deep(cells)
    assert reason is not None and reason.startswith("cell 7")
    assert f"more than the {MAX_NESTING} vecgrade reads; split the expression" in reason
    with pytest.raises(TooDeep) as raised:
        Submission(cells)
    assert isinstance(raised.value, VecgradeError) and str(raised.value) == reason
    assert too_deep(cells[:2]) is None


def test_a_deep_module_of_the_students_own_is_refused_too():
    assert too_deep([("cell 1", VECTORIZED)], {"helpers": DEEP_SCRATCH}).startswith("helpers.py, line 1,")


def test_the_six_hundred_term_sum_names_its_depth():
    assert "nests expressions 601 levels deep" in too_deep([("cell 7", DEEP_SCRATCH)])


@pytest.mark.parametrize("expr", ["x + " + " + ".join(["1"] * 97), "f(" * 97 + "x" + ")" * 97,
                                  "[" * 97 + "x" + "]" * 97, "-" * 97 + "x", "x" + ".t()" * 48])
def test_nesting_up_to_the_limit_is_read_by_every_check(expr):
    cells = [("preamble", "import torch"),
             ("your `permute_flat` cell", f"def f(x):\n    return x\n\ndef {NAME}(x, n):\n    y = {expr}\n"
                                          "    return y * n\n")]
    assert too_deep(cells) is None
    submission = Submission(cells)
    assert submission.program_for(NAME) and program_key(submission, NAME) and near_key(submission, NAME)
    assert submission.iteration_findings(NAME) == [] and submission.outside_findings(NAME) == []


# -- the kernel, the self-check and the grader agree ---------------------------------------------------------------

CORPUS = {
    "black beside %timeit": ([f"%timeit -n 1 -r 1 torch.zeros(3)\n{BLACK}"], "vectorized"),
    "black beside %config": ([f"%config InteractiveShell.ast_node_interactivity = 'last_expr'\n{BLACK}"],
                             "vectorized"),
    "prefix help": ([f"?torch.take_along_dim\n{VECTORIZED}"], "vectorized"),
    "suffix help": ([f"torch.take_along_dim?\n{VECTORIZED}"], "vectorized"),
    "shell and magic assignments": ([f"x = %time torch.ones(2)\nout = !echo hi\n!echo hi\n{VECTORIZED}"],
                                    "vectorized"),
    "%%python3 loop version": ([VECTORIZED, f"%%python3\n{LOOP}"], "vectorized"),
    "%%script python3 loop version": ([VECTORIZED, f"%%script python3\n{LOOP}"], "vectorized"),
    "%%bash loop version": ([VECTORIZED, f"%%bash\n{LOOP}"], "vectorized"),
    "unknown cell magic": ([VECTORIZED, f"%%foo\n{LOOP}"], "vectorized"),
    "%%time loop version": ([VECTORIZED, f"%%time\n{LOOP}"], "loop"),
    "%%capture loop version": ([VECTORIZED, f"%%capture out\n{LOOP}"], "loop"),
    "%%timeit loop version": ([VECTORIZED, f"%%timeit -n 1 -r 1\n{LOOP}"], "vectorized"),
    "syntax error": ([f"def {NAME}(x, n):\n    return (x.flatten() * n\n"], "undefined"),
}


def kernel_reading(cells: list[str]) -> tuple[str, Submission]:
    """Run ``cells`` in an IPython shell, as a student's kernel does: what it defined, and the self-check's
    reading of its history."""
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    assert shell.history_manager is not None, "InteractiveShell.instance() sets up its history manager"
    shell.history_manager.enabled = False  # no sqlite history file for tests
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for source in ["import torch", *cells]:
            shell.run_cell(source, store_history=True)
    fn = shell.user_ns.get(NAME)
    ran = "undefined" if fn is None else "loop" if "stack" in fn.__code__.co_names else "vectorized"
    runs = history.kernel_history()
    assert runs is not None, "inside an IPython shell"
    return ran, Submission(history.program_cells(runs, "import torch", answers=[NAME]))


def comparable(submission: Submission) -> list[tuple[str, int, str]]:
    return sorted((f.what, f.line, f.why) for f in submission.iteration_findings(NAME))


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_the_kernel_the_self_check_and_the_grader_agree(case):
    cells, expected = CORPUS[case]
    ran, self_check = kernel_reading(cells)
    grader = graded(cells)
    assert (ran, verdict_of(self_check), verdict_of(grader)) == (expected, expected, expected)
    assert comparable(self_check) == comparable(grader)


# -- one tokenization per cell, IPython's result ---------------------------------------------------------------

PIECES = ["!ls", "%time f()", "x = %time g()", "y = !ls", "z?", "?z", "a = (1,\n  % 2)", "s = '''\n%x\n'''",
          "if a:\n    %ls\n    b = 1", "/print 1", "c = 1 \\\n  + 2", "!echo '''", "'''", "w = (", ")", "%%time",
          "x = %time f(a,\n  b)", "%time \\\n  x", "  ?y", "# c", "", "def f():\n    %ls\n    return 1"]


def _rejection(transforms, lines):
    try:
        transforms(list(lines))
    except (RuntimeError, SyntaxError) as exc:
        return exc
    return None


def test_the_single_tokenization_gives_ipythons_result_on_every_cell_that_parses():
    """``_token_transforms`` reuses one tokenization where a transform replaced a whole, self-contained logical
    line; IPython's own loop tokenizes again after every transform (``_exact_transforms``). On cells built from
    tricky pieces (open brackets and strings, continuation lines, magics inside blocks) both give the same
    lines wherever either reading parses."""
    import ast
    import random

    from graders.checks.magics import clean_up
    from graders.checks.reader import _exact_transforms, _token_transforms

    def outcome(lines):
        try:
            return _token_transforms(list(lines)), _exact_transforms(list(lines))
        except (RuntimeError, SyntaxError) as exc:  # IPython rejects the cell (too many transforms, bad indentation)
            return repr(exc), repr(_rejection(_exact_transforms, lines))

    def parses(lines) -> bool:
        try:
            ast.parse("".join(lines))
        except SyntaxError:
            return False
        return True

    draw = random.Random(38)
    compared = 0
    for _ in range(1500):
        cell = "\n".join(draw.choice(PIECES) for _ in range(draw.randint(1, 10))) + "\n"
        fast, exact = outcome(clean_up(cell)[0])
        if isinstance(fast, str) or parses(fast) or parses(exact):
            assert fast == exact, cell
            compared += 1
    assert compared > 300  # the corpus holds many cells that parse


def test_a_cell_of_many_magic_lines_is_read_as_ipython_reads_it():
    many = "\n".join(["!echo hi"] * 499) + "\nx = 1\n"
    assert read_cell(many).lines[-2:] == ("x = 1", "") and read_cell(many).rejected is None
    too_many = "\n".join(["!echo hi"] * 500) + "\n"
    assert "still changing after 500 iterations" in (read_cell(too_many).rejected or "")
    assert parse_cell("cell 2", too_many).describe_error().startswith("cell 2 has a syntax error: IPython cannot")
