"""The markers keep `make test-fast` fast: a test that runs nbgrader's apps (directly, through a fixture of its
module, or through conftest's PostgreSQL, Dask and browser fixtures) carries `e2e`, and tests/browser carries
`browser`. Read from the test files' source, so an unmarked new test fails here, not in a slow fast run."""
import ast
from pathlib import Path

from tests.testkit import ROOT

# what runs nbgrader's apps (or the whole grading of a class) when a test calls it
RUNS_NBGRADER = {"grade_class", "generated_course", "make_demo_class", "generate_assignment", "autograde",
                 "generate_feedback", "release_assignment", "submit_assignment", "fetch_assignment"}
CONFTEST_E2E = {"postgres_url", "dask_scheduler", "browser", "page"}  # conftest's fixtures that start servers


def _marks(node: ast.AST) -> str:
    return " ".join(ast.unparse(d) for d in getattr(node, "decorator_list", []))


def unmarked(source: str, mark: str = "e2e") -> list[str]:
    """The tests of a module's ``source`` that run nbgrader (as above) without carrying ``mark``."""
    tree = ast.parse(source)
    module_marks = " ".join(ast.unparse(n.value) for n in tree.body if isinstance(n, ast.Assign)
                            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in n.targets))
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    fixtures = {name for name, f in functions.items() if "fixture" in _marks(f)}

    def runs(name: str, seen: frozenset = frozenset()) -> bool:
        if name in seen:
            return False
        if name not in functions:
            return name in CONFTEST_E2E
        f = functions[name]
        called = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                  for c in ast.walk(f) if isinstance(c, ast.Call)}
        if called & RUNS_NBGRADER:
            return True
        requested = [a.arg for a in f.args.args if a.arg in fixtures or a.arg not in functions]
        helpers = [c for c in called if c in functions and c not in fixtures]
        return any(runs(n, seen | {name}) for n in requested + helpers)

    return [name for name, f in functions.items() if name.startswith("test_") and runs(name)
            and f"mark.{mark}" not in _marks(f) + " " + module_marks]


def test_every_test_that_runs_nbgrader_is_marked_e2e():
    found = {str(path.relative_to(ROOT)): unmarked(path.read_text()) for path in sorted((ROOT / "tests").rglob("test_*.py"))}
    assert {path: tests for path, tests in found.items() if tests} == {}


def test_every_browser_test_is_marked_browser():
    for path in sorted((ROOT / "tests" / "browser").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        assert any(isinstance(n, ast.Assign) and "pytestmark" in ast.unparse(n) and "mark.browser" in ast.unparse(n)
                   for n in tree.body), path


def test_the_scan_finds_an_unmarked_test_through_a_fixture_and_a_helper():
    planted = '''
import pytest

@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return grade_class(course, "broadcasting", ["ada"])

def _course(tmp_path):
    return generated_course(tmp_path / "c")

def test_reads_the_gradebook(graded):
    assert graded

def test_builds_a_course(tmp_path):
    assert _course(tmp_path)

def test_with_postgres(postgres_url):
    assert postgres_url

@pytest.mark.e2e
def test_marked(graded):
    assert graded

def test_pure():
    assert 1 + 1 == 2
'''
    assert unmarked(planted) == ["test_reads_the_gradebook", "test_builds_a_course", "test_with_postgres"]
    assert unmarked("import pytest\npytestmark = pytest.mark.e2e\n" + planted.replace("import pytest\n", "")) == []
    assert Path(__file__).name == "test_markers.py"


def shared_basenames(paths: list[Path]) -> list[str]:
    """Test module names used twice: pytest imports tests/ by basename (no packages), so the second one found is
    an 'import file mismatch' error for the whole run."""
    seen: dict[str, int] = {}
    for p in paths:
        seen[p.name] = seen.get(p.name, 0) + 1
    return sorted(name for name, n in seen.items() if n > 1)


def test_no_two_test_modules_share_a_name():
    assert shared_basenames(sorted((ROOT / "tests").rglob("test_*.py"))) == []


def test_a_shared_test_module_name_is_found():
    paths = [Path("tests/test_lab.py"), Path("tests/browser/test_lab.py"), Path("tests/test_other.py")]
    assert shared_basenames(paths) == ["test_lab.py"]
