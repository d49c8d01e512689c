"""Shared fixtures: the course's definitions, and small programs to grade."""
from pathlib import Path

import pytest

from graders.model.exercise import load_assignment

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def broadcasting():
    return load_assignment(ROOT / "assignments" / "broadcasting.py")


def program(assignment, **answers):
    """A submission: the preamble, then one cell per answer source."""
    return [("preamble", assignment.preamble)] + [(f"your `{name}` cell", src) for name, src in answers.items()]


def make_demo_class(directory: Path, assignment: str = "broadcasting", extra_config: str = ""):
    """A course folder as the README's workflow leaves it: built, released, the demo class submitted."""
    from graders.course.build import write_source
    from graders.course.demo import make_course, submit_class
    course = make_course(directory)
    if extra_config:
        with open(course.root / "nbgrader_config.py", "a") as f:
            f.write("\n" + extra_config + "\n")
    for a in course.assignments.values():
        write_source(course.root, a)
    with course.api() as api:
        assert api.generate_assignment(assignment)["success"]
        assert api.release_assignment(assignment)["success"]
    return course, submit_class(course, assignment)
