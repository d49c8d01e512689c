"""Inbound exchange entries as a student's ``nbgrader submit`` leaves them (and hostile ones), and what the
service's outputs must never hold: control characters."""
from __future__ import annotations

import io
import os
import re
from pathlib import Path

from rich.console import Console

from graders.pipeline import safecopy

from tests.testkit import ROOT

SOURCE = ROOT / "source" / "broadcasting" / "broadcasting.ipynb"
TS = "2025-01-01 10:00:00 UTC"
ME = safecopy.user_name(os.getuid())  # the entries' owner: the owner check passes for them
# a forged log line (a folder name holds no "/": U+2215 looks like one), erase-line, a window title, a formula,
# unicode, the longest name: its inbound folder's name is 255 bytes
HOSTILE = ["ada\nstudent=victim assignment=broadcasting queued=0.0s grading=1.0s outcome=graded 16\u221516",
           "bob\x1b[2K\rcy", "\x1b]0;pwned\x07dan", "+SUM(A1)", "zoë\u202eevil\u2028x\x85", "e" * 216]
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def no_control(text: str) -> None:
    assert not CONTROL.search(text), repr(CONTROL.search(text))


def printed_lines(table, lines) -> list[str]:
    """What ``vecgrade status`` prints (a table, then lines without markup), line by line."""
    out = io.StringIO()
    console = Console(file=out, width=250, force_terminal=False)
    console.print(table)
    for line in lines:
        console.print(line, markup=False)
    printed = out.getvalue().split("\n")
    for line in printed:
        no_control(line)
    return printed


def make_entry(inbound: Path, student: str = ME, stamp: str = TS, tail: str = "x") -> Path:
    """A complete inbound entry of ``student``: the release notebook and one other file."""
    folder = inbound / f"{student}+broadcasting+{stamp}+{tail}"
    folder.mkdir(parents=True)
    (folder / "broadcasting.ipynb").write_text(SOURCE.read_text())
    (folder / "submission_secret.txt").write_text(f"s3cret-{tail}")
    os.chmod(folder, 0o777)  # nbgrader submit's last step: the entry is complete
    return folder


def make_nest(folder: Path, depth: int, length: int) -> None:
    """``depth`` folders inside each other, each name ``length`` characters (made through descriptors: the whole
    path is longer than PATH_MAX)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(depth):
        name = str(i % 10) * length
        os.mkdir(name, dir_fd=fd)
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)
