"""Issue 18 (A, F1, F2, F5), the runtime side: the grading child runs exactly the code that was checked, judges
honest habits (``display``, string annotations, a ``helpers.py`` of one's own) as the kernel does, and a
finding outside the checked subset costs "fast" as well as "vectorized". Each rule both ways."""
import nbformat
import pytest
import torch
from test_checks import LOOP, REF, RUN

from graders.checks.own_modules import MAX_MODULE_BYTES, MAX_MODULES, read_modules, write_modules, written_modules
from graders.checks.submission import grade_submission
from graders.course.grade import grade_class
from graders.engine import coordinator
from graders.engine.executors.local import Serial
from graders.engine.record import autograde
from graders.model.exercise import PARTS
from graders.model.notebook import grade_id_of, submission_cells
from graders.sandbox.session import WorkerSession

from tests.testkit import ROOT, generated_course, program

WRONG = "def batch_outer(a):\n    return torch.zeros(a.shape[0], a.shape[1], a.shape[1], dtype=a.dtype) * K\n"


def grade(assignment, source, extra=(), modules=None):
    cells = program(assignment, batch_outer=source) + list(extra)
    return grade_submission(assignment, cells, only=["batch_outer"], run=RUN, modules=modules)["batch_outer"]


def passed(result) -> tuple[bool, ...]:
    return tuple(result[p].passed for p in PARTS)


def call(child, name, *args):
    reply, _ = child.request("call", 10, name=name, args=args, kwargs={})
    assert "error" not in reply, reply
    return reply["ok"]["out"]


# -- F1: display is as harmless as print --------------------------------------------------------------
DISPLAYED = ("def batch_outer(a):\n    out = a[:, :, None] * a[:, None, :]\n    display(out.shape)\n"
             "    print(out.dtype)\n    return out\n")


def test_display_in_an_answer_costs_nothing(broadcasting):
    result = grade(broadcasting, DISPLAYED)
    assert passed(result) == (True, True, True), {p: v.message for p, v in result.items()}


def test_display_imported_from_ipython_costs_nothing_and_the_rest_of_ipython_stays_outside(broadcasting):
    """``from IPython.display import display`` in a scratch cell, as notebooks often have it: the answer that
    calls it keeps every part; any other name from IPython is still outside the subset."""
    imported = "from IPython.display import display\n" + DISPLAYED.replace("display(out.shape)", "display(out)")
    result = grade(broadcasting, imported)
    assert passed(result) == (True, True, True), {p: v.message for p, v in result.items()}
    html = imported.replace("import display", "import display, HTML").replace("display(out)",
                                                                            "display(HTML('<b>x</b>'))")
    outside = grade(broadcasting, html)
    assert passed(outside) == (True, False, False), {p: v.message for p, v in outside.items()}
    assert "`IPython.display`" in outside["vectorized"].message, outside["vectorized"].message


def test_a_display_of_ones_own_is_ones_own_code(broadcasting):
    own = LOOP.replace("def batch_outer(a):", "def display(a):") + "def batch_outer(a):\n    return display(a)\n"
    result = grade(broadcasting, own)
    assert passed(result) == (True, False, False)
    assert "`for` loop" in result["vectorized"].message


# -- A: annotations are never evaluated, lines are the cell's own ----------------------------------------
def test_annotations_are_never_evaluated_in_the_child():
    cell = ("def f(a: undefined_name, *, k: 1 / 0 = 2) -> also_undefined:\n    return a * k\n"
            "X: __import__('os')._exit(3) = 3\n")
    with WorkerSession([("cell", cell)]) as child:
        child.start()
        assert child.load_errors == []
        assert torch.equal(call(child, "f", torch.ones(2)), torch.full((2,), 2.0))
    with WorkerSession([("cell", "X = undefined_name\n")]) as child:  # code that runs does fail
        child.start()
        assert "NameError" in child.load_errors[0]


