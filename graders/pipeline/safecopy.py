"""A private copy of a submission folder, walked through directory descriptors and checked before any byte is copied.

``stage`` opens every folder with ``O_NOFOLLOW`` and ``lstat``s every entry
(never following a link, never reading a file), counting it against its caps
(``Caps``: name lengths, depth, files and folders, bytes) before copying
anything; it refuses an entry holding a symlink or a special file, or (when
asked) a folder or file not owned by the Unix user it is said to belong to.
Then it copies, through descriptors again, at most the bytes it counted: a
file that grew or shrank meanwhile is refused. What is checked is exactly what
is copied. Every refusal (``Refused``) is one line worded for the student,
with file names made inert (``graders.model.inert``). The service stages
inbound submissions with it (``graders.serve.watcher``) and the confined
kernel copies its working files with it (``graders.pipeline.intake.copy_regular_files``).
"""
from __future__ import annotations

import fnmatch
import os
import pwd
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from graders.model.errors import VecgradeError
from graders.model.inert import inert


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def owner(path: Path) -> str:
    return user_name(os.lstat(path).st_uid)


class Refused(VecgradeError):
    """A submission the service will not grade; the message is the one line the student reads."""


MAX_NAME_BYTES = 255  # one file or folder name (most file systems' own limit)
MAX_PATH_BYTES = 1024  # a path inside the submission: the staged copy's path stays far below PATH_MAX
MAX_DEPTH = 8  # folders inside folders
CHUNK = 1 << 20


@dataclass(frozen=True)
class Caps:
    """What one inbound entry may hold, all counted before any of it is copied or parsed."""
    max_bytes: int  # the files' sizes together
    max_files: int = 100  # files and folders (``Intake.max_files``)
    max_cells: int = 10_000  # cells of one notebook (``Intake.max_cells``)
    max_depth: int = MAX_DEPTH
    max_path_bytes: int = MAX_PATH_BYTES


@dataclass
class _Planned:
    folders: list[tuple[str, ...]]
    files: dict[tuple[str, ...], int]  # path parts -> size counted


def _shown(parts: tuple[str, ...]) -> str:
    """A path inside the submission as the student reads it (quoted; inert, at most 120 characters)."""
    text = inert("/".join(parts))
    return f"`{text if len(text) <= 120 else text[:117] + '...'}`"


def _open_dir(name: str, dir_fd: int | None) -> int:
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)


def _survey(top: int, student: str, check_owner: bool, caps: Caps, ignore: Sequence[str] = ()) -> _Planned:
    """One walk of the entry through directory descriptors (lstat, never following a link, never reading a file),
    stopping at the first cap passed: name lengths, depth, number of entries, bytes. Names matching an ``ignore``
    glob are neither counted nor copied."""
    plan = _Planned([], {})
    entries, size = 0, 0
    pending: list[tuple[tuple[str, ...], int]] = [((), top)]
    try:
        while pending:
            here, fd = pending.pop()
            try:
                _check(os.fstat(fd), here, student, check_owner)
                names = []
                with os.scandir(fd) as found:
                    for entry in found:  # stops at the cap: a folder of a million files costs no more than 100
                        if any(fnmatch.fnmatch(entry.name, glob) for glob in ignore):
                            continue
                        entries += 1
                        if entries > caps.max_files:
                            raise Refused(f"the submission holds more than {caps.max_files} files and folders: "
                                          "keep only the notebook and the files it needs in the assignment's "
                                          "folder, and submit again")
                        names.append(entry.name)
                for name in sorted(names):
                    parts = (*here, name)
                    if len(os.fsencode(name)) > MAX_NAME_BYTES or \
                            len(os.fsencode("/".join(parts))) > caps.max_path_bytes:
                        raise Refused(f"the submission holds a file or folder name that is too long "
                                      f"({_shown(parts)}): rename it, and submit again")
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    _check(info, parts, student, check_owner)
                    if stat.S_ISDIR(info.st_mode):
                        if len(parts) > caps.max_depth:
                            raise Refused(f"the submission holds folders more than {caps.max_depth} deep "
                                          f"({_shown(parts[:caps.max_depth + 1])}): keep only the notebook and "
                                          "the files it needs, and submit again")
                        plan.folders.append(parts)
                        pending.append((parts, _open_dir(name, fd)))
                    else:
                        size += info.st_size
                        if size > caps.max_bytes:
                            raise Refused(f"the submission is larger than {caps.max_bytes / 1024 ** 2:.4g} MB: keep "
                                          "only the notebook and the files it needs, and submit again")
                        plan.files[parts] = info.st_size
            finally:
                if fd != top:
                    os.close(fd)
    finally:
        for _, fd in pending:
            if fd != top:
                os.close(fd)
    return plan


