"""The Makefile's install step, as `make -n` prints it (nothing is installed): torch from the public index by default,
from the index in ``TORCH_INDEX`` first when one is given (the CPU-only build instead of the 5 GB CUDA one)."""
import re
import shutil
import subprocess

import pytest

from tests.testkit import ROOT

CPU = "https://download.pytorch.org/whl/cpu"
PINNED = re.search(r'"(torch==[^"]+)"', (ROOT / "pyproject.toml").read_text())
assert PINNED is not None, "pyproject.toml pins no torch"
PIN = PINNED[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


# the project itself, setuptools' notice about folders named like the package filtered out (Makefile)
EDITABLE = ("PYTHONWARNINGS='ignore:Editable installation' "
            "VENV/bin/python -m pip install --quiet -e '.[instructor,test,dev]'")


def install_commands(tmp_path, *variables: str) -> list[str]:
    """What `make install` would run for a venv that does not exist yet."""
    venv = tmp_path / "venv"
    result = subprocess.run(["make", "-n", "-C", str(ROOT), "install", f"VENV={venv}", *variables],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [line.replace(str(venv), "VENV") for line in result.stdout.splitlines() if "pip install" in line]


def test_torch_comes_first_from_the_index_named_by_torch_index(tmp_path):
    commands = install_commands(tmp_path, f"TORCH_INDEX={CPU}")
    assert PIN == "torch==2.13.0"  # the pin the README and the student guide name
    assert commands == ["VENV/bin/python -m pip install --quiet --upgrade pip",
                        f"VENV/bin/python -m pip install --quiet --index-url {CPU} {PIN}",
                        EDITABLE]


def test_without_torch_index_torch_comes_with_the_project_from_the_public_index(tmp_path):
    commands = install_commands(tmp_path)
    assert not [c for c in commands if "--index-url" in c or "torch" in c], commands
    assert commands[-1] == EDITABLE