def test_the_child_runs_a_cell_at_its_own_line_numbers():
    cell = "\n\n\nimport sys\nimport torch\ndef f(a):\n    return torch.tensor(sys._getframe().f_lineno)\n"
    with WorkerSession([("cell", cell)]) as child:
        child.start()
        assert int(call(child, "f", torch.ones(1))) == 7  # leading blank lines are kept, not stripped


def test_a_second_statement_on_a_reached_line_never_runs_in_the_child(broadcasting):
    swap = "K = 1; exec('def batch_outer(a):\\n    return a[:, :, None] * a[:, None, :]')\n"
    cheat = grade(broadcasting, WRONG + swap)
    assert not cheat["correct"].passed  # the child ran the checked (wrong) def, not the one exec made
    honest = grade(broadcasting, REF.replace("return a", "return K * a") + "K = 1; print('set K')\n")
    assert passed(honest) == (True, True, True), {p: v.message for p, v in honest.items()}


# -- A: outside the checked subset costs "fast" too -------------------------------------------------------
def test_code_outside_the_subset_keeps_correct_and_costs_vectorized_and_fast(broadcasting):
    numpy_pi = "import numpy as np\ndef batch_outer(a):\n    return a[:, :, None] * a[:, None, :] * int(np.pi // np.pi)\n"
    result = grade(broadcasting, numpy_pi)
    assert passed(result) == (True, False, False)
    assert "import of `numpy`" in result["fast"].message
    assert "your code ran outside the checked subset, so its timing cannot be trusted" in result["fast"].message
    assert passed(grade(broadcasting, REF.replace("return a", "return int(math.pi // math.pi) * a")
                        .replace("def", "import math\ndef", 1))) == (True, True, True)


def test_a_loop_costs_vectorized_but_not_the_trust_in_timing(broadcasting):
    result = grade(broadcasting, LOOP)
    assert not result["fast"].passed and "outside the checked subset" not in result["fast"].message
    assert "speedup" in result["fast"].message or "took more than" in result["fast"].message


# -- F2: a module of one's own beside the notebook --------------------------------------------------------
HELPERS = "import torch\n\n\ndef outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
USES_HELPERS = "from helpers import outer\n\n\ndef batch_outer(a):\n    return outer(a)\n"


def test_a_module_of_ones_own_loads_before_the_cells():
    modules = [("helpers", "helpers.py", HELPERS)]
    with WorkerSession([("cell", "from helpers import outer\ndef f(a):\n    return outer(a)\n")],
                       modules=modules) as child:
        child.start()
        assert child.load_errors == []
        assert call(child, "f", torch.ones(2, 3)).shape == (2, 3, 3)
    with WorkerSession([("cell", "from helpers import outer\n")]) as child:
        child.start()
        assert "No module named 'helpers'" in child.load_errors[0]


def test_importing_ones_own_module_costs_vectorized_only(broadcasting):
    result = grade(broadcasting, USES_HELPERS, modules={"helpers": HELPERS})
    assert passed(result) == (True, False, True), {p: v.message for p, v in result.items()}
    assert "helpers" in result["vectorized"].message and "paste" in result["vectorized"].message


def test_a_loop_in_ones_own_module_counts_like_a_cells(broadcasting):
    looping = "import torch\n" + LOOP.replace("def batch_outer(a):", "def outer(a):")
    result = grade(broadcasting, USES_HELPERS, modules={"helpers": looping})
    assert passed(result) == (True, False, False)
    assert "helpers.py" in result["vectorized"].message and "`for` loop" in result["vectorized"].message


def test_code_outside_the_subset_in_ones_own_module_costs_fast(broadcasting):
    foreign = "import numpy as np\n" + HELPERS.replace("a[:, None, :]", "a[:, None, :] * int(np.e // np.e)")
    result = grade(broadcasting, USES_HELPERS, modules={"helpers": foreign})
    assert passed(result) == (True, False, False)
    assert result["fast"].message.startswith("helpers.py, line 1: import of `numpy`"), result["fast"].message


def test_a_module_the_grader_was_not_given_says_why_correct_failed(broadcasting):
    result = grade(broadcasting, USES_HELPERS)
    message = result["correct"].message
    assert not result["correct"].passed
    assert "No module named 'helpers'" in message and "no function" not in message, message


