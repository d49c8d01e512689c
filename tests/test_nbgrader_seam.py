"""The nbgrader seam: every patch of nbgrader is in one table, applied only on a tested nbgrader, and the code it
relies on is the code it was written against."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import nbgrader.apps.api
import pytest
from packaging.requirements import Requirement

from graders import KIT_ROOT
from graders.course import formgrader
from graders.pipeline import intake, nbgrader_seam
from graders.pipeline.nbgrader_seam import PATCHES, TESTED, TESTED_ON, NbgraderUntestedError, fingerprint


@pytest.mark.parametrize("target", sorted(PATCHES))
def test_the_nbgrader_code_each_patch_relies_on_is_the_code_it_was_written_against(target):
    entry = PATCHES[target]
    assert fingerprint(entry.relies_on) == entry.fingerprint, (
        f"nbgrader's code under {target} changed: check {entry.by} against it (docs/development.md, "
        "\"The nbgrader seam\"), then record the new fingerprint")


def test_a_changed_function_changes_the_fingerprint():
    relied = PATCHES["nbgrader.apps.api.NbGraderAPI.get_submissions"]
    assert fingerprint(relied.relies_on) == relied.fingerprint  # control
    assert fingerprint(("nbgrader.apps.api.NbGraderAPI.get_submission",)) != relied.fingerprint


def test_every_patch_of_nbgrader_goes_through_the_table():
    called, assigned = set(), []
    for path in sorted((KIT_ROOT / "graders").rglob("*.py")):
        text = path.read_text()
        called |= set(re.findall(r"""\bpatch\(["'](nbgrader[\w.]*)""", text))
        assigned += [f"{path.name}: {line.strip()}" for line in text.splitlines()
                     if re.match(r"\s*(nbgrader\.[\w.]+|NbGraderAPI\.\w+|CourseDirectory\.\w+)\s*=[^=]", line)]
    assert called == set(PATCHES)
    assert len(PATCHES) == 9 and {p.by for p in PATCHES.values()} >= {"graders.engine.gradebooks.share"}
    assert assigned == ["gradebooks.py: nbgrader.api.create_engine = create_engine  # type: ignore[attr-defined]"]


def test_pyproject_allows_the_tested_range_and_nothing_else():
    project = tomllib.loads((KIT_ROOT / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    ranges = {str(r.specifier) for r in wanted if r.name == "nbgrader"}
    assert ranges == {str(TESTED)}
    assert all(v in TESTED for v in TESTED_ON) and nbgrader_seam.installed_version() in TESTED_ON


def test_an_untested_nbgrader_is_refused_and_nothing_is_patched(monkeypatch):
    before = nbgrader.apps.api.Autograde, nbgrader.apps.api.NbGraderAPI.get_submissions
    monkeypatch.setattr(nbgrader_seam, "installed_version", lambda: "0.10.0")
    with pytest.raises(NbgraderUntestedError) as refused:
        intake.install()
    with pytest.raises(NbgraderUntestedError):
        formgrader.install()
    assert str(refused.value).startswith("error: nbgrader 0.10.0 is installed")
    assert (nbgrader.apps.api.Autograde, nbgrader.apps.api.NbGraderAPI.get_submissions) == before
    monkeypatch.setattr(nbgrader_seam, "installed_version", lambda: "0.9.6")
    intake.install()  # control: the tested one is patched
    assert nbgrader.apps.api.Autograde is intake.SafeAutograde


def test_an_untested_nbgrader_stops_the_process_with_one_error_line():
    code = ("import graders.pipeline.nbgrader_seam as s; s.installed_version = lambda: '0.8.5'; "
            "s.patch('nbgrader.api.create_engine', None)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=KIT_ROOT, timeout=60)
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: nbgrader 0.8.5 is installed") and "nbgrader<0.10,>=0.9.6" in line
    fine = subprocess.run([sys.executable, "-c", "import graders.pipeline.nbgrader_seam as s; s.check_version()"],
                          capture_output=True, text=True, cwd=KIT_ROOT, timeout=60)
    assert fine.returncode == 0 and fine.stderr == ""  # control: the installed nbgrader is tested


def test_a_patch_not_in_the_table_is_refused():
    with pytest.raises(KeyError, match="not in graders.pipeline.nbgrader_seam.PATCHES"):
        nbgrader_seam.patch("nbgrader.api.Gradebook.close", None)
