"""What the installed torch costs every jailed process, measured once per machine and torch build.

Every student process starts with torch loaded (forked from a server that imported it, or a kernel that imports
it), so a jail's limits hold torch as well as the student's work, and torch's size depends on the build pip
installed: the CPU build maps about 0.6 GB of address space, PyPI's default CUDA build about 3 GB more. A fixed
limit that suits one build stops the other from starting at all. So ``Sandbox.memory_mb`` is the memory for
the student's work, and the limits add torch's footprint, measured here (``graders.sandbox.policy``):

- the address-space rlimit of each process: ``memory_mb`` + ``Footprint.address_mb``;
- the jail's cgroup (real memory, all its processes): ``memory_mb`` + ``Footprint.resident_mb``.

``torch_footprint`` starts a fresh Python with the jail's environment (no variable of the grader's but the thread
counts the jail sets; the jail's root holds the same Python and libraries), imports torch there and makes one
tensor, and reads ``VmSize`` and ``VmRSS`` from its ``/proc/self/status``. The figures are kept in the user's
cache folder under a key of the Python, torch's folder, version and file time, so a machine measures each build
once (a few seconds), and a new torch is measured again. When it cannot be measured (no torch) the footprint is
``UNKNOWN`` (zero) and the preflight (``graders.sandbox.preflight``) says what is wrong.
"""
from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import platformdirs

from graders.model.atomic import write_atomically

CACHE = Path(platformdirs.user_cache_dir("vecgrade")) / "torch-footprint.json"
# what a jailed process does first: torch imported, one tensor made (the lazy parts of the import done)
PROBE = ("import json, torch\n(torch.ones(3) * 2).sum()\n"
         "print(json.dumps({l.split(':')[0]: int(l.split()[1]) // 1024 for l in open('/proc/self/status') "
         "if l.startswith(('VmSize:', 'VmRSS:'))}))\n")
# the variables a jail's process has that change what torch maps (graders.sandbox.spec.environment)
ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Footprint:
    """MB that a process holds once it has imported torch: its address space and its resident memory."""

    address_mb: int
    resident_mb: int


UNKNOWN = Footprint(0, 0)


def torch_key() -> str | None:
    """Names the torch build this process imports (found without importing it); None without torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return None
    try:
        version = importlib.metadata.version("torch")
        stamp = os.stat(spec.origin).st_mtime_ns
    except (importlib.metadata.PackageNotFoundError, OSError):
        return None
    return f"{os.path.abspath(sys.executable)} {os.path.dirname(spec.origin)} {version} {stamp}"


def measure(python: str = sys.executable, timeout: float = 300) -> Footprint | None:
    """Torch's footprint in a fresh ``python`` with the jail's environment; None when torch does not import."""
    env = dict(ENV, **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ})
    try:
        run = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=timeout, env=env,
                             cwd=tempfile.gettempdir())
        figures = json.loads(run.stdout.strip().splitlines()[-1])
        return Footprint(int(figures["VmSize"]), int(figures["VmRSS"]))
    except (OSError, subprocess.TimeoutExpired, IndexError, ValueError, KeyError, TypeError):
        return None


def _read(cache: Path) -> dict:
    try:
        kept = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def _keep(cache: Path, key: str, found: Footprint) -> None:
    """Adds ``found`` to the cache file, replaced whole (``write_atomically``, mode 0o600: the user's own cache); a
    cache that cannot be written costs a measurement per process, nothing else: that failure is ignored here."""
    kept = {**_read(cache), key: asdict(found)}
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(cache, json.dumps(kept, indent=1), mode=0o600)
    except OSError:
        pass


def footprint(cache: Path = CACHE) -> Footprint:
    """The footprint of this process's torch: from ``cache`` when this build was measured before, else
    measured now and kept there; ``UNKNOWN`` when torch cannot be imported."""
    key = torch_key()
    if key is None:
        return UNKNOWN
    kept = _read(cache).get(key)
    try:
        return Footprint(int(kept["address_mb"]), int(kept["resident_mb"]))  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        pass
    found = measure()
    if found is None:
        return UNKNOWN
    _keep(cache, key, found)
    return found


@functools.lru_cache(maxsize=1)
def torch_footprint() -> Footprint:
    """This process's torch footprint, read or measured once per process (``footprint``)."""
    return footprint()
