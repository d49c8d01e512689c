"""End to end through nbgrader, with tight limits: unsafe submissions are refused, floods and slow
notebooks are bounded, and the students after each of them are graded with every mark they deserve.

Each attacking notebook holds the reference answers, and ``b_control`` holds them with a harmless
scratch cell of the same shape: what the limits cut must not cost any mark the control gets.
"""
import os
import re
import stat

import nbformat
import pytest

from graders.course.grade import grade_class
from graders.course.personas import Persona
from graders.model.exercise import PARTS
from graders.pipeline.intake import copy_regular_files, unsafe_entries

from conftest import generated_course

IN_KERNEL = "__import__('sys').argv[0].endswith('ipykernel_launcher.py')"  # slow or loud in the kernel only
FLOOD = f"if {IN_KERNEL}:\n    print(('x' * 1_000_000 + '\\n') * 40)\n"  # 40 lines of 1 MB (no loop: fair to "vectorized")
QUIET = f"import os\nif {IN_KERNEL}:\n    print('hello', os.environ.get('NBGRADER_EXECUTION'))\n"
SLOW = f"import time\nif {IN_KERNEL}:\n    time.sleep(60)\n"
XSS = "print('ok')\nfrom IPython.display import HTML, display\ndisplay(HTML('<script>alert(1)</script><img src=x onerror=alert(2)>'))\n"
LIVE_HTML = re.compile(r"<script>alert|<img[^>]*onerror")  # outputs: alert(1), (2); markdown: (3), (4)  # a tag the browser would run, not escaped text
TIGHT = """
c.Execute.timeout = 10
c.ResilientExecute.notebook_budget = 40.0
c.ResilientExecute.max_output_bytes = c.LimitOutputBytes.max_output_bytes = 4096
c.ResilientExecute.max_notebook_bytes = c.LimitOutputBytes.max_notebook_bytes = 64 * 1024
"""


def _honest(name, extra=()):
    return Persona(name, "reference answers", lambda ex: ex.reference_source(), lambda n: (1.0, 1.0, 1.0),
                   extra_cells=list(extra))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("bounded") / "course", broadcasting, extra_config=TIGHT)
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    people = [_honest("a_flood", [FLOOD] * 3), _honest("b_control", [QUIET]), _honest("b_link"),
              _honest("c_slow", [SLOW] * 5),
              _honest("d_xss", [XSS]), _honest("e_next")]
    for person in people:
        folder = course.root / "submitted" / person.student / "broadcasting"
        folder.mkdir(parents=True)
        nb = person.notebook(release, broadcasting)
        if person.student == "d_xss":
            nb.cells.insert(2, nbformat.v4.new_markdown_cell("<script>alert(3)</script><img src=x onerror=alert(4)>"))
        nbformat.write(nb, folder / "broadcasting.ipynb")
    os.symlink(course.root / "gradebook.db", course.root / "submitted" / "b_link" / "broadcasting" / "data.db")
    results = grade_class(course, "broadcasting", [p.student for p in people])
    return course, {r.student: r for r in results}


def _marks(course, broadcasting, student):
    scores = course.part_scores(broadcasting).get(student)
    return None if scores is None else [scores[ex.grade_id(p)] / ex.points.of(p)
                                        for ex in broadcasting.exercises for p in PARTS]


def test_a_symlink_in_submitted_is_refused_before_any_copy(graded, broadcasting):
    course, results = graded
    assert not results["b_link"].success and "UnsafeSubmissionError" in results["b_link"].reason
    assert "data.db" in results["b_link"].reason
    assert not (course.root / "autograded" / "b_link").exists() or not any(
        (course.root / "autograded" / "b_link").rglob("data.db"))


def test_every_other_student_is_graded_and_keeps_the_marks_of_the_control(graded, broadcasting):
    course, results = graded
    students = ("a_flood", "b_control", "c_slow", "d_xss", "e_next")
    assert all(results[s].success for s in students), {s: results[s].reason for s in students}
    marks = {s: _marks(course, broadcasting, s) for s in students}
    correct = [i for i in range(len(marks["e_next"])) if PARTS[i % 3] == "correct"]
    vectorized = [i for i in range(len(marks["e_next"])) if PARTS[i % 3] == "vectorized"]
    assert all(marks[s][i] == 1.0 for s in students for i in correct), marks
    assert all(marks[s][i] == marks["b_control"][i] for s in students[:4] for i in vectorized), marks
    assert all(marks["e_next"][i] == 1.0 for i in vectorized), marks  # the clean notebook after them all


