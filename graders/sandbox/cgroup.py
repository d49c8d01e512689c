"""A control group per jail: its memory and its number of tasks bounded for the jail as a whole.

rlimits bound each process alone: four processes of one jail could each take the address space
allowed to one. So the jail's first process makes a group of its own, with a memory limit and a
task limit (processes and threads), and moves itself into it before the jail's namespaces exist
and before any student code runs: every process of the jail is forked inside it and counted there.

The groups live in ``<hierarchy>/vecgrade/<owner>``: with cgroup v1 in the memory and in the pids
hierarchy, with cgroup v2 in the unified one (the memory and pids controllers enabled for
``vecgrade/``). ``owner`` is the tag (``graders.sandbox.owner``) of the jail's first process. That
process lives exactly as long as the jail (everything inside dies with it), so a group whose owner
has ended is stale: any process still in it is killed and the group removed. The grader does that
when it reaps a jail (``release``), the jail's own first process when the jail ends by itself
(``JailGroup.remove``), and every new group first removes the stale ones a killed grader left
(``sweep``).

Everything here needs root; ``problem()`` says why a machine has no usable groups (the jail then
falls back to rlimits only, see ``graders.sandbox.policy``).
"""
from __future__ import annotations

import errno
import functools
import os
import signal
import time
from dataclasses import dataclass

from graders.sandbox import owner

PARENT = "vecgrade"  # the folder of every jail's group, at the top of each hierarchy
CONTROLLERS = ("memory", "pids")
SWAP_LIMITS = ("memory.memsw.limit_in_bytes", "memory.swap.max")  # absent without swap accounting


@dataclass(frozen=True)
class Hierarchy:
    """Where the memory and pids controllers are mounted: v1, one mount each (or one shared); v2, one."""

    version: int
    roots: tuple[str, ...]
    holds: tuple[str, ...] = ()  # v1: a controller each root holds (how /proc/self/cgroup names that hierarchy)

    def parents(self) -> list[str]:
        return [os.path.join(root, PARENT) for root in self.roots]


def find_hierarchy(mounts: str) -> Hierarchy | None:
    """The hierarchy that holds both controllers, from the text of /proc/self/mounts (v1 preferred: on a
    hybrid host the controllers mounted as v1 are missing from the unified hierarchy)."""
    v1: dict[str, str] = {}
    unified = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        point, kind, options = fields[1], fields[2], fields[3].split(",")
        if kind == "cgroup":
            for name in CONTROLLERS:
                if name in options:
                    v1.setdefault(name, point)
        elif kind == "cgroup2" and unified is None:
            unified = point
    if all(name in v1 for name in CONTROLLERS):
        roots = {v1[name]: name for name in CONTROLLERS}  # one entry per mount, even a shared one
        return Hierarchy(1, tuple(roots), tuple(roots.values()))
    if unified is not None:
        try:
            with open(os.path.join(unified, "cgroup.controllers")) as f:
                if set(CONTROLLERS) <= set(f.read().split()):
                    return Hierarchy(2, (unified,))
        except OSError:
            pass
    return None


@functools.lru_cache(maxsize=None)
def hierarchy() -> Hierarchy | None:
    try:
        with open("/proc/self/mounts") as f:
            return find_hierarchy(f.read())
    except OSError:
        return None


def _enable_controllers(folder: str) -> None:
    """cgroup v2: let the groups below ``folder`` use the memory and pids controllers."""
    with open(os.path.join(folder, "cgroup.subtree_control")) as f:
        missing = [name for name in CONTROLLERS if name not in f.read().split()]
    if missing:
        with open(os.path.join(folder, "cgroup.subtree_control"), "w") as f:
            f.write(" ".join("+" + name for name in missing))


def prepare(h: Hierarchy) -> None:
    """Make ``vecgrade/`` in each hierarchy (OSError when this process may not)."""
    for root, parent in zip(h.roots, h.parents(), strict=True):
        if h.version == 2:
            _enable_controllers(root)
        os.makedirs(parent, exist_ok=True)
        if h.version == 2:
            _enable_controllers(parent)


@functools.lru_cache(maxsize=None)
def problem() -> str | None:
    """None when jails can have groups of their own here, else why not (one line)."""
    if os.geteuid() != 0:
        return "not root"
    h = hierarchy()
    if h is None:
        return "no cgroup hierarchy with the memory and pids controllers is mounted"
    try:
        prepare(h)
    except OSError as exc:
        return f"cannot make {os.path.join(h.roots[0], PARENT)}: {exc.strerror or exc}"
    return None


