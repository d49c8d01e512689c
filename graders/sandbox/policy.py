"""Where student code runs during grading, and how it is confined.

Both places that run a student's code -- nbgrader's kernel and vecgrade's
worker -- start their process through ``Sandbox.wrap``, which puts it in
``graders.sandbox.jail``: no network, its own PIDs, an unprivileged user, resource
limits, and a file system where the course, the kit, /tmp and home folders
are empty except for the process's own scratch folder and the read-only
Python install. ``status()`` says what is on, and why something is off.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from traitlets import Bool, Integer, List, Unicode
from traitlets.config import Configurable

import graders
from graders import KIT_ROOT
from graders.sandbox.session import Limits



@functools.lru_cache(maxsize=None)
def _namespaces_work(userns: bool) -> str | None:
    """None when unshare can make the namespaces the jail needs, else the reason it cannot."""
    if not shutil.which("unshare"):
        return "the `unshare` command is missing (util-linux)"
    cmd = ["unshare", "--mount", "--net", "--pid", "--fork", "true"]
    if userns:
        cmd[1:1] = ["--user", "--map-root-user"]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    return None if result.returncode == 0 else f"unshare failed: {result.stderr.strip()[:200]}"


class Sandbox(Configurable):
    """Confinement of student code (set ``Sandbox.enabled = False`` to grade unconfined)."""

    enabled = Bool(True, help="Confine student code when the machine allows it").tag(config=True)
    # the limits apply to every process running student code, confined or not
    memory_mb = Integer(6144, help="Address-space limit of a student process").tag(config=True)
    cpu_s = Integer(300, help="CPU-time limit of a student process, in seconds").tag(config=True)
    file_mb = Integer(16, help="Largest file a student process may write").tag(config=True)
    nproc = Integer(256, help="Process limit of the unprivileged user (root only)").tag(config=True)
    hide = List(Unicode(), help="Extra folders to hide from student code").tag(config=True)
    course_root = Unicode("", help="The course directory (hidden from student code)").tag(config=True)

    def status(self) -> tuple[bool, str]:
        """(confined?, one line for the log)."""
        if not self.enabled:
            return False, "sandbox off: Sandbox.enabled is False; student code runs as the grader's user"
        root = os.geteuid() == 0
        problem = _namespaces_work(userns=not root)
        if problem:
            return False, f"sandbox off: {problem}; only resource limits apply"
        who = "as nobody" if root else "in a user namespace, as the grader's user"
        return True, f"sandbox on: {who}, no network, own PIDs, course and kit hidden, rlimits"

    def limits(self, start_timeout: float) -> Limits:
        """The same limits as rlimits set at spawn, for when the jail is off."""
        return Limits(memory_bytes=self.memory_mb * 1024 ** 2, cpu_seconds=self.cpu_s,
                      file_bytes=self.file_mb * 1024 ** 2, start_timeout=start_timeout)

    def hidden_paths(self) -> list[str]:
        paths = [self.course_root, str(KIT_ROOT), tempfile.gettempdir(), "/tmp", "/root", "/home",
                 "/var/tmp", "/dev/shm", "/srv", *self.hide]
        return sorted({os.path.realpath(p) for p in paths if p})

    def exposed_paths(self) -> list[str]:
        return sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, os.path.dirname(graders.__file__))})

    def wrap(self, command: list[str], scratch: str, cwd: str | None = None,
             expose: list[str] = (), expose_rw: list[str] = ()) -> list[str]:
        """``command`` confined, or unchanged when the sandbox is off."""
        confined, _ = self.status()
        if not confined:
            return list(command)
        argv = [sys.executable, "-m", "graders.sandbox.jail", "--cwd", cwd or scratch, "--home", scratch,
                "--memory-mb", str(self.memory_mb), "--cpu-s", str(self.cpu_s),
                "--file-mb", str(self.file_mb), "--nproc", str(self.nproc)]
        if os.geteuid() != 0:
            argv.append("--userns")
        for path in self.hidden_paths():
            argv += ["--hide", path]
        for path in [*self.exposed_paths(), *expose]:
            argv += ["--expose", path]
        for path in [scratch, *expose_rw]:
            argv += ["--expose-rw", path]
        return argv + ["--", *command]
