"""The notebook's kernel for feedback (``ResilientExecute`` on graders.sandbox.shell): confined, warm, interruptible,
recording what a kernel would show, and reading back only well-formed outputs.

As root the shell is forked from the warm server into a jail of its own; otherwise (or when the server
cannot fork one) it starts as a program through ``Sandbox.wrap``. Both ways run here.
"""
import ast
import json
import os

import nbformat
import pytest
from traitlets.config import Config

from graders.pipeline.execute import ResilientExecute
from graders.sandbox import shell_session
from graders.sandbox.jail import FIRST_UID
from graders.sandbox.policy import Sandbox
from graders.sandbox.session import ForkServer, WorkerFailure
from graders.sandbox.shell_session import checked_output

PROBE = """import os, socket, sys
print({"uid": os.getuid(), "host": socket.gethostname(), "course": os.path.exists(COURSE),
       "forked": "graders.sandbox.worker" in sys.modules, "mode": os.environ.get("NBGRADER_EXECUTION"),
       "data": open("data.csv").read(), "notebook": os.path.exists("nb.ipynb")})
"""
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="shells are forked from the warm server as root only")


@pytest.fixture
def confined():
    box = Sandbox()
    if not box.status()[0]:
        pytest.skip(box.status()[1])


def run_cells(folder, sources, **settings):
    """Run ``sources`` as a notebook's code cells through ``ResilientExecute``; the executed cells."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    config = Config({"ResilientExecute": settings})
    os.environ["NBGRADER_EXECUTION"] = "autograde"
    try:
        nb, _ = ResilientExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    finally:
        del os.environ["NBGRADER_EXECUTION"]
    return nb.cells


def text(cell) -> str:
    return "".join(o.get("text", "") + " ".join(o.get("traceback", [])) for o in cell.outputs)


@pytest.fixture
def folder(tmp_path):
    work = tmp_path / "submission"
    work.mkdir()
    (work / "data.csv").write_text("1,2\n")
    (work / "nb.ipynb").write_text("{}")
    return work


@pytest.mark.parametrize("how", ["program", pytest.param("forked", marks=[pytest.mark.root, ROOT_ONLY]),
                                 pytest.param("server refuses", marks=[pytest.mark.root, ROOT_ONLY])])
def test_the_shell_is_confined_either_way(confined, folder, monkeypatch, how):
    course = folder.parent / "course"
    course.mkdir()
    if how != "forked":  # a server that cannot fork (and, without root, none is asked): a new program instead

        def refuse(self, sock, jail):
            raise WorkerFailure("the notebook's kernel could not start")

        monkeypatch.setattr(ForkServer, "fork_shell", refuse)
    [cell] = run_cells(folder, [PROBE.replace("COURSE", repr(str(course)))])
    report = ast.literal_eval(text(cell).strip())
    assert report["forked"] is (how == "forked")  # control: each way really ran
    assert report["host"] == "sandbox" and report["course"] is False and report["mode"] == "autograde"
    assert report["data"] == "1,2\n" and report["notebook"] is False  # a private copy, without the notebooks
    if os.geteuid() == 0:
        assert report["uid"] >= FIRST_UID


def test_outputs_are_what_a_kernel_shows(confined, folder):
    cells = run_cells(folder, [
        "print('a'); print('b')\nimport sys; print('c', file=sys.stderr)\n6 * 7",
        "from IPython.display import HTML, display\ndisplay(HTML('<b>x</b>'))\nx = 1;",
        "import os\nos.system('echo from a program')",
        "h = display('one', display_id=True)",
        "h.update('two')",
        "1 / 0",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()",
        "%time y = sum(range(10))",
        "input('?')",
        "",
    ])
    kinds = [[(o.output_type, o.get("name")) for o in c.outputs] for c in cells]
    assert kinds[0] == [("stream", "stdout"), ("stream", "stderr"), ("execute_result", None)]
    assert cells[0].outputs[0].text == "a\nb\n" and cells[0].outputs[2].data["text/plain"] == "42"
    assert cells[0].outputs[2].execution_count == cells[0].execution_count == 1
    assert cells[1].outputs[0].data["text/html"] == "<b>x</b>" and len(cells[1].outputs) == 1  # `;` shows nothing
    assert "from a program" in text(cells[2])  # what a program (or C code) writes to the descriptors
    assert cells[3].outputs[0].data["text/plain"] == "'two'"  # updated in place, from a later cell
    assert cells[5].outputs[0].output_type == "error" and cells[5].outputs[0].ename == "ZeroDivisionError"
    assert any("ZeroDivisionError" in line for line in cells[5].outputs[0].traceback)
    assert "image/png" in cells[6].outputs[-1].data  # the inline backend, as in a kernel
    assert "Wall time" in text(cells[7])
    assert cells[8].outputs[-1].ename == "EOFError"  # nobody answers input()
    assert cells[9].outputs == [] and cells[9].execution_count is None  # an empty cell is not run
    assert [c.execution_count for c in cells[:9]] == list(range(1, 10))


def test_a_cell_past_its_time_is_interrupted_in_one_line_and_the_next_runs(confined, folder):
    cells = run_cells(folder, ["import time\ntime.sleep(60)", "print('after')"], timeout=2)
    assert text(cells[0]) == "stopped after 2 s: the cell ran past its time budget"
    assert "KeyboardInterrupt" not in json.dumps(cells[0].outputs)
    assert text(cells[1]) == "after\n"  # control: the shell went on


def test_a_cell_that_refuses_the_interrupt_is_killed_and_the_rest_is_not_run(confined, folder, monkeypatch):
    monkeypatch.setattr(shell_session, "GRACE", 1.0)
    stubborn = "while True:\n    try:\n        __import__('time').sleep(1)\n    except KeyboardInterrupt:\n        pass"
    cells = run_cells(folder, ["print('before')", stubborn, "print('after')"], timeout=1)
    assert text(cells[0]) == "before\n"
    assert text(cells[1]) == "stopped after 1 s: the cell ran past its time budget"
    assert text(cells[2]) == "(not run: the notebook's kernel stopped before this cell)\n"


def test_a_kernel_that_dies_keeps_what_ran_before(confined, folder):
    cells = run_cells(folder, ["print('before')", "import os\nos._exit(3)", "print('after')"])
    assert text(cells[0]) == "before\n"
    assert text(cells[1]) == "(the notebook's kernel stopped while this cell ran)\n"
    assert text(cells[2]) == "(not run: the notebook's kernel stopped before this cell)\n"
    assert cells[2].execution_count is None


def test_the_notebook_budget_stops_the_cells_after_it(confined, folder):
    cells = run_cells(folder, ["import time\ntime.sleep(1.5)", "print('late')"], notebook_budget=2.0)
    assert text(cells[1]) == "(not run: the notebook ran past its time budget of 2 s)\n"


def test_a_flood_is_cut_by_bytes_in_the_shell_and_again_here(confined, folder):
    cells = run_cells(folder, ["print('x' * 5_000_000)", "import os\nos.write(1, b'y' * 5_000_000)", "print('ok')"],
                      max_output_bytes=4096, max_notebook_bytes=16384)
    assert len(json.dumps(cells[0].outputs)) < 4096 + 500 and "output cut" in text(cells[0])
    assert len(json.dumps(cells[1].outputs)) < 4096 + 500 and "output cut" in text(cells[1])
    assert text(cells[2]) == "ok\n"  # control: a small output after the floods is kept


def test_outputs_that_are_not_well_formed_are_dropped():
    assert checked_output({"output_type": "stream", "name": "stdout", "text": "hi"})[0].text == "hi"  # control
    assert checked_output({"output_type": "stream", "name": "stdin", "text": "hi"}) is None
    assert checked_output({"output_type": "stream", "name": "stdout", "text": ["hi"]}) is None
    assert checked_output({"output_type": "error", "ename": "E", "evalue": "v", "traceback": [1]}) is None
    assert checked_output({"output_type": "display_data", "data": {"text/plain": {"a": 1}}}) is None
    assert checked_output({"output_type": "display_data", "data": {"application/json": {"a": 1}}}) is not None
    assert checked_output({"output_type": "update_display_data", "data": {}}) is None
    assert checked_output(["stream"]) is None


FILL = """import errno, os
written = 0
try:
    for i in range(100):
        with open(f"fill-{i}", "wb") as f:  # in its working copy, inside the scratch
            f.write(b"x" * (8 << 20))
        written += 8