def _copy_file(src_dir: int, dest_dir: int, parts: tuple[str, ...], counted: int, student: str,
               check_owner: bool) -> None:
    """Copy one file, at most the ``counted`` bytes: a file that grew or shrank since it was counted is refused."""
    name = parts[-1]
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=src_dir)
    except OSError:
        raise Refused(f"the submission holds {_shown(parts)}, which is not a regular file") from None
    changed = Refused(f"{_shown(parts)} changed while it was being submitted: submit again")
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(src.fileno())
        _check(info, parts, student, check_owner)
        if not stat.S_ISREG(info.st_mode) or info.st_size != counted:
            raise changed
        out_fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=dest_dir)
        with os.fdopen(out_fd, "wb") as out:
            left = counted + 1  # one byte more than counted: a file that grew is seen, and never copied past it
            while left > 0:
                data = src.read(min(CHUNK, left))
                if not data:
                    break
                left -= len(data)
                if left <= 0:
                    raise changed
                out.write(data)
        if left != 1:
            raise changed


def stage(source: Path, dest: Path, student: str, check_owner: bool, max_bytes: int | Caps,
          ignore: Sequence[str] = ()) -> None:
    """Copy ``source`` into ``dest`` (fresh), refusing a symlink, a special file, a foreign owner, or an entry past
    a cap (``Caps``: names, depth, files, bytes: all counted before anything is copied); what is checked is what is
    copied, and only the bytes counted are; names matching an ``ignore`` glob are left out. Any error reading the
    entry is a refusal (``Refused``, one line)."""
    caps = max_bytes if isinstance(max_bytes, Caps) else Caps(max_bytes)
    try:
        top = _open_dir(str(source), None)
    except FileNotFoundError:
        raise Refused("the submission folder is gone from the exchange") from None
    except OSError:
        raise Refused("the submission is not a folder (a symlink or a special file)") from None
    try:
        st = os.fstat(top)
        if check_owner and user_name(st.st_uid) != student:
            raise Refused(f"submitted as {inert(student)}, but the folder belongs to the Unix user "
                          f"{inert(user_name(st.st_uid))}")
        plan = _survey(top, student, check_owner, caps, ignore)
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)  # modes as a plain copy makes them: the staging root is 0700
        try:
            dest_top = _open_dir(str(dest), None)
            try:
                _copy(top, dest_top, (), plan, student, check_owner)
            finally:
                os.close(dest_top)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)  # nothing half-copied stays behind
            raise
    except OSError as exc:
        raise Refused(f"the submission could not be read ({type(exc).__name__}: {inert(exc.strerror or exc)}): "
                      "submit again from the assignment's folder") from None
    finally:
        os.close(top)


def _copy(src: int, dest: int, here: tuple[str, ...], plan: _Planned, student: str, check_owner: bool) -> None:
    """Copy what ``_survey`` counted in the folder ``here`` (open as ``src``), through descriptors only."""
    _check(os.fstat(src), here, student, check_owner)
    for parts, size in plan.files.items():
        if parts[:-1] == here:
            _copy_file(src, dest, parts, size, student, check_owner)
    for parts in plan.folders:
        if parts[:-1] == here:
            os.mkdir(parts[-1], 0o777, dir_fd=dest)
            try:
                sub = _open_dir(parts[-1], src)
            except OSError:
                raise Refused(f"{_shown(parts)} changed while it was being submitted: submit again") from None
            sub_dest = _open_dir(parts[-1], dest)
            try:
                _copy(sub, sub_dest, parts, plan, student, check_owner)
            finally:
                os.close(sub)
                os.close(sub_dest)


def _check(st: os.stat_result, where: tuple[str, ...], student: str, check_owner: bool) -> None:
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise Refused(f"the submission holds {_shown(where)}, which is not a regular file (symlinks, devices, FIFOs "
                      "and sockets are refused): remove it, and submit again")
    if check_owner and user_name(st.st_uid) != student:
        raise Refused(f"{_shown(where) if where else 'the folder'} in the submission belongs to the Unix user "
                      f"{inert(user_name(st.st_uid))}, not {inert(student)}")
