"""Issue 17: identical programs get one verdict, shared across the grading processes once settled, and the
report shows them as answer groups (with near-duplicates: the same program up to renamed local variables)."""
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from graders.course.groups import answer_groups, groups_html, groups_text
from graders.engine.coordinator import Engine
from graders.model.notebook import answer_id, grade_id_of

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e
VECGRADE = str(Path(sys.executable).with_name("vecgrade"))

REF = "def batch_outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
RESTYLED = "def batch_outer(a):\n    # each row with itself\n    return a[:, :, None]*a[:, None, :]\n"
RENAMED = "def batch_outer(x):\n    return x[:, :, None] * x[:, None, :]\n"
EINSUM = "def batch_outer(a):\n    return torch.einsum('bi,bj->bij', a, a)\n"
CLASS = {"ann": REF, "ben": RESTYLED, "cat": REF, "dan": RENAMED, "eve": EINSUM, "fox": REF}


def _outputs(course, student, grade_id):
    nb = nbformat.read(course.root / "autograded" / student / "broadcasting" / "broadcasting.ipynb", as_version=4)
    return [c.outputs for c in nb.cells if grade_id_of(c) == grade_id]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("groups") / "course", broadcasting)
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    for student, answer in CLASS.items():
        nb = nbformat.read(release, as_version=4)
        for cell in nb.cells:
            if grade_id_of(cell) == answer_id("batch_outer"):
                cell.source = answer
        dest = course.root / "submitted" / student / "broadcasting"
        dest.mkdir(parents=True)
        nbformat.write(nb, dest / "broadcasting.ipynb")
    with Engine(course, "broadcasting", jobs=2) as grader:
        results = grader.grade(list(CLASS))
        gradings, capacity = dict(grader.gradings), grader.executor.capacity
    return course, results, (gradings, capacity)


def test_each_distinct_program_is_graded_once_and_identical_ones_share_every_verdict(graded, broadcasting):
    course, results, (gradings, capacity) = graded
    assert all(r.success for r in results), [(r.student, r.reason) for r in results]
    # across two processes, no job waits for another's: a program is computed again only by the jobs dispatched
    # before it settled (at most the executor's capacity), never after
    assert gradings and max(gradings.values()) <= capacity < len(CLASS), gradings
    scores = course.part_scores(broadcasting)
    same = [scores[s] for s in ("ann", "ben", "cat", "fox")]
    assert all(s == same[0] for s in same) and same[0]["batch_outer_fast"] == 1.0
    for part in ("correct", "vectorized", "fast"):
        shown = [_outputs(course, s, f"batch_outer_{part}") for s in ("ann", "ben", "cat", "fox")]
        assert all(o == shown[0] for o in shown), part  # the same message, measured figures included


def test_the_report_shows_the_groups_largest_first_with_near_duplicates(graded, broadcasting):
    course, results, _ = graded
    groups = {g.exercise: g for g in answer_groups(course, broadcasting, [r.student for r in results])}
    outer = groups["batch_outer"]
    assert [sorted(g.students) for g in outer.groups] == [["ann", "ben", "cat", "fox"], ["dan"], ["eve"]]
    near = outer.near_duplicates()
    assert [sorted(s for g in gs for s in g.students) for gs in near] == [["ann", "ben", "cat", "dan", "fox"]]
    text = groups_text(list(groups.values()))
    assert "group 1: 4 student(s), correct pass vectorized pass fast pass: ann, ben, cat, fox" in text
    assert "near-duplicates" in text and "dan" in text
    page = groups_html(list(groups.values()))
    assert "answer-group" in page and "<span" in page  # highlighted code


def test_vecgrade_report_shows_the_groups_on_the_command_line_and_on_its_page(graded, tmp_path):
    course, _, _ = graded
    page = tmp_path / "report.html"
    proc = subprocess.run([VECGRADE, "report", "broadcasting", "--groups", "--html", str(page)], cwd=course.root,
                          capture_output=True, text=True, env=dict(os.environ, COLUMNS="200"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "batch_outer: 3 distinct program(s)" in proc.stdout and "ann, ben, cat, fox" in proc.stdout
    html = page.read_text()
    assert 'id="answer-groups"' in html and html.count('class="answer-group"') >= 3
    plain = subprocess.run([VECGRADE, "report", "broadcasting"], cwd=course.root, capture_output=True, text=True,
                           env=dict(os.environ, COLUMNS="200"))
    assert plain.returncode == 0 and "distinct program" not in plain.stdout  # only when asked for


def test_the_same_answer_with_other_modules_of_ones_own_is_another_program(tmp_path, broadcasting):
    """The grader's key covers the student's own modules (a ``helpers.py`` beside the notebook, or one the notebook
    writes with ``%%writefile``), so the report does not group two answers that only look the same, and groups a
    submitted file with the same module written by a cell."""
    course = generated_course(tmp_path / "course", broadcasting)
    uses = "from helpers import outer\n\n\ndef batch_outer(a):\n    return outer(a)\n"
    vectorized = "import torch\n\n\ndef outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
    looping = "import torch\n\n\ndef outer(a):\n    return torch.stack([r[:, None] * r[None, :] for r in a])\n"
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    for student, (file, written) in {"gus": (vectorized, None), "hal": (looping, None),
                                     "ivy": (None, looping)}.items():
        nb = nbformat.read(release, as_version=4)
        at = next(i for i, cell in enumerate(nb.cells) if grade_id_of(cell) == answer_id("batch_outer"))
        nb.cells[at].source = uses
        if written is not None:
            nb.cells.insert(at, nbformat.v4.new_code_cell("%%writefile helpers.py\n" + written))
        dest = course.root / "submitted" / student / "broadcasting"
        dest.mkdir(parents=True)
        nbformat.write(nb, dest / "broadcasting.ipynb")
        if file is not None:
            (dest / "helpers.py").write_text(file)
    with Engine(course, "broadcasting") as grader:
        assert all(r.success for r in grader.grade(["gus", "hal", "ivy"]))
    groups = {g.exercise: g for g in answer_groups(course, broadcasting, ["gus", "hal", "ivy"])}["batch_outer"]
    # hal's file and ivy's %%writefile cell are the same module: one program; gus's file is another
    assert [sorted(g.students) for g in groups.groups] == [["hal", "ivy"], ["gus"]]
    assert [g.verdict["fast"] for g in groups.groups] == [False, True]

