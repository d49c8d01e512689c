"""What tests import: the kit's root, a submission's cells (``program``), a generated course and the demo
class (fixtures stay in tests/conftest.py). Imported as ``tests.testkit`` (pyproject.toml puts the repository's
root on pytest's path); not ``helpers``, which a test process could then import by that name, the name of a
student's own module in the honest corpora."""
import os
import shutil
from pathlib import Path

from graders.model.exercise import load_assignment

ROOT = Path(__file__).resolve().parents[2]
SBIN = ("/usr/sbin", "/sbin")  # where Debian keeps useradd, userdel and runuser; a minimal PATH (env -i's) has neither


def admin_tool(name: str) -> str:
    """The path of a system administration command (``useradd``, ``runuser``) that tests run as root: found on
    PATH or in the sbin folders a minimal PATH leaves out."""
    found = shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), *SBIN]))
    if found is None:
        raise FileNotFoundError(f"{name} is on neither PATH nor {', '.join(SBIN)}")
    return found


def program(assignment, **answers):
    """A submission: the preamble, then one cell per answer source."""
    return [("preamble", assignment.preamble)] + [(f"your `{name}` cell", src) for name, src in answers.items()]


def generated_course(directory: Path, *assignments, extra_config: str = ""):
    """A course folder with ``assignments`` built into source/ and generated into release/
    (``extra_config`` appended to its nbgrader_config.py first)."""
    from graders.course.build import write_source
    from graders.course.demo import make_course
    course = make_course(directory)
    if extra_config:
        with open(course.root / "nbgrader_config.py", "a") as f:
            f.write("\n" + extra_config + "\n")
    for a in assignments:
        write_source(course.root, a)
    with course.api() as api:
        for a in assignments:
            assert api.generate_assignment(a.name)["success"], a.name
    return course


def make_demo_class(directory: Path, assignment: str = "broadcasting", extra_config: str = ""):
    """A course folder as the README's workflow leaves it: built, released, the demo class submitted."""
    from graders.course.demo import submit_class
    definitions = load_assignment(ROOT / "assignments" / f"{assignment}.py")
    course = generated_course(directory, definitions, extra_config=extra_config)
    with course.api() as api:
        assert api.release_assignment(assignment)["success"]
    return course, submit_class(course, assignment)


def graded_gradebook(cells: dict[str, float], students: list[str]):
    """What ``graders.course.results`` reads of a gradebook: an assignment with these grade cells (name: max
    points) and a submission by each of ``students``."""
    from types import SimpleNamespace
    grade_cells = [SimpleNamespace(name=n, max_score=m) for n, m in cells.items()]
    recorded = SimpleNamespace(submissions=[SimpleNamespace(student=SimpleNamespace(id=s)) for s in students],
                               notebooks=[SimpleNamespace(grade_cells=grade_cells)])
    return SimpleNamespace(find_assignment=lambda name: recorded)
