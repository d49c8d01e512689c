"""Answer groups read cells through the one reader (graders.checks.reader): a notebook refused for a cell nested
past the limit is left out of the groups, and its classmates are grouped as before."""
import nbformat
import pytest

from graders.course.groups import answer_groups
from graders.model.notebook import answer_id, grade_id_of

from tests.testkit import generated_course

pytestmark = pytest.mark.e2e

REF = "def batch_outer(a):\n    return a[:, :, None] * a[:, None, :]\n"
DEEP_SCRATCH = "junk = " + " + ".join(["0"] * 600)


def test_a_refused_deep_notebook_is_left_out_of_the_groups(tmp_path, broadcasting):
    course = generated_course(tmp_path / "course", broadcasting)
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    for student, scratch in {"ann": None, "ben": None, "deep": DEEP_SCRATCH}.items():
        nb = nbformat.read(release, as_version=4)
        at = next(i for i, cell in enumerate(nb.cells) if grade_id_of(cell) == answer_id("batch_outer"))
        nb.cells[at].source = REF
        if scratch is not None:
            nb.cells.insert(at + 1, nbformat.v4.new_code_cell(scratch))
        dest = course.root / "autograded" / student / "broadcasting"
        dest.mkdir(parents=True)
        nbformat.write(nb, dest / "broadcasting.ipynb")
    groups = {g.exercise: g for g in answer_groups(course, broadcasting, ["ann", "ben", "deep"])}["batch_outer"]
    assert [g.students for g in groups.groups] == [["ann", "ben"]]
