"""One jail's settings as data, and the two things every process that runs student code gets from them.

``JailSpec`` is the one source of the resource limits' defaults: ``Sandbox``'s traits, the jail's command
line (``graders.sandbox.jail``) and ``Limits`` (the rlimits of a process started without a jail) all take
theirs from it. It travels to the fork server as plain data (``to_wire``/``from_wire``) and to a jail
started as a program as its command line (``to_argv``, parsed back by ``jail.parser``).

``set_rlimits`` is the one place rlimits are set, and ``environment`` the one builder of a student
process's environment: outside a jail (a program the grader starts) or inside one.
"""
from __future__ import annotations

import dataclasses
import enum
import os
import resource
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NOBODY = 65534
MB = 1024 ** 2


@dataclass(frozen=True)
class JailSpec:
    """What one jail is: its limits, its user, and the paths it sees.

    ``memory_mb``: memory of the jail as a whole (``cgroup``), and the address space of each process unless
    ``address_mb`` is set (not 0);
    ``cpu_s``: CPU seconds of each process; ``file_mb``: largest file written; ``nproc``: processes of
    the jail's own user (root only); ``pids``: tasks of the whole jail (``cgroup``); ``uid``: the user
    it runs as (root only); ``userns``: not root, a user namespace instead; ``cwd``/``home``: its
    working folder and HOME/TMPDIR; ``expose``/``expose_rw``: paths it sees read-only/writable;
    ``hide``: folders emptied inside those; ``env``: ``NAME=VALUE`` items added to its environment.
    """

    memory_mb: int = 6144
    address_mb: int = 0
    cpu_s: int = 300
    file_mb: int = 16
    nproc: int = 256
    pids: int = 256
    uid: int = NOBODY
    cgroup: bool = False
    userns: bool = False
    cwd: str | None = None
    home: str | None = None
    expose: tuple[str, ...] = ()
    expose_rw: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    env: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in _PATHS:
                if not isinstance(value, tuple) or not all(isinstance(p, str) for p in value):
                    raise ValueError(f"JailSpec.{field.name}: a tuple of strings, not {value!r}")
            elif field.name in ("cwd", "home"):
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"JailSpec.{field.name}: a string or None, not {value!r}")
            elif field.name in ("cgroup", "userns"):
                if type(value) is not bool:
                    raise ValueError(f"JailSpec.{field.name}: a bool, not {value!r}")
            elif type(value) is not int or value < 0:
                raise ValueError(f"JailSpec.{field.name}: a whole number of at least 0, not {value!r}")

    def to_wire(self) -> dict:
        """Plain data for ``wire.encode`` (the fork server's request)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_wire(cls, data) -> JailSpec:
        """The spec ``to_wire`` made; raises ValueError on anything else (unknown or missing fields, wrong types)."""
        if not isinstance(data, dict) or set(data) != {f.name for f in dataclasses.fields(cls)}:
            raise ValueError("not a jail spec")
        fields: dict[str, Any] = {k: tuple(v) if k in _PATHS and isinstance(v, list) else v for k, v in data.items()}
        return cls(**fields)

    def to_argv(self) -> list[str]:
        """The same spec as ``graders.sandbox.jail``'s options (a jail started as a program)."""
        argv = ["--memory-mb", str(self.memory_mb), "--address-mb", str(self.address_mb), "--cpu-s", str(self.cpu_s),
                "--file-mb", str(self.file_mb),
                "--nproc", str(self.nproc), "--pids", str(self.pids), "--uid", str(self.uid)]
        argv += [flag for flag, on in (("--cgroup", self.cgroup), ("--userns", self.userns)) if on]
        argv += [item for flag, value in (("--cwd", self.cwd), ("--home", self.home)) if value is not None
                 for item in (flag, value)]
        for name in _PATHS:
            argv += [item for path in getattr(self, name) for item in ("--" + name.replace("_", "-"), path)]
        return argv

    def rlimits(self) -> None:
        """This spec's rlimits on the calling process (``nproc`` only as root outside a user namespace)."""
        nproc = self.nproc if os.geteuid() == 0 and not self.userns else None
        set_rlimits((self.address_mb or self.memory_mb) * MB, self.cpu_s, self.file_mb * MB, nproc)


_PATHS = ("expose", "expose_rw", "hide", "env")


def set_rlimits(memory_bytes: int, cpu_seconds: int, file_bytes: int, nproc: int | None = None) -> None:
    """Address space, CPU time and file size limits, no core files, and (``nproc``) processes of this user; a limit
    is never raised above the hard limit this process was started with (which an unprivileged process cannot
    raise)."""
    limits = [(resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_CPU, cpu_seconds),
              (resource.RLIMIT_FSIZE, file_bytes), (resource.RLIMIT_CORE, 0)]
    if nproc is not None:
        limits.append((resource.RLIMIT_NPROC, nproc))
    for what, value in limits:
        held = resource.getrlimit(what)[1]
        value = value if held == resource.RLIM_INFINITY else min(value, held)
        resource.setrlimit(what, (value, value))


@dataclass(frozen=True)
class Limits:
    """The rlimits of a process that runs without a jail (the jail's own come from its ``JailSpec``), and
    the seconds a worker may take to start."""

    memory_bytes: int = JailSpec.memory_mb * MB
    cpu_seconds: int = JailSpec.cpu_s
    file_bytes: int = JailSpec.file_mb * MB
    start_timeout: float = 60.0

    def apply(self) -> None:
        """Set them on the calling process (a child between fork and exec, or a trusted fork)."""
        set_rlimits(self.memory_bytes, self.cpu_seconds, self.file_bytes)


class Where(enum.Enum):
    """Which environment ``environment`` builds."""

    OUTSIDE = "a program the grader starts (a worker without a jail, the jail's launcher, the fork server)"
    INSIDE = "the confined process itself"


# what the grader sets on purpose for a process running student code; inside a jail, PASSED_ENV of the
# launcher's environment come along, and nothing else of it
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONWARNINGS": "ignore"}
KEPT_OUTSIDE = ("PATH", "LANG", "LC_ALL", "PYTHONPATH")
PASSED_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE", "PYTHONWARNINGS",
              "PYTHONHASHSEED", "MPLBACKEND", "NBGRADER_EXECUTION")


def environment(where: Where, home: str, extra: Sequence[str] = (),
                source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a process running student code, with ``home`` as HOME and TMPDIR: never the
    grader's other variables (which may hold secrets). ``source``: the environment it is made from
    (``os.environ``); ``extra``: ``NAME=VALUE`` items set last."""
    source = os.environ if source is None else source
    if where is Where.OUTSIDE:
        env = {k: v for k, v in source.items() if k in KEPT_OUTSIDE}
        env.update(THREADS, TMPDIR=home, HOME=home)
    else:
        env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]),
               "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": home, "TMPDIR": home,
               "IPYTHONDIR": os.path.join(home, ".ipython"), "MPLCONFIGDIR": os.path.join(home, ".matplotlib"),
               "JUPYTER_PLATFORM_DIRS": "1", "PYTHONNOUSERSITE": "1"}
        env.update({name: source[name] for name in PASSED_ENV if name in source})
    for item in extra:
        name, _, value = item.partition("=")
        env[name] = value
    return env
