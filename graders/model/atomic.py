"""One way to replace a file whole: ``write_atomically``.

Every file vecgrade rewrites where someone may be reading it (the CSVs of ``graders.model.csvsafe``, the catalogue,
a student's feedback page, the torch footprint cache) is written to a temporary file beside it and renamed over it,
so a reader opens the old file or the new one, never half of one.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

CREATE = 0o666  # the mode open() asks for; the process's umask (or the folder's default ACL) takes its part
TRIES = 16  # names to try before giving up (each is 48 random bits: a second try is already a rarity)


def write_atomically(path: Path | str, data: bytes | str, mode: int | None = None) -> None:
    """Replace (or create) the file ``path`` with ``data`` (``str`` is written as UTF-8).

    The contract:

    - readers of ``path`` see the old file or the new one, never part of either (a rename within one folder);
      two writers at once leave one of their contents whole;
    - the temporary (``.<name>.<random>.tmp``) is in the same folder, and removed on any failure (the exception
      is raised again and ``path`` is left as it was);
    - the new file's mode is ``mode`` when given, else the replaced file's permission bits, else what ``open()``
      would give a new file (``0o666`` less the umask);
    - nothing is flushed to the disk (no ``fsync``): a reader is safe, a power cut may lose the new content.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, temp = _create(path)
    try:
        try:
            keep = mode if mode is not None else _mode_of(path)
            if keep is not None:
                os.fchmod(fd, keep)
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def _create(path: Path) -> tuple[int, Path]:
    """A new, empty temporary beside ``path``, opened for writing, created as ``open()`` creates a file (so its
    mode is ``CREATE`` less the umask, read by nobody: no ``os.umask`` call, which would race other threads)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(TRIES):
        temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temp, flags, CREATE), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def _mode_of(path: Path) -> int | None:
    """The permission bits of the file that ``path`` names now; None when there is none."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None
