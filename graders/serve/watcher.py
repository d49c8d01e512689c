"""The exchange's inbound folder, read as a queue: new entries, who wrote them, a private checked copy.

nbgrader's exchange trusts the student id in an inbound folder's name, and
``nbgrader submit`` leaves each submission folder writable by everyone (0777,
"so the instructor can delete later"). So nothing is graded from the inbound
folder itself: ``stage`` copies an entry into a private folder, walking it with
directory file descriptors (``os.fwalk``, files opened with ``O_NOFOLLOW`` and
checked with ``fstat``), and refuses it when a folder or file is not owned by the
Unix user its name claims, or is a symlink or special file (as intake does).
What is checked is exactly what gets collected: swapping a file afterwards
changes nothing.
"""
from __future__ import annotations

import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import parse_utc

from graders.pipeline.intake import unsafe_entries

SECRET, TIMESTAMP = "submission_secret.txt", "timestamp.txt"
SETTLE_SECONDS = 60.0  # an entry still incomplete this long after it appeared is judged as it is


@dataclass(frozen=True)
class InboundName:
    """``<student>+<assignment>+<timestamp>[+<random>]``, read as nbgrader's collect reads it."""
    name: str
    student: str
    assignment: str
    timestamp: str


def _is_time(text: str) -> bool:
    try:
        parse_utc(text)
        return True
    except (ValueError, OverflowError):
        return False


def parse_name(name: str) -> InboundName | None:
    parts = name.rsplit("+", 3)
    if len(parts) == 4 and _is_time(parts[2]):
        return InboundName(name, parts[0], parts[1], parts[2])
    parts = name.rsplit("+", 2)  # nbgrader's add_random_string = False
    if len(parts) == 3 and _is_time(parts[2]):
        return InboundName(name, parts[0], parts[1], parts[2])
    return None


def scan(inbound: Path) -> list[str]:
    """The names in the inbound folder (one ``scandir``: cheap enough to poll twice a second)."""
    try:
        with os.scandir(inbound) as found:
            return sorted(e.name for e in found if not e.name.startswith("."))
    except FileNotFoundError:
        return []


def is_complete(folder: Path) -> bool:
    """``nbgrader submit`` writes the secret after copying, then opens the folder to everyone (0777) last."""
    try:
        st = os.lstat(folder)
        return stat.S_IMODE(st.st_mode) == 0o777 and (folder / SECRET).is_file()
    except OSError:
        return False


def is_folder(path: Path) -> bool:
    """A real folder, not a link to one (lstat)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def owner(path: Path) -> str:
    return user_name(os.lstat(path).st_uid)


class Refused(Exception):
    """A submission the service will not grade; the message is the one line the student reads."""


def stage(source: Path, dest: Path, student: str, check_owner: bool, max_bytes: int) -> None:
    """Copy ``source`` into ``dest`` (fresh), refusing a symlink, a special file, a foreign owner or an
    oversized entry; what is checked is what is copied."""
    try:
        st = os.lstat(source)
    except FileNotFoundError:
        raise Refused("the submission folder is gone from the exchange") from None
    if not stat.S_ISDIR(st.st_mode):
        raise Refused("the submission is not a folder (a symlink or a special file)")
    if check_owner and user_name(st.st_uid) != student:
        raise Refused(f"submitted as {student}, but the folder belongs to the Unix user {user_name(st.st_uid)}")
    bad = unsafe_entries(str(source))
    if bad:
        raise Refused(f"the submission holds {', '.join(bad[:5])}, which is not a regular file "
                      "(symlinks, devices, FIFOs and sockets are refused)")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    total = 0
    for dirpath, dirnames, filenames, dirfd in os.fwalk(source, follow_symlinks=False):
        here = Path(dirpath).relative_to(source)
        _check(os.fstat(dirfd), here, student, check_owner)
        for name in dirnames:
            (dest / here / name).mkdir()
        for name in filenames:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirfd)
            except OSError:
                raise Refused(f"the submission holds {here / name}, which is not a regular file") from None
            with os.fdopen(fd, "rb") as src:
                info = os.fstat(src.fileno())
                _check(info, here / name, student, check_owner)
                total += info.st_size
                if total > max_bytes:
                    raise Refused(f"the submission is larger than {max_bytes / 1e6:g} MB")
                with open(dest / here / name, "wb") as out:
                    shutil.copyfileobj(src, out)


def _check(st: os.stat_result, where: Path, student: str, check_owner: bool) -> None:
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise Refused(f"the submission holds {where}, which is not a regular file")
    if check_owner and user_name(st.st_uid) != student:
        raise Refused(f"{where} in the submission belongs to the Unix user {user_name(st.st_uid)}, not {student}")


def check_notebooks(folder: Path, known: list[str]) -> list[str]:
    """The submission's notebooks (ids), refusing one that is not a notebook or not of this assignment."""
    if not known:
        raise Refused("this assignment is not in the course's gradebook yet; ask your teacher")
    found = sorted(p.stem for p in folder.glob("*.ipynb"))
    if not found:
        raise Refused("the submission holds no notebook (.ipynb)")
    for notebook_id in found:
        try:
            nb = nbformat.reads((folder / f"{notebook_id}.ipynb").read_text(errors="replace"), as_version=4)
        except Exception as exc:  # noqa: BLE001 - not JSON, not a notebook: the student reads why
            raise Refused(f"{notebook_id}.ipynb is not a notebook ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:120] if str(exc) else 'unreadable'})") from None
        if not nb.get("cells"):  # refused here, so never collected: the earlier submission and marks stay
            raise Refused(f"{notebook_id}.ipynb is an empty notebook (no cells): open the notebook you worked in, "
                          "save it, and submit again")
        if notebook_id not in known:
            raise Refused(f"unknown notebook {notebook_id}.ipynb; this assignment has "
                          f"{', '.join(f'{k}.ipynb' for k in known)}")
    return found


def read_secret(folder: Path) -> str | None:
    """The submission's secret (nbgrader names its feedback by it); read from a regular file only, never
    through a link or from a FIFO a student left there."""
    try:
        fd = os.open(folder / SECRET, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read(4096).decode(errors="replace") or None
