"""``vecgrade status`` as the semester's dashboard (graders/course/status.py), each state both ways, on a course
built and generated once (a real nbgrader gradebook) whose later states are written as nbgrader writes them:
a submission in the exchange, collected, graded (autograded copy, gradebook rows), a resubmission, a due date and
an extension, a manual grade after the feedback page, definitions changed after grading."""
from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from graders.course.feedback import FeedbackRun, record_failures
from graders.course.status import assignment_status, status_json, status_lines
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.pipeline.arrivals import Arrival, save, write_stamp

from tests.testkit import generated_course
from tests.testkit.cli import vecgrade

pytestmark = pytest.mark.e2e  # each test builds a course with nbgrader's apps

A = "broadcasting"
DUE = datetime.datetime(2026, 3, 1, 12, 0)


@pytest.fixture(scope="module")
def built(tmp_path_factory, broadcasting):
    return generated_course(tmp_path_factory.mktemp("built") / "course", broadcasting)


@pytest.fixture
def course(built, tmp_path) -> Course:
    root = tmp_path / "course"
    shutil.copytree(built.root, root, symlinks=True)
    course = Course(root)
    assert course.catalogue  # the catalogue, as status reads it
    return course


def submit(course: Course, student: str, answer: str = "return a[:, :, None] * a[:, None, :]",
           arrived: datetime.datetime = DUE - datetime.timedelta(hours=1)) -> Path:
    """``student``'s notebook in submitted/, collected at ``arrived`` (its time of record)."""
    nb = nbformat.read(course.paths.notebook(Step.RELEASE, A), as_version=4)
    for cell in nb.cells:
        if cell.get("id") == "batch-outer-answer":
            cell.source = f"def batch_outer(a):\n    {answer}\n"
    folder = course.paths.folder(Step.SUBMITTED, A, student)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{A}.ipynb")
    write_stamp(folder, arrived)
    save(course.root, Arrival(student, A, arrived, "collected", None))
    return folder


def grade(course: Course, student: str, score: float = 4.0, feedback: bool = True) -> None:
    """What autograde leaves: the graded copy (the submission's cells, its time of record) and the gradebook's rows,
    ``score`` points on the first grade cell; and, with ``feedback``, the page written from them."""
    submitted = course.paths.folder(Step.SUBMITTED, A, student)
    graded = course.paths.folder(Step.AUTOGRADED, A, student)
    shutil.rmtree(graded, ignore_errors=True)
    shutil.copytree(submitted, graded)
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student(student)
        stamp = (submitted / "timestamp.txt").read_text()
        sub = gb.update_or_create_submission(A, student, timestamp=stamp)
        grades = [g for nb in sub.notebooks for g in nb.grades]
        grades[0].auto_score = score
        for g in grades[1:]:
            g.auto_score = 0.0
        gb.db.commit()
    if feedback:
        write_page(course, student, score)


def write_page(course: Course, student: str, score: float) -> Path:
    page = course.paths.feedback_page(A, student)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f"<html><body><h4>{A} (Score: {score:.1f} / 16.0)</h4></body></html>")
    write_stamp(course.paths.folder(Step.FEEDBACK, A, student), DUE)
    return page


def status(course: Course):
    return assignment_status(course, A, _book(course), entry=course.catalogue[A])


def _book(course: Course):
    from graders.course.status import read_books
    return read_books(course, [A], course.catalogue)[A]


def inbound(course: Course, student: str, when: datetime.datetime) -> Path:
    folder = course.root / "exchange" / "vecgrade" / "inbound" / f"{student}+{A}+{when} UTC+abc"
    folder.mkdir(parents=True)
    return folder


