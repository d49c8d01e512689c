"""Every assignment of the course through nbgrader: the reference notebook earns full marks, the release none."""
import shutil

import pytest

from graders.course.build import write_source
from graders.course.demo import make_course
from graders.course.grade import grade_class
from graders.model.exercise import PARTS, load_course

from tests.testkit import ROOT

pytestmark = pytest.mark.e2e  # every assignment generated and autograded by nbgrader

COURSE = load_course(ROOT / "assignments")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("course-e2e") / "course")
    for assignment in COURSE.values():
        write_source(course.root, assignment)
    with course.api() as api:
        for name in COURSE:
            assert api.generate_assignment(name)["success"], name
    for name in COURSE:
        for student, folder in (("teacher", "source"), ("untouched", "release")):
            dest = course.root / "submitted" / student / name
            dest.mkdir(parents=True)
            shutil.copy(course.root / folder / name / f"{name}.ipynb", dest)
    return course


@pytest.mark.parametrize("name", list(COURSE))
def test_reference_earns_everything_and_the_release_nothing(course, name):
    results = grade_class(course, name, ["teacher", "untouched"])
    assert all(r.success for r in results), [r.reason for r in results]
    scores = course.part_scores(COURSE[name])
    for ex in COURSE[name].exercises:
        for part in PARTS:
            assert scores["teacher"][ex.grade_id(part)] == ex.points.of(part), (ex.name, part)
            assert scores["untouched"][ex.grade_id(part)] == 0.0, (ex.name, part)
