"""The course's own setup cell is never the student's code, with or without nbgrader's metadata; a student's own
import of a module outside the subset still is."""
import nbformat
import pytest

from graders.checks.static import Submission
from graders.model.exercise import load_course
from graders.model.notebook import is_course_setup, submission_cells

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")


def notebook(name, stripped):
    nb = nbformat.read(ROOT / "source" / name / f"{name}.ipynb", as_version=4)
    if stripped:
        for cell in nb.cells:
            cell.metadata = {}
    return nb


def costs(nb, assignment, exercise):
    submission = Submission(submission_cells(nb, assignment))
    return submission.iteration_findings(exercise), submission.outside_findings(exercise)


@pytest.mark.parametrize("stripped", [False, True])
@pytest.mark.parametrize("name", sorted(COURSE))
def test_the_setup_cells_import_of_the_self_check_costs_nothing(name, stripped):
    assignment = COURSE[name]
    nb = notebook(name, stripped)
    cells = submission_cells(nb, assignment)
    assert not any("graders.student" in source for _, source in cells)
    for ex in assignment.exercises:  # the built notebook holds the reference: no finding at all
        assert costs(nb, assignment, ex.name) == ([], []), ex.name


def test_the_einops_setup_cell_was_reached_through_its_guarded_imports():
    """einops' answers read `einops`, which the setup cell's guard binds too: that is how the import was reached."""
    nb = notebook("einops", stripped=True)
    setup = next(c for c in nb.cells if c.cell_type == "code" and "register_exercises(" in c.source)
    assert "import einops" in setup.source and is_course_setup(setup.source, COURSE["einops"])


@pytest.mark.parametrize("stripped", [False, True])
def test_a_students_own_import_outside_the_subset_is_still_a_finding(stripped):
    assignment = COURSE["einops"]
    nb = notebook("einops", stripped)
    answer = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("def max_pool_2x2("))
    nb.cells.insert(nb.cells.index(answer), nbformat.v4.new_code_cell("import numpy as np\n"))
    answer.source = answer.source.replace("def max_pool_2x2(x):\n", "def max_pool_2x2(x):\n    _ = np.pi\n")
    found, outside = costs(nb, assignment, "max_pool_2x2")
    assert [f.what for f in outside] == ["import of `numpy`"], found


def test_a_setup_cell_the_student_added_to_is_the_students():
    assignment = COURSE["einops"]
    setup = next(c for c in notebook("einops", True).cells if c.cell_type == "code" and "register_exercises(" in c.source)
    assert is_course_setup(setup.source, assignment)
    added = setup.source.replace("    import einops\n", "    import einops\n    import numpy as np\n")
    assert added != setup.source and not is_course_setup(added, assignment)
    assert not is_course_setup(setup.source + "\nX = 1\n", assignment)
    assert not is_course_setup("from graders.student.selfcheck import grade_part\n", assignment)