def test_a_submission_waiting_in_the_exchange_is_named_until_collected(course):
    inbound(course, "ada", DUE - datetime.timedelta(hours=3))
    s = status(course)
    assert s.in_exchange == {"ada": ["2026-03-01 09:00:00 UTC"]} and s.submitted == []
    assert any("waiting in the exchange" in line and "nbgrader collect --update broadcasting" in line
               for line in status_lines(s))
    submit(course, "ada", arrived=DUE - datetime.timedelta(hours=2))  # collected after it was submitted
    s = status(course)
    assert s.in_exchange == {} and s.waiting == ["ada"]
    inbound(course, "ada", DUE + datetime.timedelta(hours=5))  # a newer one, after the due date: waiting, late
    s = status(course)
    assert s.in_exchange == {"ada": ["2026-03-01 17:00:00 UTC"]}
    assert "ada" not in s.late  # no due date set yet
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment(A, duedate=DUE)
    assert status(course).late["ada"] == "late 5.0 h, due 2026-03-01 12:00:00 UTC"


def test_a_resubmission_is_not_graded_yet_by_content_not_by_time(course):
    folder = submit(course, "ada")
    grade(course, "ada")
    s = status(course)
    assert s.graded == ["ada"] and s.resubmitted == [] and s.waiting == []
    notebook = folder / f"{A}.ipynb"
    notebook.write_text(notebook.read_text())  # saved again, the same answers: still what was graded
    (folder / "timestamp.txt").write_text("2030-01-01 00:00:00 UTC")
    assert status(course).resubmitted == []
    submit(course, "ada", answer="return torch.einsum('bi,bj->bij', a, a)")  # collected --update: new content
    s = status(course)
    assert s.resubmitted == ["ada"] and s.graded == [] and s.waiting == ["ada"]
    assert any("resubmitted, not graded yet: ada" in line and "vecgrade grade broadcasting -s ada" in line
               for line in status_lines(s))
    from graders.course.results import RESUBMITTED, class_marks
    with Gradebook(course.db_url) as gb:  # report and export: the marks are of the earlier submission
        [row] = class_marks(gb, course, course.catalogue[A])
    assert row.status == f"graded, {RESUBMITTED}" and row.graded
    grade(course, "ada")  # graded again: current
    assert status(course).graded == ["ada"]
    with Gradebook(course.db_url) as gb:
        assert class_marks(gb, course, course.catalogue[A])[0].status == "graded"


def test_late_names_the_due_date_and_the_extension(course):
    from graders.course.extensions import grant
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment(A, duedate=DUE)
    for student in ("ada", "bob"):
        submit(course, student, arrived=DUE + datetime.timedelta(hours=2))
    with Gradebook(course.db_url) as gb:
        grant(gb, A, "ada", 48)  # before ada's submission is in the gradebook
    grade(course, "ada")
    grade(course, "bob")
    s = status(course)
    assert s.late == {"bob": "late 2.0 h, due 2026-03-01 12:00:00 UTC"}  # ada: within her extension
    assert s.extensions == {"ada": 48.0} and s.due == "2026-03-01 12:00:00 UTC"
    with Gradebook(course.db_url) as gb:
        grant(gb, A, "ada", 1)
    assert status(course).late["ada"] == ("late 1.0 h, due 2026-03-01 13:00:00 UTC (the assignment's "
                                          "2026-03-01 12:00:00 UTC + extension 1 h)")


def test_feedback_is_out_of_date_after_a_manual_grade(course):
    submit(course, "ada")
    grade(course, "ada", score=4.0)
    s = status(course)
    assert s.stale_feedback == [] and s.no_feedback == []  # the page says what the gradebook holds
    with Gradebook(course.db_url) as gb:  # the formgrader's manual grade
        gb.find_grade("batch_outer_correct", A, A, "ada").manual_score = 2.0
        gb.find_grade("batch_outer_vectorized", A, A, "ada").manual_score = 1.0
        gb.db.commit()
    s = status(course)
    assert s.stale_feedback == ["ada"]
    assert s.stale_why["ada"].startswith("the page says 4 / 16, the gradebook 3")
    write_page(course, "ada", 3.0)  # vecgrade feedback again
    assert status(course).stale_feedback == []


