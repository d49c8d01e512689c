"""The grader's temporary folders: named after the process that owns them, removed when it ends or by the next run.

Every temporary folder grading makes (a worker's or a kernel's scratch, the fork
server's, a job's, the coordinator's results) is a ``Scratch``:
``<tmp>/vecgrade-<kind>-<owner>-<random>``, where ``owner`` is the tag of the
process that made it (``graders.sandbox.owner``: pid and start time, so a reused
pid does not pass for the owner). Its owner removes it when done (``cleanup``,
or when the object goes, or when the process exits). A process that was
SIGKILLed cannot; so the first ``Scratch`` a process makes sweeps ``<tmp>`` for
folders whose owner is gone and removes them (``sweep``).

A jail's scratch (``size_mb``) is a tmpfs of that size mounted on the folder
(as root, on the host): one student cannot fill the host's disk, writing past
it fails with ENOSPC inside the jail, and the grader still sees what it puts
there (the kernel's working copy), since the mount is the host's. Removing a
folder unmounts it first and never deletes through a mount.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
import secrets
import shutil
import tempfile
import weakref

from graders.model.errors import VecgradeError
from graders.sandbox import owner

PREFIX = "vecgrade-"
NAME = re.compile(rf"{PREFIX}([a-z]+)-({owner.TAG.pattern})-[0-9a-f]+")  # vecgrade-<kind>-<owner>-<random>
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2
INODES = 20_000  # files a jail's scratch may hold (each costs kernel memory)

_libc = ctypes.CDLL(None, use_errno=True)


class ScratchError(VecgradeError, OSError):
    """A jail's size-limited scratch could not be mounted (one line)."""


def _mount_tmpfs(path: str, size_mb: int) -> None:
    options = f"size={size_mb}m,nr_inodes={INODES},mode=0700".encode()
    if _libc.mount(b"vecgrade-scratch", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        raise ScratchError(f"cannot mount a {size_mb} MB tmpfs on {path} ({os.strerror(ctypes.get_errno())})")


def remove(path: str) -> None:
    """Unmount ``path`` if it is a mount point, then delete it; a folder that stays mounted is left alone."""
    if os.path.ismount(path):
        _libc.umount2(path.encode(), MNT_DETACH)  # detached: a jail still closing keeps its view until it is gone
    if not os.path.ismount(path):
        shutil.rmtree(path, ignore_errors=True)


def _remove_if_mine(path: str, pid: int) -> None:
    if os.getpid() == pid:  # a forked child that exits normally leaves its parent's folders alone
        remove(path)


def sweep(folder: str | None = None) -> list[str]:
    """Remove every ``vecgrade-<kind>-<owner>-<random>`` folder in ``folder`` (default: the temporary
    folder) whose owner is gone; the names removed."""
    folder = folder or tempfile.gettempdir()
    gone = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        match = NAME.fullmatch(entry.name)
        if match and entry.is_dir(follow_symlinks=False) and not owner.alive(match.group(2)):
            remove(entry.path)
            gone.append(entry.name)
    return sorted(gone)


@functools.lru_cache(maxsize=None)
def _swept(pid: int, folder: str) -> None:
    """Once per process and temporary folder: the leftovers of killed runs go before this run adds its own."""
    sweep(folder)


@functools.lru_cache(maxsize=None)
def tmpfs_available() -> str | None:
    """None when this process can mount a jail's size-limited scratch, else why not (probed once)."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    try:
        Scratch("probe", size_mb=1).cleanup()
    except ScratchError as exc:
        return str(exc)
    return None


class Scratch:
    """One temporary folder of this process (``name``, like ``tempfile.TemporaryDirectory``), a tmpfs of
    ``size_mb`` when given; removed by ``cleanup``, when the object goes, or at exit."""

    def __init__(self, kind: str, size_mb: int | None = None, folder: str | None = None):
        folder = folder or tempfile.gettempdir()
        _swept(os.getpid(), folder)
        self.name = os.path.join(folder, f"{PREFIX}{kind}-{owner.tag()}-{secrets.token_hex(4)}")
        self.size_mb = size_mb
        os.mkdir(self.name, 0o700)
        self._finalizer = weakref.finalize(self, _remove_if_mine, self.name, os.getpid())
        if size_mb is not None:
            try:
                _mount_tmpfs(self.name, size_mb)
            except ScratchError:
                self.cleanup()
                raise

    def cleanup(self) -> None:
        self._finalizer()

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, *exc) -> None:
        self.cleanup()