def test_only_small_modules_of_ones_own_are_read(tmp_path):
    # not "helpers": the test process can import tests/testkit as that name, so it is not a module of ones own here
    (tmp_path / "mytools.py").write_text("X = 1\n")
    (tmp_path / "big.py").write_text("#" * (MAX_MODULE_BYTES + 1))
    (tmp_path / "torch.py").write_text("X = 1\n")  # never stands in for the library
    (tmp_path / "os.py").write_text("X = 1\n")
    (tmp_path / "my-notes.py").write_text("X = 1\n")
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "link.py").symlink_to(tmp_path / "mytools.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.py").write_text("X = 1\n")
    (tmp_path / "notes.txt").write_text("x")
    assert read_modules(tmp_path) == {"mytools": "X = 1\n"}
    assert read_modules(tmp_path / "missing") == {} and read_modules(None) == {}
    out = tmp_path / "out"
    out.mkdir()
    write_modules(out, {"mytools": "Y = 2\n", "os": "import sys\n"})
    assert [p.name for p in out.iterdir()] == ["mytools.py"] and read_modules(out) == {"mytools": "Y = 2\n"}


def test_a_module_the_notebook_writes_itself_is_the_one_the_kernel_imports():
    """``%%writefile mytools.py`` (issue 29, 5): its body is the module, over a submitted file of that name;
    ``-a`` appends, in cell order. Anything the kernel would not import as a module of one's own is not one."""
    cells = ["%%writefile mytools.py\nX = 1", "print(1)", "%%writefile -a mytools.py\nY = 2\n",
             "%%writefile ./other.py\nZ = 3\n", "%%file 'quoted.py'\nQ = 4\n"]
    assert written_modules(cells, {"mytools": "OLD = 0\n"}) == {
        "mytools": "X = 1\nY = 2\n", "other": "Z = 3\n", "quoted": "Q = 4\n"}
    # only the file beside the notebook stays when nothing writes over it
    assert written_modules(["x = 1", "%time y = 2"], {"mytools": "OLD = 0\n"}) == {"mytools": "OLD = 0\n"}
    not_modules = ["%%writefile ../up.py\nA = 1\n", "%%writefile sub/deep.py\nA = 1\n",
                   "%%writefile notes.txt\nA = 1\n", "%%writefile torch.py\nA = 1\n", "%%writefile os.py\nA = 1\n",
                   "%%writefile my-notes.py\nA = 1\n", "%%writefile a.py b.py\nA = 1\n", "%%bash\necho x > c.py\n", "%%writefile-a e.py\nA = 1\n", "%%writefile\nA = 1\n",
                   "# %%writefile d.py\nA = 1\n"]
    assert written_modules(not_modules, {}) == {}
    assert written_modules([f"%%writefile big.py\n{'#' * MAX_MODULE_BYTES}"], {}) == {}
    many = [f"%%writefile m{i}.py\nA = {i}\n" for i in range(MAX_MODULES + 3)]
    assert len(written_modules(many, {})) == MAX_MODULES


def test_a_module_is_the_one_the_kernel_imported_not_what_a_later_cell_wrote():
    """The kernel keeps the module it imported: a write after the importing cell changes nothing it runs, and a
    module written only after it is imported was never there (Run All stops at the import)."""
    first, later = "%%writefile mytools.py\nV = 1\n", "%%writefile mytools.py\nV = 2\n"
    assert written_modules([first, "from mytools import V", later], {}) == {"mytools": "V = 1\n"}
    assert written_modules([first, "def f():\n    import mytools.sub\n", later], {}) == {"mytools": "V = 1\n"}
    assert written_modules(["import mytools", later], {}) == {}
    assert written_modules(["import mytools", later], {"mytools": "V = 0\n"}) == {"mytools": "V = 0\n"}
    assert written_modules([first, "import other", later], {}) == {"mytools": "V = 2\n"}  # not this module