def test_the_kernel_runs_as_nbgrader_autograde_runs_it(graded):
    """The kernel's steps run outside nbgrader's converter (a worker process, a Dask task), yet the
    notebook sees ``NBGRADER_EXECUTION=autograde`` as under nbgrader: its self-checks stand aside."""
    course, _ = graded
    nb = nbformat.read(course.root / "autograded" / "b_control" / "broadcasting" / "broadcasting.ipynb", 4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "hello autograde" in text
    assert "[ok] batch_outer(a)" in text  # control: the visible examples still print their lines
    assert "no Python-level iteration found in the code" not in text  # the examples cell's report stood aside


def test_an_output_flood_is_capped_by_bytes(graded):
    course, _ = graded
    flood = course.root / "autograded" / "a_flood" / "broadcasting" / "broadcasting.ipynb"
    honest = course.root / "autograded" / "e_next" / "broadcasting" / "broadcasting.ipynb"
    assert flood.stat().st_size < honest.stat().st_size + 64 * 1024 + 8192  # 40 MB printed, at most 64 KB kept
    assert "output cut" in flood.read_text()
    assert "output cut" not in honest.read_text()  # control: nothing cut from an ordinary notebook


def test_a_timed_out_cell_shows_one_line_and_the_budget_stops_the_rest(graded):
    course, _ = graded
    nb = nbformat.read(course.root / "autograded" / "c_slow" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    slow = [c for c in nb.cells if c.cell_type == "code" and "time.sleep(60)" in c.source]
    texts = [" ".join(o.get("text", "") + " ".join(o.get("traceback", [])) for o in c.outputs) for c in slow]
    assert "stopped after 10 s: the cell ran past its time budget" in texts[0]
    assert "time budget of 40 s" in texts[-1]  # the notebook's budget was spent: not run
    whole = nbformat.writes(nb)
    assert "KeyboardInterrupt" not in whole and "site-packages" not in whole


def test_feedback_and_the_formgrader_view_carry_no_script(graded):
    course, _ = graded
    with course.api() as api:
        assert api.generate_feedback("broadcasting", "d_xss")["success"]
    html = (course.root / "feedback" / "d_xss" / "broadcasting" / "broadcasting.html").read_text()
    assert not LIVE_HTML.search(html)
    nb = (course.root / "autograded" / "d_xss" / "broadcasting" / "broadcasting.ipynb").read_text()
    assert "<script>alert(1)" in nb  # control: the notebook really carried the attack
    from nbconvert.exporters import HTMLExporter
    with course.api() as api:  # the formgrader renders with HTMLExporter(config=its config)
        view, _ = HTMLExporter(config=api.config).from_filename(
            str(course.root / "autograded" / "d_xss" / "broadcasting" / "broadcasting.ipynb"))
    assert not LIVE_HTML.search(view)
    plain, _ = HTMLExporter().from_filename(
        str(course.root / "autograded" / "d_xss" / "broadcasting" / "broadcasting.ipynb"))
    assert LIVE_HTML.search(plain)  # control: unsanitized, it would be there


def test_unsafe_entries_lists_links_and_special_files_only(tmp_path):
    (tmp_path / "nb.ipynb").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.csv").write_text("1")
    assert unsafe_entries(str(tmp_path)) == []  # control: regular files and folders pass
    os.symlink("/etc/passwd", tmp_path / "sub" / "link")
    os.symlink("/etc", tmp_path / "dirlink")
    os.mkfifo(tmp_path / "pipe")
    assert unsafe_entries(str(tmp_path)) == ["dirlink", "pipe", "sub/link"]
    copy_regular_files(str(tmp_path), str(tmp_path / ".." / "copy"))
    copied = sorted(str(p.relative_to(tmp_path / ".." / "copy")) for p in (tmp_path / ".." / "copy").rglob("*"))
    assert copied == ["nb.ipynb", "sub", "sub/data.csv"]
    assert all(stat.S_ISREG(os.lstat(tmp_path / ".." / "copy" / p).st_mode) for p in ("nb.ipynb", "sub/data.csv"))
