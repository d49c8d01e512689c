"""``vecgrade build --wheel``: the file students install, since ``vecgrade`` is not on PyPI.

The wheel is the kit's own package (``graders``, no definitions, solutions or demo
answers: tests/test_wheel.py searches it), built by pip exactly as ``pip wheel
--no-deps .`` builds it in the kit's checkout, and written to ``dist/`` of the course
under the name the notebooks' first cell gives (``graders.student.install.WHEEL``).
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from graders import KIT_ROOT
from graders.student import install


class WheelError(Exception):
    """The wheel could not be built; the message says why in one line."""


def build_wheel(out_dir: Path, kit_root: Path = KIT_ROOT) -> Path:
    """Build the kit's wheel into ``out_dir`` (replacing an older one of the same name) and return its path."""
    if not (Path(kit_root) / "pyproject.toml").is_file():
        raise WheelError(f"{kit_root} has no pyproject.toml: build the wheel in the kit's checkout "
                         "(this vecgrade was installed from a wheel; hand out that wheel instead)")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet"]
    if importlib.util.find_spec("setuptools") is not None:
        command.append("--no-build-isolation")  # the build backend is here already: no download needed
    with tempfile.TemporaryDirectory(prefix="vecgrade-wheel-") as tmp:
        result = subprocess.run([*command, "--wheel-dir", tmp, str(kit_root)], capture_output=True, text=True)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise WheelError(f"pip wheel failed in {kit_root}: {last}")
        built = Path(tmp) / install.WHEEL
        if not built.exists():
            names = ", ".join(p.name for p in Path(tmp).iterdir()) or "nothing"
            raise WheelError(f"pip wheel wrote {names}, expected {install.WHEEL}")
        out_dir.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(built, out_dir / install.WHEEL))


def write_wheel(course_root: Path) -> str:
    """``vecgrade build --wheel``: the wheel in ``<course>/dist/``, and the line that says what to do with it."""
    path = build_wheel(Path(course_root) / "dist")
    return (f"wrote {path.relative_to(course_root)}: hand it out with the assignment; students run "
            f"`{install.FROM_WHEEL}` (then `{install.LAB}` for JupyterLab and Validate)")
