"""What nbgrader may take from ``submitted/``: regular files and folders only, checked before any copy.

nbgrader 0.9.6 copies a submission into ``autograded/`` with ``shutil.copy``,
as the grader (root), following symlinks: a link to ``gradebook.db`` or to
another student's notebook put that file where the student's kernel could
read it, and a link to ``/dev/zero`` would fill the disk. ``SafeAutograde``
checks the submission with ``lstat`` first and refuses it whole (one line in
the log; the batch goes on with the next student) when it holds a symlink, a
device, a FIFO or a socket. It also refuses to grade at all when the sandbox
is asked for and unavailable (see ``Sandbox.check``).

nbgrader picks its converter class itself, so ``install()`` (called from
``nbgrader_config.py``, which both ``nbgrader autograde`` and ``NbGraderAPI``
load before converting) points both at ``SafeAutograde``; config written for
``Autograde`` applies to it unchanged.
"""
from __future__ import annotations

import os
import shutil
import stat

from nbgrader.converters import Autograde
from nbgrader.converters.base import NbGraderException

from graders.pipeline import arrivals
from graders.pipeline.refusals import submission_refusal
from graders.sandbox.policy import Sandbox


class UnsafeSubmissionError(NbGraderException):
    """A submission holds something other than regular files and folders."""


class GradingRefusedError(NbGraderException):
    """Confinement was asked for and is unavailable: no student code runs (named so that the log says why)."""


def unsafe_entries(folder: str) -> list[str]:
    """Every entry under ``folder`` that is not a regular file or a real folder (checked with lstat)."""
    bad = []
    for dirpath, dirnames, filenames in os.walk(folder):  # os.walk never descends into a linked folder
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                bad.append(os.path.relpath(path, folder))
    return sorted(bad)


def copy_regular_files(source: str, dest: str) -> None:
    """A private copy of ``source``'s regular files and folders; anything else is left out (lstat)."""
    os.makedirs(dest, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(source):
        target = os.path.join(dest, os.path.relpath(dirpath, source))
        for name in dirnames:
            if stat.S_ISDIR(os.lstat(os.path.join(dirpath, name)).st_mode):
                os.makedirs(os.path.join(target, name), exist_ok=True)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as src, \
                        open(os.path.join(target, name), "wb") as out:
                    shutil.copyfileobj(src, out)


class SafeAutograde(Autograde):
    """nbgrader's ``Autograde``, refusing unsafe submissions and unconfined grading before copying anything."""

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        arrivals.note_arrival(self, assignment_id, student_id)  # its time of record, before anything may refuse it
        try:
            Sandbox(parent=self).check()
        except Exception as exc:  # noqa: BLE001 - SandboxUnavailableError: one line, no points, batch goes on
            self.log.error("vecgrade: SandboxUnavailableError: %s", exc)
            raise GradingRefusedError(f"SandboxUnavailableError: {exc}") from None
        folder = self._format_source(assignment_id, student_id)
        bad = unsafe_entries(folder)
        if bad:
            msg = (f"UnsafeSubmissionError: {student_id}/{assignment_id} holds {', '.join(bad[:5])}, "
                   "which is not a regular file (symlinks, devices, FIFOs and sockets are refused)")
            self.log.error("vecgrade: %s", msg)
            raise UnsafeSubmissionError(msg)
        refused = submission_refusal(self.coursedir.root, folder, self.coursedir.db_url, assignment_id, student_id)
        if refused:
            self.log.error("vecgrade: %s", refused)
            raise refused
        super().init_assignment(assignment_id, student_id)
        arrivals.stamp_graded_copy(self, assignment_id, student_id)  # lateness from the time of record


def install() -> None:
    """Make ``nbgrader autograde`` and ``NbGraderAPI.autograde`` use ``SafeAutograde``, and date submissions by
    their time of record (``graders.pipeline.arrivals``)."""
    import nbgrader.apps.api
    import nbgrader.apps.autogradeapp

    nbgrader.apps.api.Autograde = SafeAutograde
    nbgrader.apps.autogradeapp.Autograde = SafeAutograde
    arrivals.install()  # collect records each submission's time of record; nbgrader reads times from it
