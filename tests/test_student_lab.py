"""`vecgrade student-lab`: the student's JupyterLab loses nbgrader's teacher tools, the teacher's keeps them all.

The student's environment is a fresh venv (no pip, made in a fraction of a second) that finds this
environment's packages through a path file, so its ``sys.prefix``, where JupyterLab's page config
for the environment lives, is its own; this environment stands for the teacher's. Both read the
user's level from a temporary ``JUPYTER_CONFIG_DIR``, never the real one.
"""
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from graders.model.exits import ExitCode
from graders.student import lab
from graders.student.install import LAB

from tests.testkit import ROOT

RUN_COMMAND = "import sys; from graders.entry import main; sys.argv[0] = 'vecgrade'; main()"
READ_DISABLED = "import json; from graders.student.lab import disabled_plugins; print(json.dumps(sorted(disabled_plugins())))"
venv = pytest.mark.e2e  # a real venv and JupyterLab imported in it, a few processes per test


@pytest.fixture
def student_env(tmp_path) -> tuple[Path, dict]:
    """A fresh venv's python seeing this environment's packages, and the environment variables to run it with."""
    venv = tmp_path / "student-venv"
    made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    (Path(site) / "teacher-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config")}
    return python, env


def run(python: Path, env: dict, code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


def disabled_in(python: Path, env: dict) -> set[str]:
    result = run(python, env, READ_DISABLED)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout))


def teacher_page_config() -> str:
    """This environment's own page config file, as text ("" when there is none)."""
    path = Path(sys.prefix) / "etc" / "jupyter" / "labconfig" / "page_config.json"
    return path.read_text() if path.exists() else ""


@venv
def test_the_student_step_disables_the_teacher_plugins_only_and_the_teachers_environment_keeps_them(student_env):
    python, env = student_env
    teacher_before = teacher_page_config()
    assert not disabled_in(python, env) & set(lab.TEACHER_PLUGINS)  # before the step: every tool shows

    result = run(python, env, RUN_COMMAND, "student-lab")
    assert result.returncode == ExitCode.OK and result.stderr == "", result.stderr
    assert "student tools only" in result.stdout
    written = python.parent.parent / "etc" / "jupyter" / "labconfig" / "page_config.json"
    config = json.loads(written.read_text())  # in the student's environment, as `labextension disable` writes it
    assert set(config["disabledExtensions"]) == set(lab.TEACHER_PLUGINS) == set(config["lockedExtensions"])
    disabled = disabled_in(python, env)
    assert set(lab.TEACHER_PLUGINS) <= disabled and not disabled & set(lab.STUDENT_PLUGINS), disabled

    again = run(python, env, RUN_COMMAND, "student-lab")
    assert again.returncode == ExitCode.OK and json.loads(written.read_text()) == config  # nothing more changes
    assert teacher_page_config() == teacher_before  # the teacher's environment is untouched
    assert not disabled_in(Path(sys.executable), env) & set(lab.TEACHER_PLUGINS)
    assert not (Path(env["JUPYTER_CONFIG_DIR"]) / "labconfig").exists()  # nor the user's folder


@venv
def test_with_user_it_writes_the_users_jupyter_config_instead(student_env):
    python, env = student_env
    result = run(python, env, RUN_COMMAND, "student-lab", "--user")
    assert result.returncode == ExitCode.OK, result.stderr
    assert not (python.parent.parent / "etc" / "jupyter" / "labconfig").exists()
    config = json.loads((Path(env["JUPYTER_CONFIG_DIR"]) / "labconfig" / "page_config.json").read_text())
    assert set(config["disabledExtensions"]) == set(lab.TEACHER_PLUGINS)


@venv
@pytest.mark.parametrize("args, says", [
    (["--everyone"], "takes no argument but --user"),
    (["--user"], "cannot write JupyterLab's page config"),  # JUPYTER_CONFIG_DIR is a file: nothing can be written
])
def test_a_mistake_is_one_error_line_and_exit_2(student_env, args, says):
    python, env = student_env
    Path(env["JUPYTER_CONFIG_DIR"]).write_text("not a folder")
    result = run(python, env, RUN_COMMAND, "student-lab", *args)
    assert result.returncode == ExitCode.USAGE_ERROR and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and says in line, line


@venv
def test_without_jupyterlab_it_says_what_to_install(student_env):
    python, env = student_env
    blocker = "import sys; sys.modules['jupyterlab'] = None\n"  # as if the lab extra were not installed
    site = next((python.parent.parent / "lib").glob("python*/site-packages"))
    (site / "no-jupyterlab.pth").write_text(blocker)
    result = run(python, env, RUN_COMMAND, "student-lab")
    assert result.returncode == ExitCode.USAGE_ERROR
    assert result.stderr.strip() == f"error: JupyterLab is not installed here; install it with: {LAB}"


def test_every_plugin_named_is_in_nbgraders_installed_lab_extension_and_a_wrong_name_is_not():
    """The ids come from nbgrader's extension: a rename in a new nbgrader fails here instead of showing the tool."""
    import nbgrader
    bundle = "".join(p.read_text() for p in (Path(nbgrader.__file__).parent / "labextension" / "static").glob("*.js"))
    for plugin in (*lab.TEACHER_PLUGINS, *lab.STUDENT_PLUGINS):
        assert f'"{plugin}"' in bundle or f"id:\"{plugin}\"" in bundle, plugin
    assert '"@jupyter/nbgrader:gradebook"' not in bundle  # the search finds only what is there
