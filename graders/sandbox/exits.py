"""``ProcessExit``: the exit statuses of the sandbox's own processes (a jail's outer process and its init, the fork
server's children, a grading child's forks, a pool process).

No person reads them: they tell the process that waits (and whoever reads a ``ps`` or a core log) which step of a
jail's start failed, each step its own number in the range that ``sysexits.h`` leaves to programs (64-78). A
``vecgrade`` command's own codes are ``graders.model.exits.ExitCode``. A jail that ran its command exits as the
command did (that status passes through and is none of these).
"""
from __future__ import annotations

from enum import IntEnum

__all__ = ["ProcessExit"]


class ProcessExit(IntEnum):
    """Why a sandbox process ended."""

    OK = 0  # it did its work: a confined body returned, a server's client left, a pool process was told to end
    FAILED = 1  # `python -m graders.sandbox.jail` could not start (its one line on stderr), or an init lost its child
    FORKED_GRADING_CHILD = 70  # a fork of a grading child: it would share the grader's socket, so it dies at once
    NO_NAMESPACES = 71  # unshare(2) refused the jail's namespaces
    NOT_CONFINED = 72  # the jail's init failed while building the root or starting its body
    SERVED_FORK_FAILED = 73  # a fork server's child failed before its body could exit on its own
    NO_CGROUP = 74  # the jail's cgroup could not be made