def test_a_written_module_is_read_as_ipython_reads_the_cell():
    """Leading empty lines are dropped and ``%%capture`` / ``%%time`` run their body as a cell: the write is the
    cell's (graders.checks.magics), and an append never brings back a module over the size limit."""
    for cell in ("\n%%writefile mytools.py\nV = 3\n", "%%capture\n%%writefile mytools.py\nV = 3\n",
                 "\n%%time\n\n%%writefile mytools.py\nV = 3\n", "  %%writefile mytools.py\n  V = 3\n"):
        assert written_modules([cell], {}) == {"mytools": "V = 3\n"}, cell
    big = f"%%writefile big.py\n{'#' * MAX_MODULE_BYTES}"
    assert written_modules([big, "%%writefile -a big.py\nA = 1\n"], {}) == {}
    assert written_modules([big, "%%writefile big.py\nA = 1\n"], {}) == {"big": "A = 1\n"}


@pytest.mark.parametrize("header", ["\n%%writefile notes.py\n", "%%capture\n%%writefile notes.py\n",
                                    "%%time\n\n%%writefile notes.py\n"])
def test_code_a_cell_only_writes_to_a_file_is_never_the_answer(broadcasting, header):
    """A loop answer followed by a cell that writes a vectorized ``batch_outer`` to a file: the kernel only wrote
    the file, so the loop is what is graded; an honest helper written the same way is loaded as the module."""
    cells = program(broadcasting, batch_outer=LOOP) + [("cell", header + REF)]
    result = grade_submission(broadcasting, cells, only=["batch_outer"], run=RUN)["batch_outer"]
    assert passed(result) == (True, False, False), {p: v.message for p, v in result.items()}
    helper = header.replace("notes.py", "helpers.py") + HELPERS
    cells = program(broadcasting, batch_outer=USES_HELPERS) + [("cell", helper)]
    modules = written_modules([helper, USES_HELPERS], {})
    assert modules == {"helpers": HELPERS}
    result = grade_submission(broadcasting, cells, only=["batch_outer"], run=RUN, modules=modules)["batch_outer"]
    assert passed(result) == (True, False, True), {p: v.message for p, v in result.items()}


# -- F5: a verdict does not depend on what else is graded ------------------------------------------------
RECURSIVE = {
    "module-level lambda": "fill = lambda a, lo, hi: a[lo:hi, :, None] * a[lo:hi, None, :] if hi - lo <= 1 else "
                           "torch.cat([fill(a, lo, (lo + hi) // 2), fill(a, (lo + hi) // 2, hi)])\n",
    "lambda bound with another name": "fill, N = (lambda a, lo, hi: a[lo:hi, :, None] * a[lo:hi, None, :] "
                                      "if hi - lo <= 1 else torch.cat([fill(a, lo, (lo + hi) // 2), "
                                      "fill(a, (lo + hi) // 2, hi)])), 0\n",
}
CALLS_FILL = "def batch_outer(a):\n    return fill(a, 0, a.shape[0]) if a.shape[0] else a[:, :, None] * a[:, None, :]\n"


def notebook_cells(assignment, answer):
    nb = nbformat.read(ROOT / "source" / assignment.name / f"{assignment.name}.ipynb", as_version=4)
    for cell in nb.cells:
        if grade_id_of(cell) == "batch_outer_answer":
            cell.source = answer
    return submission_cells(nb, assignment)


@pytest.mark.parametrize("name", sorted(RECURSIVE))
def test_the_whole_notebook_and_one_exercise_get_the_same_verdict(broadcasting, name):
    cells = notebook_cells(broadcasting, RECURSIVE[name] + CALLS_FILL)
    whole = grade_submission(broadcasting, cells, run=RUN)
    alone = grade_submission(broadcasting, cells, only=["batch_outer"], run=RUN)["batch_outer"]
    for verdicts in (whole["batch_outer"], alone):
        assert verdicts["correct"].passed and not verdicts["vectorized"].passed
        assert "recursion in `fill`" in verdicts["vectorized"].message, verdicts["vectorized"].message
    assert whole["batch_outer"]["vectorized"].message == alone["vectorized"].message
    assert all(whole[ex.name]["correct"].passed for ex in broadcasting.exercises[1:])


