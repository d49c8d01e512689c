"""Where student code runs during grading, and how it is confined.

Both places that run a student's code -- the notebook's kernel (the feedback
shell) and vecgrade's workers -- are forked warm into ``graders.sandbox.jail``
(as root) or started through ``Sandbox.wrap``, which puts them there: no network, its own PIDs, IPC and host name, an
unprivileged user, resource limits, a minimal environment, and a fresh root
that holds only the system's libraries, the read-only Python install and
``graders`` package (without ``graders/course``, which holds the demo's
answers), and the process's own scratch folder.

It fails closed: when the machine cannot make the namespaces, ``wrap`` raises
``SandboxUnavailableError`` and grading refuses to run, unless
``Sandbox.enabled = False`` was set on purpose. ``status()`` says which.

Each jail is also bounded as a whole, as root: a control group of its own (``memory_mb``,
``pids``; ``graders.sandbox.cgroup``) and a scratch folder that is a tmpfs of ``scratch_mb``
(``graders.sandbox.scratch``). Where the machine has no usable cgroups (not root, no memory and
pids controllers), jails still run, with rlimits only, and ``status()`` says so: without a group a
student can slow the machine down, but still reads nothing and changes no grade; a course that
would rather refuse sets ``Sandbox.require_cgroup = True``.
"""
from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

from traitlets import Bool, Integer, List, Unicode
from traitlets.config import Configurable

import graders
from graders.model.errors import VecgradeError
from graders.sandbox import cgroup
from graders.sandbox.footprint import torch_footprint
from graders.sandbox.jail import FIRST_UID, unshare_command
from graders.sandbox.scratch import Scratch, tmpfs_available
from graders.sandbox.spec import MB, JailSpec, Limits


class SandboxUnavailableError(VecgradeError):
    """Confinement was asked for (the default) and this machine cannot provide it: grade nothing."""


@functools.lru_cache(maxsize=None)
def _namespaces_work(userns: bool) -> str | None:
    """None when unshare can make the namespaces the jail needs, else the reason it cannot."""
    if not shutil.which("unshare"):
        return "the `unshare` command is missing (util-linux)"
    cmd = unshare_command(userns) + ["true"]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    return None if result.returncode == 0 else f"unshare failed: {result.stderr.strip()[:200]}"


_jails = itertools.count()  # numbers this process's jails, for their user ids