except OSError as exc:
    print(written, errno.errorcode.get(exc.errno))
"""


@pytest.mark.root
@ROOT_ONLY
def test_the_shell_writes_into_a_tmpfs_of_its_own_size_and_goes_on_when_it_is_full(confined, folder, monkeypatch):
    seen = {}
    real_start = shell_session.ShellSession.start

    def start(self):  # the grader's side: a mount of the size asked for, holding the copy
        stats = os.statvfs(self.scratch)
        seen.update(mount=os.path.ismount(self.scratch), mb=stats.f_blocks * stats.f_frsize >> 20,
                    names=sorted(os.listdir(self.scratch)), scratch=self.scratch)
        real_start(self)

    monkeypatch.setattr(shell_session.ShellSession, "start", start)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in
                                         (FILL, "print(open('data.csv').read().strip(), 'still here')")])
    config = Config({"Sandbox": {"scratch_mb": 40}})
    nb, _ = ResilientExecute(config=config).preprocess(nb, {"metadata": {"path": str(folder)}})
    assert text(nb.cells[0]).endswith("32 ENOSPC\n")  # 4 of 8 MB in 40 MB that hold the copy too
    assert text(nb.cells[1]) == "1,2 still here\n"  # the shell goes on, its copy intact
    assert seen["mount"] and seen["mb"] == 40 and seen["names"] == ["work"]
    assert not os.path.exists(seen["scratch"])  # unmounted and removed with the shell


def test_a_cells_own_timer_neither_stops_nor_moves_its_budget(confined, folder):
    """The self-check bounds example calls with SIGALRM under autograde; the cell's budget is another clock."""
    own_timer = ("import signal, time\nsignal.signal(signal.SIGALRM, lambda *a: None)\n"
                 "signal.setitimer(signal.ITIMER_REAL, 0.2)\ntime.sleep(0.5)\nsignal.setitimer(signal.ITIMER_REAL, 0)\n"
                 "time.sleep(60)")
    cells = run_cells(folder, [own_timer, "print('after')"], timeout=2)
    assert text(cells[0]) == "stopped after 2 s: the cell ran past its time budget"
    assert text(cells[1]) == "after\n"  # interrupted, not killed: the shell goes on