def test_a_late_students_page_states_the_score_less_the_penalty_and_is_current(course):
    submit(course, "ada")
    grade(course, "ada", score=4.0, feedback=False)
    with Gradebook(course.db_url) as gb:  # what nbgrader's late-submission plugin leaves: 1 point off
        gb.find_submission_notebook(A, A, "ada").late_submission_penalty = 1.0
        gb.db.commit()
    write_page(course, "ada", 3.0)  # nbgrader's GetGrades: the page states the score less the penalty
    assert status(course).stale_feedback == []
    write_page(course, "ada", 4.0)  # a page written before the penalty was taken
    s = status(course)
    assert s.stale_feedback == ["ada"] and s.stale_why["ada"].startswith("the page says 4 / 16, the gradebook 3")


def test_a_page_that_could_not_be_written_gives_the_reason(course):
    submit(course, "ada")
    grade(course, "ada", feedback=False)
    assert status(course).no_feedback == ["ada"]
    record_failures(course, A, FeedbackRun(failed={"ada": "ValueError: missing attachment: image.png"}))
    s = status(course)
    assert s.no_feedback == [] and s.feedback_failed == {"ada": "ValueError: missing attachment: image.png"}
    assert "broadcasting: no feedback page for ada: could not be written: ValueError: missing attachment: " \
           "image.png" in status_lines(s)
    record_failures(course, A, FeedbackRun(written=["ada"]))
    write_page(course, "ada", 4.0)
    assert status(course).feedback_failed == {}


def test_definitions_changed_after_grading_name_the_exercise_and_the_steps(course):
    submit(course, "ada")
    grade(course, "ada")
    assert status(course).changes == [] and status(course).steps == []  # control: nothing changed
    source = course.paths.notebook(Step.SOURCE, A)
    nb = json.loads(source.read_text())
    for cell in nb["cells"]:
        if cell["id"] == "batch-outer-task":
            cell["source"] = "".join(cell["source"]).replace("within 3x", "within 8x")
    source.write_text(json.dumps(nb))
    graded = course.paths.notebook(Step.AUTOGRADED, A, "ada")
    nb = json.loads(graded.read_text())
    nb["metadata"]["vecgrade"] = {"definitions": "0" * 32}  # graded under other definitions than these
    graded.write_text(json.dumps(nb))
    s = status(course)
    text = " | ".join(s.changes)
    assert "the students' notebook differs from the built one: batch_outer: task text" in text
    assert '"within 3x" -> "within 8x"' in text
    assert "graded under older definitions: batch_outer: task text" in text
    assert "pairwise_sq_dists" not in text
    assert [step.split("`")[1] for step in s.steps] == [
        "nbgrader generate_assignment broadcasting --force", "nbgrader release_assignment broadcasting --force",
        "vecgrade grade broadcasting", "vecgrade feedback broadcasting"]


def _stamped(course: Course, student: str, name: str = A) -> None:
    """ada's graded copy records the definitions it was graded under, as ``write_verdicts`` stamps it."""
    from graders.model.fingerprint import stamp
    graded = course.paths.notebook(Step.AUTOGRADED, name, student)
    nb = json.loads(graded.read_text())
    stamp(nb["metadata"], course.catalogue[name].fingerprint)
    graded.write_text(json.dumps(nb))


def test_editing_one_assignments_definitions_flags_that_one_only(course):
    submit(course, "ada")
    grade(course, "ada")
    _stamped(course, "ada")
    assert status(course).changes == []  # control: nothing edited, nothing flagged
    other = course.root / "assignments" / "strides.py"  # another assignment's definitions
    other.write_text(other.read_text() + "\n# a comment the teacher added\n")
    found = status_json(course, list(course.catalogue))
    assert all(a["changes"] == [] for a in found["assignments"]), [a["changes"] for a in found["assignments"]]
    lesson = course.root / "assignments" / "lessons" / f"{A}.md"  # broadcasting's own: its marks are older
    lesson.write_text(lesson.read_text() + "\nOne more line.\n")
    s = status(course)
    assert any(c.startswith("graded under older definitions") for c in s.changes), s.changes
    assert "vecgrade grade broadcasting" in " ".join(s.steps)
    found = status_json(course, list(course.catalogue))
    flagged = [a["assignment"] for a in found["assignments"] if a["changes"]]
    assert flagged == [A]


