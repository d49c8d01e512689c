"""The exchange's inbound folder, read as a queue: new entries, who wrote them, a private checked copy.

nbgrader's exchange trusts the student id in an inbound folder's name, and
``nbgrader submit`` leaves each submission folder writable by everyone (0777,
"so the instructor can delete later"). So nothing is graded from the inbound
folder itself: ``stage`` (``graders.pipeline.safecopy``) copies an entry through
directory file descriptors, counted against its caps before anything is copied,
refusing it when a folder or file is not owned by the Unix user its name claims,
or is a symlink or special file. ``check_notebooks`` counts each
notebook's cells on its JSON before nbformat validates it. What is checked is
exactly what gets collected: swapping a file afterwards changes nothing. Every
reason is one line worded for the student, with file names made inert
(``graders.model.inert``).
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.utils import parse_utc

from graders.model.inert import inert
from graders.pipeline.refusals import (
    empty_for_student,
    no_notebook_for_student,
    not_a_notebook_for_student,
    unknown_for_student,
)
from graders.pipeline.safecopy import Refused

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


def _cell_count(data: bytes) -> tuple[dict | None, str]:
    """The notebook's JSON and why it is not one ("" when it is JSON holding an object)."""
    if not data.strip():
        return None, "an empty file"
    try:
        nb = json.loads(data)
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except ValueError as exc:
        return None, f"not JSON: {str(exc)[:80]}"
    return (nb, "") if isinstance(nb, dict) else (None, "not a JSON object")


def check_notebooks(folder: Path, known: list[str], max_cells: int = 10_000) -> list[str]:
    """The submission's notebooks (ids), refusing one that is not a notebook, holds more than ``max_cells`` cells
    (counted on the JSON, before nbformat validates anything) or is not of this assignment. Every reason is
    worded for the student: what is wrong, and what to do in their own assignment folder."""
    if not known:
        raise Refused("this assignment is not in the course's gradebook yet; ask your teacher")
    found = sorted(p.stem for p in folder.glob("*.ipynb") if p.is_file())  # a folder named x.ipynb is no notebook
    if not found:
        raise Refused(no_notebook_for_student(known))
    unknown = [f"{n}.ipynb" for n in found if n not in known]
    if unknown:
        raise Refused(unknown_for_student(unknown, known, found))
    for notebook_id in found:
        shown = f"`{inert(notebook_id)}.ipynb`"
        data = (folder / f"{notebook_id}.ipynb").read_bytes()  # the private copy, already within the byte cap
        nb_json, why = _cell_count(data)
        nb = None
        if nb_json is not None:
            cells = nb_json.get("cells")
            if isinstance(cells, list) and len(cells) > max_cells:
                raise Refused(f"{shown} holds more than {max_cells} cells: delete the cells you do not need, "
                              "save it, and submit again")
            try:
                nb = nbformat.reads(data.decode(), as_version=4)
            except Exception as exc:  # noqa: BLE001 - not a notebook: the student reads why
                first = str(exc).splitlines()[0][:120] if str(exc) else "unreadable"
                why = f"{type(exc).__name__}: {inert(first)}"
        if why or nb is None:
            raise Refused(not_a_notebook_for_student(f"{notebook_id}.ipynb", why))
        if not nb.get("cells"):  # refused here, so never collected: the earlier submission and marks stay
            raise Refused(empty_for_student([f"{notebook_id}.ipynb"]))
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