@pytest.mark.parametrize("how", ["program", pytest.param("forked", marks=[pytest.mark.root, ROOT_ONLY])])
def test_the_notebooks_folder_is_importable_as_in_a_kernel(confined, folder, monkeypatch, how):
    """A kernel imports modules from the notebook's folder: the student's ``helpers.py`` beside it, and one a
    ``%%writefile`` cell wrote. A module nowhere there is still not found."""
    if how == "program":

        def refuse(self, sock, jail):
            raise WorkerFailure("the notebook's kernel could not start")

        monkeypatch.setattr(ForkServer, "fork_shell", refuse)
    (folder / "helpers.py").write_text("VALUE = 41\n")
    cells = run_cells(folder, ["from helpers import VALUE\nprint(VALUE + 1)",
                               "%%writefile written.py\nOTHER = 7", "import written\nprint(written.OTHER)",
                               "import nowhere_at_all"])
    assert text(cells[0]).strip() == "42", text(cells[0])
    assert text(cells[2]).strip() == "7", text(cells[2])
    assert cells[3].outputs[-1].ename == "ModuleNotFoundError"


def test_backend_magics_and_shell_lines_answer_in_one_line_and_the_cell_goes_on(confined, folder):
    """Issue 38: `%matplotlib inline` raised NotImplementedError (enable_gui) and every `!cmd`/`%pip` line
    OSError: out of pty devices, and the rest of the cell did not run. Both ways: inline figures still appear,
    and a line that cannot run here says so, once, with no traceback."""
    from graders.sandbox.shell import GUI_INLINE, SHELL_SKIPPED
    cells = run_cells(folder, [
        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\nprint('after inline')",
        "!ls -la\nprint('after ls')",
        "%pip install numpy\nprint('after pip')",
        "files = !ls\nprint('got', len(files))",
        "%matplotlib qt\nprint('after qt')",
        "%gui tk\nprint('after gui')",
    ])
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"], [text(c) for c in cells]
    assert "image/png" in cells[0].outputs[0].data and "after inline" in text(cells[0])
    assert text(cells[1]) == SHELL_SKIPPED.format(cmd="ls -la") + "\n" + "after ls\n"
    assert SHELL_SKIPPED.format(cmd="")[:40] in text(cells[2]) and "pip" in text(cells[2])
    assert "after pip" in text(cells[2]) and "got 0" in text(cells[3])
    assert GUI_INLINE.format(gui="qt") in text(cells[4]) and "after qt" in text(cells[4])
    assert GUI_INLINE.format(gui="tk") in text(cells[5]) and "after gui" in text(cells[5])