# -- F2 end to end: the module reaches the kernel and the grader whichever way a class is graded ------------
def _submit(course, student, answer, helpers):
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    for cell in release.cells:
        if grade_id_of(cell) == "batch_outer_answer":
            cell.source = answer
    folder = course.root / "submitted" / student / "broadcasting"
    folder.mkdir(parents=True)
    nbformat.write(release, folder / "broadcasting.ipynb")
    (folder / "helpers.py").write_text(helpers)


def _batch_outer_marks(course, assignment, student):
    scores = course.part_scores(assignment)[student]
    return tuple(scores[f"batch_outer_{p}"] for p in PARTS)


class _Shipped(Serial):
    """This process, grading each request as a Dask worker gets it: its files inline, through JSON."""

    def submit(self, request):
        from graders.engine.executors.dask import packed
        from graders.engine.request import round_trip
        shipped = round_trip(packed(request))
        assert shipped.folder is None and shipped.files
        super().submit(shipped)


@pytest.mark.e2e
def test_a_module_of_ones_own_is_graded_alike_on_every_route(broadcasting, tmp_path, monkeypatch):
    course = generated_course(tmp_path / "course", broadcasting)
    looping = "import torch\n" + LOOP.replace("def batch_outer(a):", "def outer(a):")
    _submit(course, "helen", USES_HELPERS, HELPERS)
    _submit(course, "hugo", USES_HELPERS, looping)
    deserved = {"helen": (2.0, 0.0, 1.0), "hugo": (2.0, 0.0, 0.0)}
    # vecgrade grade: the kernel and the verdicts in the submission's folder
    assert all(r.success for r in grade_class(course, "broadcasting", ["helen", "hugo"]))
    assert {s: _batch_outer_marks(course, broadcasting, s) for s in deserved} == deserved
    # a Dask worker: no folder, the request carries the files (the cluster stood in for by this process)
    monkeypatch.setattr(coordinator, "executor_for", lambda scheduler, jobs: _Shipped())
    assert all(r.success for r in grade_class(course, "broadcasting", ["helen", "hugo"], scheduler="here"))
    assert {s: _batch_outer_marks(course, broadcasting, s) for s in deserved} == deserved
    # plain `nbgrader autograde`: the notebook's autograded copy, helpers.py beside it
    with course.api() as api:
        assert autograde(api, "broadcasting", "helen").success
    assert _batch_outer_marks(course, broadcasting, "helen") == deserved["helen"]


@pytest.mark.e2e
def test_a_module_written_by_the_notebook_keeps_correct_and_fast_on_every_route(broadcasting, tmp_path):
    """A ``%%writefile helpers.py`` cell and no ``helpers.py`` submitted: graded as the kernel sees it under Restart
    & Run All, as a module of one's own (costs "vectorized" only). Without that cell, the import fails."""
    course = generated_course(tmp_path / "course", broadcasting)
    for student, writes in (("wren", True), ("nemo", False)):
        release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
        at = next(i for i, cell in enumerate(release.cells) if grade_id_of(cell) == "batch_outer_answer")
        release.cells[at].source = USES_HELPERS
        if writes:
            release.cells.insert(at, nbformat.v4.new_code_cell("%%writefile helpers.py\n" + HELPERS))
        folder = course.root / "submitted" / student / "broadcasting"
        folder.mkdir(parents=True)
        nbformat.write(release, folder / "broadcasting.ipynb")
    assert all(r.success for r in grade_class(course, "broadcasting", ["wren", "nemo"]))
    assert _batch_outer_marks(course, broadcasting, "wren") == (2.0, 0.0, 1.0)
    assert _batch_outer_marks(course, broadcasting, "nemo") == (0.0, 0.0, 0.0)
    with course.api() as api:  # plain `nbgrader autograde`: the kernel runs the cell and writes the file
        assert autograde(api, "broadcasting", "wren").success
    assert _batch_outer_marks(course, broadcasting, "wren") == (2.0, 0.0, 1.0)

