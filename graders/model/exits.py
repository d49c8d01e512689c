"""``ExitCode``: what the exit status of a ``vecgrade`` command means (as pytest has ``pytest.ExitCode``).

Every command of ``vecgrade`` (``graders.cli``, and its entry point ``graders.entry``) ends with one
of these and with no other number; a test keeps literal exit codes out of the package. The instructor's guide
lists them from ``table()`` (docs/hooks.py), so the enum is the one source of the codes and their meanings.

This module imports nothing but ``enum``: the entry point reads it before it knows that typer is installed.
"""
from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "table"]


class ExitCode(IntEnum):
    """The exit status of a ``vecgrade`` command."""

    OK = 0
    FAILED = 1
    USAGE_ERROR = 2
    INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command that Ctrl-C stopped

    @property
    def meaning(self) -> str:
        """One sentence: when a command ends with this code."""
        return _MEANINGS[self]


_MEANINGS = {
    ExitCode.OK: "The command did all it was asked, and found nothing wrong.",
    ExitCode.FAILED: "The command ran and something it checks failed: a source notebook out of date "
                     "(`build --check`), an exercise with a problem (`validate`), a submission that could not be "
                     "graded (`grade`), feedback that could not be written (`feedback`), a demo student who did not "
                     "get the marks they deserve (`demo`).",
    ExitCode.USAGE_ERROR: "A mistake in the command line, the course folder or the install (an unknown name, a "
                          "missing folder or gradebook, an unwritable path, a missing extra): one line on stderr "
                          "that starts with `error:`, and no work done.",
    ExitCode.INTERRUPTED: "Interrupted (Ctrl-C, or the end of input at a prompt) before the command finished.",
}


def table() -> str:
    """The codes as a Markdown table, for the docs."""
    rows = [f"| {code.value} | `{code.name}` | {code.meaning} |" for code in ExitCode]
    return "\n".join(["| exit code | `ExitCode` | meaning |", "|---|---|---|", *rows])
