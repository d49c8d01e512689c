"""Names that say which process owns a thing (a temporary folder, a jail's cgroup), so that what a killed
process left behind is recognised by the next run and removed.

A tag is ``<pid>.<start>``: the process id and its start time (clock ticks since boot, from
``/proc/<pid>/stat``). The pair is unique for the life of the machine, so a pid the kernel has
given to another process since does not pass for the owner.
"""
from __future__ import annotations

import os
import re

TAG = re.compile(r"\d+\.\d+")


def start_time(pid: int) -> str | None:
    """When ``pid`` started (field 22 of /proc/<pid>/stat), or None when no such process runs."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else None


def tag(pid: int | None = None) -> str:
    """The tag of ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{start_time(pid)}"


def is_tag(name: str) -> bool:
    return TAG.fullmatch(name) is not None


def alive(owner: str) -> bool:
    """Whether the process ``owner`` (a tag) still runs."""
    pid, _, start = owner.partition(".")
    return start_time(int(pid)) == start