def _home(h: Hierarchy) -> list[str]:
    """The groups this process is in now, one per hierarchy root (from /proc/self/cgroup)."""
    where = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, names, path = line.rstrip("\n").split(":", 2)
            for name in names.split(","):
                where[name] = path
    keys = h.holds if h.version == 1 else ("",) * len(h.roots)
    return [os.path.join(root, where.get(key, "/").lstrip("/")) for root, key in zip(h.roots, keys, strict=True)]


def _open_dir(path: str) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _write(dir_fd: int, name: str, value: str) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


class JailGroup:
    """One jail's group. It works through folder descriptors opened when it was made, so the jail's
    first process can still remove it after the jail's mount namespace has hidden /sys."""

    def __init__(self, name: str, parents: list[int], homes: list[int] | None = None):
        self.name, self.parents, self.homes = name, parents, homes or []

    @classmethod
    def create(cls, memory_bytes: int, tasks: int) -> "JailGroup":
        """A group owned by this process, limited to ``memory_bytes`` and ``tasks``, with this process in it."""
        h = hierarchy()
        if h is None:
            raise OSError("no cgroup hierarchy with the memory and pids controllers is mounted")
        prepare(h)
        parents = [_open_dir(p) for p in h.parents()]
        homes = [_open_dir(p) for p in _home(h)]
        sweep(parents)
        group = cls(owner.tag(), parents, homes)
        try:
            for fd in parents:
                try:
                    os.mkdir(group.name, dir_fd=fd)
                except FileExistsError:  # made by this process before (the name is its tag): reused
                    pass
            group._limit(memory_bytes, tasks)
            for fd in parents:
                _write(fd, os.path.join(group.name, "cgroup.procs"), str(os.getpid()))
        except OSError:
            try:
                group.remove(wait=0)
            except OSError:
                pass  # what made it fail is the error to report
            group.close_fds()
            raise
        return group

    def _limit(self, memory_bytes: int, tasks: int) -> None:
        wanted = {"memory.limit_in_bytes": memory_bytes, "memory.max": memory_bytes, "pids.max": tasks,
                  "memory.memsw.limit_in_bytes": memory_bytes, "memory.swap.max": 0}
        done = set()
        for fd in self.parents:
            for name, value in wanted.items():  # in this order: v1's memsw limit may not be below the limit
                path = os.path.join(self.name, name)
                if not os.access(path, os.F_OK, dir_fd=fd):
                    continue
                try:
                    _write(fd, path, str(value))
                    done.add(name)
                except OSError:
                    if name not in SWAP_LIMITS:
                        raise
        if not done & {"memory.limit_in_bytes", "memory.max"} or "pids.max" not in done:
            raise OSError(f"the group {self.name} has no memory or no pids limit")

    def close_fds(self) -> None:
        """Drop the descriptors (in a process that must not hold them: the jail's own processes)."""
        for fd in self.parents + self.homes:
            os.close(fd)
        self.parents, self.homes = [], []

    def leave(self) -> None:
        """Move this process back where it was (the jail's processes stay)."""
        for fd in self.homes:
            _write(fd, "cgroup.procs", str(os.getpid()))

    def remove(self, wait: float = 2.0) -> bool:
        """Kill what is left in the group and remove it; False when it is still busy after ``wait`` seconds
        (the next ``sweep`` tries again)."""
        deadline = time.monotonic() + wait
        for fd in self.parents:
            while True:
                try:
                    os.rmdir(self.name, dir_fd=fd)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        raise
                    _kill_members(fd, self.name)
                    if time.monotonic() >= deadline:
                        return False
                    time.sleep(0.02)
        return True


def _kill_members(parent: int, name: str) -> None:
    try:
        fd = os.open(os.path.join(name, "cgroup.procs"), os.O_RDONLY | os.O_CLOEXEC, dir_fd=parent)
    except FileNotFoundError:
        return
    with os.fdopen(fd) as f:
        pids = [int(line) for line in f if line.strip()]
    for pid in pids:
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def sweep(parents: list[int], prefix: str = "", wait: float = 0.5) -> None:
    """Remove the groups (named ``prefix``...) whose owner has ended, killing anything still in them."""
    names = {entry for fd in parents for entry in os.listdir(fd) if entry.startswith(prefix) and owner.is_tag(entry)}
    for name in sorted(names):
        if not owner.alive(name):
            try:
                JailGroup(name, parents).remove(wait)
            except OSError:
                pass  # another grader removed it meanwhile, or it is not a group: left alone


def release(pid: int) -> None:
    """The grader has reaped the jail whose first process was ``pid``: remove that jail's group, if any."""
    if problem() is not None:
        return
    h = hierarchy()
    assert h is not None, "problem() is None only with a hierarchy"
    parents = [_open_dir(p) for p in h.parents()]
    try:
        sweep(parents, prefix=f"{pid}.", wait=2.0)
    finally:
        for fd in parents:
            os.close(fd)
