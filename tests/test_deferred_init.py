"""``vecgrade`` registers nbgrader and nbconvert without running their package ``__init__`` (``entry.defer_package_init``):
a command imports the submodules it uses, never the Jupyter server extensions, and the package still behaves as
imported the usual way wherever one of its names is used."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PACKAGE = {
    "__init__.py": "import sys\nsys.modules['pkg_init_ran'] = sys\nfrom ._version import __version__\n"
                   "def hook():\n    return 'hooked'\n",
    "_version.py": "__version__ = '1.2.3'\n",
    "sub.py": "from . import other\nVALUE = other.VALUE + 1\n",
    "other.py": "VALUE = 41\n",
}

PROBE = textwrap.dedent("""
    import json, sys
    from graders.entry import defer_package_init
    defer_package_init("pkg")
    seen = {}
    from pkg import sub
    seen["sub"] = sub.VALUE
    seen["version"] = sys.modules["pkg"].__version__
    seen["ran_before_a_name"] = "pkg_init_ran" in sys.modules
    import pkg
    seen["hook"] = pkg.hook()
    seen["ran_after"] = "pkg_init_ran" in sys.modules
    try:
        pkg.missing
    except AttributeError:
        seen["missing"] = "AttributeError"
    print(json.dumps(seen))
""")


def test_a_deferred_package_runs_its_init_only_when_a_name_it_defines_is_used(tmp_path):
    for name, text in PACKAGE.items():
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    seen = json.loads(result.stdout)
    assert seen == {"sub": 42, "version": "1.2.3", "ran_before_a_name": False, "hook": "hooked", "ran_after": True,
                    "missing": "AttributeError"}


STATUS = textwrap.dedent("""
    import atexit, json, sys
    from graders import entry
    out = sys.argv[1]
    def report():
        with open(out, "w") as f:
            json.dump(sorted(sys.modules), f)
    atexit.register(report)
    sys.argv = ["vecgrade", *sys.argv[2:]]
    if sys.argv[1:2] == ["--plain"]:  # the control: the same command without the deferral
        del sys.argv[1]
        entry.defer_package_init = lambda name: None
    entry.main()
""")
UNUSED = ("nbgrader.server_extensions", "jupyter_server", "nbconvert.postprocessors")  # none read the gradebook


def loaded(tmp_path: Path, course: Path, *flags: str) -> set[str]:
    out = tmp_path / "modules.json"
    result = subprocess.run([sys.executable, "-c", STATUS, str(out), *flags, "status", "-c", str(course)],
                            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stdout + result.stderr
    return set(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    from graders.course.demo import make_course
    return make_course(tmp_path_factory.mktemp("deferred") / "course").root


@pytest.mark.e2e
def test_status_imports_no_jupyter_server_extension(tmp_path, course):
    modules = loaded(tmp_path, course)
    assert "nbgrader.api" in modules and not modules & set(UNUSED)


@pytest.mark.e2e
def test_without_the_deferral_status_would_import_them(tmp_path, course):
    assert set(UNUSED) <= loaded(tmp_path, course, "--plain")