def test_a_shared_definitions_file_changes_every_assignment(course):
    submit(course, "ada")
    grade(course, "ada")
    _stamped(course, "ada")
    shared = course.root / "assignments" / "variants" / "__init__.py"  # named after no assignment
    shared.write_text(shared.read_text() + "\n# shared by every assignment\n")
    assert any(c.startswith("graded under older definitions") for c in status(course).changes)


def test_an_extension_granted_after_grading_says_the_penalty_stands_until_regraded(course):
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment(A, duedate=DUE)
    submit(course, "ada", arrived=DUE + datetime.timedelta(hours=2))
    grade(course, "ada", feedback=False)
    with Gradebook(course.db_url) as gb:  # what nbgrader's late-submission plugin leaves: 2 points off
        gb.find_submission_notebook(A, A, "ada").late_submission_penalty = 2.0
        gb.db.commit()
    s = status(course)
    assert s.penalty_stale == {} and "ada" in s.late  # control: late, and the penalty is right
    assert not any("extension granted after grading" in line for line in status_lines(s))
    result = vecgrade("extend", A, "ada", "--hours", "3", "-c", course.root)
    assert result.exit_code == 0, result.output
    assert "ada's submission of broadcasting is graded already: nbgrader's late penalty of 2 points was taken" \
           in result.stdout and "`vecgrade grade broadcasting -s ada`" in result.stdout
    s = status(course)
    assert s.penalty_stale == {"ada": 2.0} and "ada" not in s.late
    assert ("broadcasting: extension granted after grading: ada: nbgrader's late penalty of 2 points stands though "
            "the submission is not late now; regrade with `vecgrade grade broadcasting -s ada` to apply it"
            ) in status_lines(s)
    mine = next(a for a in status_json(course, [A])["assignments"] if a["assignment"] == A)
    assert mine["penalty_stale"] == {"ada": 2.0}
    with Gradebook(course.db_url) as gb:  # the regrade: autograde computes the penalty under the new due date
        gb.find_submission_notebook(A, A, "ada").late_submission_penalty = 0.0
        gb.db.commit()
    assert status(course).penalty_stale == {}


def test_an_extension_before_grading_gives_no_hint(course):
    with Gradebook(course.db_url) as gb:
        gb.update_or_create_assignment(A, duedate=DUE)
    submit(course, "ada", arrived=DUE + datetime.timedelta(hours=2))
    result = vecgrade("extend", A, "ada", "--hours", "3", "-c", course.root)
    assert result.exit_code == 0 and "ada: +3 h" in result.stdout and "graded already" not in result.stdout
    grade(course, "ada", feedback=False)  # graded within the extension: no penalty taken
    assert status(course).penalty_stale == {}
    result = vecgrade("extend", A, "ada", "--hours", "4", "-c", course.root)  # graded, on time, no penalty
    assert result.exit_code == 0 and "graded already" not in result.stdout


def test_the_course_view_and_json(course):
    submit(course, "ada")
    inbound(course, "bob", DUE)
    result = vecgrade("status", "-c", course.root, "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    names = [a["assignment"] for a in found["assignments"]]
    assert names == list(course.catalogue) and len(names) > 1  # every assignment of the course
    mine = next(a for a in found["assignments"] if a["assignment"] == A)
    assert mine["waiting"] == ["ada"] and mine["in_exchange"] == {"bob": ["2026-03-01 12:00:00 UTC"]}
    table = vecgrade("status", "-c", course.root)
    assert table.exit_code == 0 and "waiting in the exchange" in table.stdout and "in exchange" in table.stdout


def test_status_json_without_a_gradebook_says_so(course):
    (course.root / "gradebook.db").unlink()
    found = status_json(course, [A])
    assert found["assignments"][0]["graded"] == [] and "nothing graded yet" in found["notes"][0]
