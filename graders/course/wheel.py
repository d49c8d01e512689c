"""``vecgrade build --wheel``: the file students install, since ``vecgrade`` is not on PyPI.

The wheel is the kit's own package (``graders``, no definitions, solutions or demo
answers: tests/test_wheel.py searches it), built by pip as ``pip wheel --no-deps .``
builds it in the kit's checkout, from a copy of the files it is made of, and written to
``dist/`` of the course under the name the notebooks' first cell gives
(``graders.student.install.WHEEL``).
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from graders import KIT_ROOT
from graders.model.errors import VecgradeError
from graders.student import install

PROJECT_FILES = ("pyproject.toml", "README.md")  # with graders/: all that pyproject.toml builds the wheel from


class WheelError(VecgradeError):
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
        # pip builds in the source tree (build/, *.egg-info): build in a copy of what the wheel is made of,
        # so two builds at once never share one build/ and the checkout is left as it was
        tree, wheels = Path(tmp) / "kit", Path(tmp) / "wheels"
        shutil.copytree(Path(kit_root) / "graders", tree / "graders", ignore=shutil.ignore_patterns("__pycache__"))
        for name in PROJECT_FILES:
            shutil.copy(Path(kit_root) / name, tree / name)
        result = subprocess.run([*command, "--wheel-dir", str(wheels), str(tree)], capture_output=True, text=True)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise WheelError(f"pip wheel failed on {kit_root}: {last}")
        built = wheels / install.WHEEL
        if not built.exists():
            names = ", ".join(p.name for p in wheels.iterdir()) or "nothing"
            raise WheelError(f"pip wheel wrote {names}, expected {install.WHEEL}")
        out_dir.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy(built, out_dir / install.WHEEL))


def write_wheel(course_root: Path) -> str:
    """``vecgrade build --wheel``: the wheel in ``<course>/dist/``, and the line that says what to do with it."""
    path = build_wheel(Path(course_root) / "dist")
    return (f"wrote {path.relative_to(course_root)}: hand it out with the assignment; students run "
            f"`{install.FROM_WHEEL}` (then `{install.LAB}` for JupyterLab and Validate)")