class Sandbox(Configurable):
    """Confinement of student code (set ``Sandbox.enabled = False`` to grade unconfined, on purpose)."""

    enabled = Bool(True, help="Confine student code; when the machine cannot, refuse to grade "
                              "(False: run student code unconfined, with rlimits only)").tag(config=True)
    # the limits apply to every process running student code, confined or not
    memory_mb = Integer(JailSpec.memory_mb,
                        help="Memory for the student's work in one jail, in MB, on top of what the installed torch "
                             "needs (measured once per machine and torch build): each process's address-space "
                             "limit is this plus torch's address space, the jail's cgroup (all its processes and "
                             "what they write in its tmpfs folders; root only) this plus torch's resident "
                             "memory").tag(config=True)
    cpu_s = Integer(JailSpec.cpu_s, help="CPU-time limit of a student process, in seconds").tag(config=True)
    file_mb = Integer(JailSpec.file_mb, help="Largest file a student process may write").tag(config=True)
    nproc = Integer(JailSpec.nproc,
                    help="Process limit of each jail's own unprivileged user (root only)").tag(config=True)
    pids = Integer(JailSpec.pids, help="Tasks (processes and threads) of one jail as a whole, at once "
                                       "(a cgroup, root only)").tag(config=True)
    scratch_mb = Integer(256, help="Size of each jail's writable scratch folder (its HOME and TMPDIR, the kernel's "
                                   "working copy), a tmpfs: writing past it fails with ENOSPC (root only; "
                                   "keep it above Intake.max_bytes)").tag(config=True)
    require_cgroup = Bool(False, help="Refuse to grade, as without namespaces, when jails cannot have a cgroup "
                                      "(False: run them with rlimits only, and say so in the log)").tag(config=True)
    hide = List(Unicode(), help="Folders emptied even inside an exposed one").tag(config=True)
    course_root = Unicode("", help="The course directory (never exposed to student code)").tag(config=True)

    def status(self) -> tuple[bool, str]:
        """(confined?, one line for the log)."""
        if not self.enabled:
            return False, "sandbox off: Sandbox.enabled is False; student code runs as the grader's user"
        root = os.geteuid() == 0
        problem = _namespaces_work(userns=not root)
        if problem:
            return False, (f"sandbox unavailable: {problem}; refusing to run student code "
                           "(set Sandbox.enabled = False to grade unconfined)")
        who = "as a user of its own" if root else "in a user namespace, as the grader's user"
        no_group = cgroup.problem()
        if no_group and self.require_cgroup:
            return False, (f"sandbox unavailable: no cgroup for the jails ({no_group}) and Sandbox.require_cgroup "
                           "is True; refusing to run student code")
        bounds = (f"rlimits only (no cgroup: {no_group}; memory and processes bounded per process, not per jail)"
                  if no_group else f"rlimits, a cgroup per jail ({self.memory_mb} MB, {self.pids} tasks)")
        no_tmpfs = tmpfs_available()
        scratch = (f"a scratch folder without a size limit ({no_tmpfs})" if no_tmpfs
                   else f"a {self.scratch_mb} MB tmpfs scratch")
        return True, (f"sandbox on: {who}, no network, own PIDs/IPC/UTS, allowlisted root, "
                      f"minimal environment, {bounds}, {scratch}")

    def check(self) -> bool:
        """True when student code will run confined, False when the sandbox was turned off on purpose;
        raises ``SandboxUnavailableError`` (one line) when confinement was asked for and cannot be had."""
        confined, status = self.status()
        if not confined and self.enabled:
            raise SandboxUnavailableError(status)
        return confined

    def scratch(self, kind: str) -> Scratch:
        """A jail's scratch folder: a tmpfs of ``scratch_mb`` when student code will run confined and this
        process may mount one (root); a plain folder otherwise (``status`` says so)."""
        sized = self.enabled and self.status()[0] and tmpfs_available() is None
        return Scratch(kind, self.scratch_mb if sized else None)

    def address_mb(self) -> int:
        """Each student process's address-space limit: ``memory_mb`` on top of torch's
        (``graders.sandbox.footprint``)."""
        return self.memory_mb + torch_footprint().address_mb

    def group_mb(self) -> int:
        """The memory of a jail's cgroup: ``memory_mb`` on top of torch's resident memory."""
        return self.memory_mb + torch_footprint().resident_mb

    def limits(self, start_timeout: float) -> Limits:
        """The same limits as rlimits set at spawn, for when the jail is off."""
        return Limits(memory_bytes=self.address_mb() * MB, cpu_seconds=self.cpu_s,
                      file_bytes=self.file_mb * MB, start_timeout=start_timeout)

    def hidden_paths(self) -> list[str]:
        """Folders emptied inside the exposed ones: the kit's instructor side (the demo's answers)."""
        paths = [os.path.join(os.path.dirname(graders.__file__), "course"), *self.hide]
        return sorted({os.path.realpath(p) for p in paths if p})

    def exposed_paths(self) -> list[str]:
        """The allowlist, read-only: the Python install (base and venv) and the ``graders`` package."""
        return sorted({os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, os.path.dirname(graders.__file__))})

    def _refuse_course_paths(self, paths) -> None:
        """Student code gets private copies, never a folder of the course (autograded/, the gradebook's)."""
        if not self.course_root:
            return
        course = os.path.realpath(self.course_root)
        for path in filter(None, paths):
            real = os.path.realpath(path)
            if real == course or real.startswith(course + os.sep):
                raise ValueError(f"{path} is inside the course folder {course}: student code gets a private copy")

    @staticmethod
    def fresh_uid() -> int:
        """A user id that no other live jail on this machine runs as: unique per grading process (its
        pid) and per jail within it (a counter), so each student's processes are counted apart."""
        return FIRST_UID + (os.getpid() % 4_000_000) * 1000 + next(_jails) % 1000

    def jail_spec(self, scratch: str, cwd: str | None = None, expose: Sequence[str] = (),
                  expose_rw: Sequence[str] = (), uid: int | None = None) -> JailSpec:
        """The jail of a process with its own ``scratch`` folder (its HOME, and its working folder unless
        ``cwd``). ``uid``: the jail's own user (default: a fresh one), owner of ``scratch``."""
        self._refuse_course_paths([scratch, cwd, *expose, *expose_rw])
        return JailSpec(memory_mb=self.group_mb(), address_mb=self.address_mb(), cpu_s=self.cpu_s,
                        file_mb=self.file_mb, nproc=self.nproc,
                        pids=self.pids, uid=self.fresh_uid() if uid is None else uid,
                        cgroup=cgroup.problem() is None, userns=os.geteuid() != 0, cwd=cwd or scratch, home=scratch,
                        hide=tuple(self.hidden_paths()), expose=(*self.exposed_paths(), *expose),
                        expose_rw=(scratch, *expose_rw))

    def jail_args(self, scratch: str, cwd: str | None = None, expose: Sequence[str] = (),
                  expose_rw: Sequence[str] = (), uid: int | None = None) -> list[str]:
        """``jail_spec`` as the jail's command line (``graders.sandbox.jail``), for a jail started as a program."""
        return self.jail_spec(scratch, cwd, expose, expose_rw, uid).to_argv()

    def wrap(self, command: list[str], scratch: str, cwd: str | None = None,
             expose: Sequence[str] = (), expose_rw: Sequence[str] = (), uid: int | None = None) -> list[str]:
        """``command`` confined; unchanged only when the sandbox is off on purpose (see ``check``)."""
        if not self.check():
            return list(command)
        return [sys.executable, "-m", "graders.sandbox.jail",
                *self.jail_args(scratch, cwd, expose, expose_rw, uid), "--", *command]
