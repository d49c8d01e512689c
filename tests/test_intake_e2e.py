"""End to end through nbgrader, with tight limits: unsafe submissions are refused, floods and slow
notebooks are bounded, and the students after each of them are graded with every mark they deserve.
Submissions over the intake caps (20,000 small files, a 25 MB file) are refused before nbgrader walks
them, and a notebook of 5000 one-line cells stays inside its kernel budget.

Each attacking notebook holds the reference answers, and ``b_control`` holds them with a harmless
scratch cell of the same shape: what the limits cut must not cost any mark the control gets.
"""
import json
import os
import re
import stat

import nbformat
import nbgrader.utils
import pytest

from graders.course.grade import grade_class
from graders.course.personas import Persona
from graders.model.exercise import PARTS
from graders.pipeline.intake import Intake, UnsafeSubmissionError, copy_regular_files, survey, unsafe_entries

from tests.testkit import generated_course

IN_KERNEL = "'get_ipython' in globals()"  # slow or loud in the notebook's kernel (its shell) only, never in a grading child
FLOOD = f"if {IN_KERNEL}:\n    print(('x' * 1_000_000 + '\\n') * 40)\n"  # 40 lines of 1 MB (no loop: fair to "vectorized")
QUIET = f"import os\nif {IN_KERNEL}:\n    print('hello', os.environ.get('NBGRADER_EXECUTION'))\n"
SLOW = f"import time\nif {IN_KERNEL}:\n    time.sleep(60)\n"
XSS = "print('ok')\nfrom IPython.display import HTML, display\ndisplay(HTML('<script>alert(1)</script><img src=x onerror=alert(2)>'))\n"
LIVE_HTML = re.compile(r"<script>alert|<img[^>]*onerror")  # outputs: alert(1), (2); markdown: (3), (4)  # a tag the browser would run, not escaped text
TIGHT = """
c.ResilientExecute.timeout = 10
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
              _honest("c_slow", [SLOW] * 5), _honest("c_files"), _honest("c_big"),
              _honest("c_cells", [f"x{i} = {i}; __import__('time').sleep(0.01)" for i in range(5000)]),
              _honest("d_xss", [XSS]), _honest("e_next")]
    for person in people:
        folder = course.root / "submitted" / person.student / "broadcasting"
        folder.mkdir(parents=True)
        nb = person.notebook(release, broadcasting)
        if person.student == "d_xss":
            nb.cells.insert(2, nbformat.v4.new_markdown_cell("<script>alert(3)</script><img src=x onerror=alert(4)>"))
        nbformat.write(nb, folder / "broadcasting.ipynb")
    os.symlink(course.root / "gradebook.db", course.root / "submitted" / "b_link" / "broadcasting" / "data.db")
    for i in range(20_000):  # the red team's submission: nbgrader's is_ignored would take ~40 minutes over it
        (course.root / "submitted" / "c_files" / "broadcasting" / f"f{i:05}.txt").write_bytes(b"x")
    (course.root / "submitted" / "c_big" / "broadcasting" / "weights.bin").write_bytes(b"\0" * (25 << 20))
    walked: list[str] = []  # every folder nbgrader's quadratic walk looks at
    real = nbgrader.utils.is_ignored
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nbgrader.utils, "is_ignored", lambda name, *a: walked.append(name) or real(name, *a))
        results = grade_class(course, "broadcasting", [p.student for p in people])
    return course, {r.student: r for r in results}, walked


def _marks(course, broadcasting, student):
    scores = course.part_scores(broadcasting).get(student)
    return None if scores is None else [scores[ex.grade_id(p)] / ex.points.of(p)
                                        for ex in broadcasting.exercises for p in PARTS]


@pytest.mark.e2e
def test_a_symlink_in_submitted_is_refused_before_any_copy(graded, broadcasting):
    course, results, _ = graded
    assert not results["b_link"].success and "UnsafeSubmissionError" in results["b_link"].reason
    assert "data.db" in results["b_link"].reason
    assert not (course.root / "autograded" / "b_link").exists() or not any(
        (course.root / "autograded" / "b_link").rglob("data.db"))


@pytest.mark.e2e
def test_every_other_student_is_graded_and_keeps_the_marks_of_the_control(graded, broadcasting):
    course, results, _ = graded
    students = ("a_flood", "b_control", "c_slow", "c_cells", "d_xss", "e_next")
    assert all(results[s].success for s in students), {s: results[s].reason for s in students}
    marks = {s: _marks(course, broadcasting, s) for s in students}
    correct = [i for i in range(len(marks["e_next"])) if PARTS[i % 3] == "correct"]
    vectorized = [i for i in range(len(marks["e_next"])) if PARTS[i % 3] == "vectorized"]
    assert all(marks[s][i] == 1.0 for s in students for i in correct), marks
    assert all(marks[s][i] == marks["b_control"][i] for s in students[:5] for i in vectorized), marks
    assert all(marks["e_next"][i] == 1.0 for i in vectorized), marks  # the clean notebook after them all


@pytest.mark.e2e
def test_the_kernel_runs_as_nbgrader_autograde_runs_it(graded):
    """The kernel's steps run outside nbgrader's converter (a worker process, a Dask task), yet the
    notebook sees ``NBGRADER_EXECUTION=autograde`` as under nbgrader: its self-checks stand aside."""
    course, _, _ = graded
    nb = nbformat.read(course.root / "autograded" / "b_control" / "broadcasting" / "broadcasting.ipynb", 4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "hello autograde" in text
    assert "[ok] batch_outer(a)" in text  # control: the visible examples still print their lines
    assert "no Python-level iteration found in the code" not in text  # the examples cell's report stood aside


@pytest.mark.e2e
def test_an_output_flood_is_capped_by_bytes(graded):
    course, _, _ = graded
    flood = course.root / "autograded" / "a_flood" / "broadcasting" / "broadcasting.ipynb"
    honest = course.root / "autograded" / "e_next" / "broadcasting" / "broadcasting.ipynb"
    assert flood.stat().st_size < honest.stat().st_size + 64 * 1024 + 8192  # 40 MB printed, at most 64 KB kept
    assert "output cut" in flood.read_text()
    assert "output cut" not in honest.read_text()  # control: nothing cut from an ordinary notebook


@pytest.mark.e2e
def test_a_timed_out_cell_shows_one_line_and_the_budget_stops_the_rest(graded):
    course, _, _ = graded
    nb = nbformat.read(course.root / "autograded" / "c_slow" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    slow = [c for c in nb.cells if c.cell_type == "code" and "time.sleep(60)" in c.source]
    texts = [" ".join(o.get("text", "") + " ".join(o.get("traceback", [])) for o in c.outputs) for c in slow]
    assert "stopped after 10 s: the cell ran past its time budget" in texts[0]
    assert "time budget of 40 s" in texts[-1]  # the notebook's budget was spent: not run
    whole = nbformat.writes(nb)
    assert "KeyboardInterrupt" not in whole and "site-packages" not in whole


@pytest.mark.e2e
def test_feedback_and_the_formgrader_view_carry_no_script(graded):
    course, _, _ = graded
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
    with pytest.raises(UnsafeSubmissionError, match="which is not a regular file"):
        copy_regular_files(str(tmp_path), str(tmp_path / ".." / "copy"))  # the one safe copy refuses, copies nothing
    assert not (tmp_path / ".." / "copy").exists()
    for path in ("dirlink", "pipe", "sub/link"):
        os.unlink(tmp_path / path)
    copy_regular_files(str(tmp_path), str(tmp_path / ".." / "copy"))  # control: regular files and folders are copied
    copied = sorted(str(p.relative_to(tmp_path / ".." / "copy")) for p in (tmp_path / ".." / "copy").rglob("*"))
    assert copied == ["nb.ipynb", "sub", "sub/data.csv"]
    assert all(stat.S_ISREG(os.lstat(tmp_path / ".." / "copy" / p).st_mode) for p in ("nb.ipynb", "sub/data.csv"))


@pytest.mark.e2e
@pytest.mark.parametrize("student, why", [("c_files", "holds more than 100 files"), ("c_big", "holds more than 20 MB")])
def test_a_submission_over_the_intake_caps_is_refused_before_nbgrader_walks_it(graded, student, why):
    course, results, walked = graded
    assert not results[student].success
    assert f"UnsafeSubmissionError: {student}/broadcasting {why}; keep only the notebook" in results[student].reason
    assert not any(f"/{student}/" in name for name in walked)  # nbgrader never globbed it
    assert any("/b_control/" in name for name in walked)  # control: it does walk an accepted submission
    assert not (course.root / "autograded" / student).exists()  # nothing of it was copied


@pytest.mark.e2e
def test_a_notebook_of_5000_cells_stays_inside_its_kernel_budget(graded):
    """Each cell costs the kernel at least 10 ms (it sleeps, so a fast machine cannot run them all within the
    budget): the budget (40 s here) stops the rest, which show why."""
    course, _, _ = graded
    nb = nbformat.read(course.root / "autograded" / "c_cells" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    one_line = re.compile(r"x\d+ = \d+; __import__\('time'\)\.sleep\(0\.01\)")
    cells = [c for c in nb.cells if c.cell_type == "code" and one_line.fullmatch(c.source)]
    late = [i for i, c in enumerate(cells) if c.outputs and "time budget of 40 s" in c.outputs[0].get("text", "")]
    assert len(cells) == 5000 and 0 < len(late) < 5000, len(late)
    assert not any(c.get("execution_count") for c in cells[late[0]:])  # once the budget is spent, no cell runs
    ran = [i for i in range(late[0]) if cells[i].get("execution_count")]
    assert len(ran) >= late[0] - 1, [(i, cells[i].outputs) for i in range(late[0]) if i not in set(ran)][:3]


def _submission(folder, files=0, folders=0, size=0):
    folder.mkdir(parents=True)
    for i in range(files):
        (folder / f"f{i}").write_bytes(b"x" * size)
    for i in range(folders):
        (folder / f"d{i}").mkdir()
    return str(folder)


def test_the_intake_walk_stops_at_the_cap_and_opens_no_file(tmp_path, monkeypatch):
    folder = _submission(tmp_path / "s", files=20_000)
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(path) or real_open(path, *a, **k))
    found = survey(folder, 100, 20 << 20)
    assert found.over == "files" and found.entries == 101 and opened == []  # 101 lstats of 20,000, no read


def test_intake_caps_count_files_and_folders_bytes_and_cells(tmp_path):
    intake = Intake(max_files=100, max_bytes=2 << 20, max_cells=10)
    fits = _submission(tmp_path / "fits", files=60, folders=40)  # 100 entries: at the cap, not over
    assert intake.refusal(fits, "ada/a") is None
    os.mkdir(os.path.join(fits, "d0", "one-more"))
    assert intake.refusal(fits, "ada/a") == ("UnsafeSubmissionError: ada/a holds more than 100 files; "
                                             "keep only the notebook and the files it needs")
    heavy = _submission(tmp_path / "heavy", files=1, size=1536 << 10)
    assert intake.refusal(heavy, "bob/a") is None  # control: 1.5 MB under 2 MB
    (tmp_path / "heavy" / "g").write_bytes(b"x" * (1 << 20))
    assert "bob/a holds more than 2 MB" in intake.refusal(heavy, "bob/a")
    notebook = {"cells": [{"cell_type": "code", "source": "x = 1"}] * 10, "metadata": {}, "nbformat": 4}
    cells = _submission(tmp_path / "cells")
    (tmp_path / "cells" / "a.ipynb").write_text(json.dumps(notebook))
    assert intake.refusal(cells, "cy/a") is None  # control: 10 cells is the cap
    notebook["cells"] *= 2
    (tmp_path / "cells" / "a.ipynb").write_text(json.dumps(notebook))
    assert intake.refusal(cells, "cy/a").startswith("UnsafeSubmissionError: cy/a/a.ipynb holds more than 10 cells")
    (tmp_path / "cells" / "a.ipynb").write_text("{ not json")
    assert intake.refusal(cells, "cy/a") is None  # not a notebook: nbgrader says why, as it does without caps


def test_the_kernels_copy_holds_only_what_it_needs_within_the_caps(tmp_path):
    source = _submission(tmp_path / "src", files=3, size=10)
    (tmp_path / "src" / "a.ipynb").write_text("{}")
    (tmp_path / "src" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "src" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    skip = [".ipynb_checkpoints", "*.ipynb"]  # what nbgrader's autograde leaves out of autograded/ too
    copy_regular_files(source, str(tmp_path / "work"), Intake(max_files=10), skip)
    assert sorted(os.listdir(tmp_path / "work")) == ["f0", "f1", "f2"]
    with pytest.raises(UnsafeSubmissionError, match="holds more than 2 files"):
        copy_regular_files(source, str(tmp_path / "refused"), Intake(max_files=2), skip)
    assert not (tmp_path / "refused").exists()  # over the caps nothing is copied
