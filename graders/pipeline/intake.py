"""What nbgrader may take from ``submitted/``: a few regular files and folders, checked before any copy.

nbgrader 0.9.6 copies a submission into ``autograded/`` with ``shutil.copy``,
as the grader (root), following symlinks: a link to ``gradebook.db`` or to
another student's notebook put that file where the student's kernel could
read it, and a link to ``/dev/zero`` would fill the disk. Its ``is_ignored``
globs the folder once per file, so 20,000 small files cost it about 40
minutes. ``SafeAutograde`` walks the submission once with ``lstat`` first
(``survey``: never following a link, never reading a file, stopping as soon
as a cap is passed) and refuses it whole (one line in the log; the batch goes
on with the next student) when it holds a symlink, a device, a FIFO or a
socket, more than ``Intake.max_files`` entries or more than
``Intake.max_bytes`` bytes, or a notebook of more than ``Intake.max_cells``
cells (nbgrader's own steps cost time per cell, outside every budget). It also refuses to grade at all when the sandbox
is asked for and unavailable (see ``Sandbox.check``).

nbgrader picks its converter class itself, so ``install()`` (called from
``nbgrader_config.py``, which both ``nbgrader autograde`` and ``NbGraderAPI``
load before converting) points both at ``SafeAutograde``; config written for
``Autograde`` applies to it unchanged.
"""
from __future__ import annotations

import fnmatch
import glob
import hashlib
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.converters import Autograde
from nbgrader.converters.base import BaseConverter, NbGraderException
from nbgrader.utils import setenv
from traitlets import Integer, Unicode
from traitlets.config import Configurable

from graders.model.errors import VecgradeError
from graders.pipeline import arrivals
from graders.pipeline.nbgrader_seam import patch
from graders.pipeline.refusals import NoNotebookError, NotebookReads, known_notebooks, submission_refusal
from graders.pipeline.safecopy import Caps, Refused, stage
from graders.sandbox.policy import Sandbox


class UnsafeSubmissionError(VecgradeError, NbGraderException):
    """A submission holds something other than a few regular files and folders."""


class GradingRefusedError(VecgradeError, NbGraderException):
    """Confinement was asked for and is unavailable: no student code runs (named so that the log says why)."""


@dataclass
class Survey:
    """What one walk of a folder saw (all of it, unless the walk stopped at a cap: ``over``)."""

    bad: list[str] = field(default_factory=list)  # neither a regular file nor a real folder
    files: list[str] = field(default_factory=list)  # regular files
    folders: list[str] = field(default_factory=list)
    entries: int = 0
    size: int = 0  # bytes of the regular files
    over: str = ""  # "files" or "bytes": the cap that stopped the walk


def survey(folder: str, max_files: int | None = None, max_bytes: int | None = None,
           ignore: Sequence[str] = ()) -> Survey:
    """One walk of ``folder`` with lstat (paths relative to it), stopping as soon as there are more than
    ``max_files`` entries or ``max_bytes`` bytes; entries whose name matches an ``ignore`` glob are skipped."""
    found = Survey()
    pending = [""]
    while pending:
        where = pending.pop()
        with os.scandir(os.path.join(folder, where)) as entries:
            for entry in entries:
                if any(fnmatch.fnmatch(entry.name, glob) for glob in ignore):
                    continue
                found.entries += 1
                if max_files is not None and found.entries > max_files:
                    found.over = "files"
                    return found
                path = os.path.join(where, entry.name)
                mode = entry.stat(follow_symlinks=False)  # lstat: a link is never followed
                if stat.S_ISDIR(mode.st_mode):
                    found.folders.append(path)
                    pending.append(path)
                elif stat.S_ISREG(mode.st_mode):
                    found.files.append(path)
                    found.size += mode.st_size
                    if max_bytes is not None and found.size > max_bytes:
                        found.over = "bytes"
                        return found
                else:
                    found.bad.append(path)
    return found


def unsafe_entries(folder: str) -> list[str]:
    """Every entry under ``folder`` that is not a regular file or a real folder (checked with lstat)."""
    return sorted(survey(folder).bad)


class Intake(Configurable):
    """The caps a submission must keep to before nbgrader (or a kernel) copies any of it."""

    max_files = Integer(100, help="Most files and folders one submission may hold, counted with lstat in "
                                  "one walk that stops at the cap; more refuses it before nbgrader copies "
                                  "anything").tag(config=True)
    max_bytes = Integer(20 * 1024 ** 2, help="Largest total size of one submission's files, in bytes; more "
                                             "refuses it before nbgrader copies anything").tag(config=True)
    max_cells = Integer(10_000, help="Most cells one submitted notebook may hold: nbgrader's own steps cost time "
                                     "per cell outside every budget (about 2 ms each, where the gradebook is "
                                     "written); more refuses the submission").tag(config=True)

    def verdict(self, found: Survey, who: str) -> str | None:
        """The one-line refusal for what ``survey`` found in ``who``'s submission, or None."""
        keep = "keep only the notebook and the files it needs"
        if found.bad:
            return (f"UnsafeSubmissionError: {who} holds {', '.join(sorted(found.bad)[:5])}, "
                    "which is not a regular file (symlinks, devices, FIFOs and sockets are refused)")
        if found.over == "files":
            return f"UnsafeSubmissionError: {who} holds more than {self.max_files} files; {keep}"
        if found.over == "bytes":
            return f"UnsafeSubmissionError: {who} holds more than {self.max_bytes / 1024 ** 2:g} MB; {keep}"
        return None

    def refusal(self, folder: str, who: str, reads: NotebookReads | None = None) -> str | None:
        """Why the submission in ``folder`` is refused (one line), or None (also when there is no folder).
        The notebooks nbgrader grades are read only once the walk has passed the caps (so at most ``max_bytes``);
        ``reads``: where they are read once for every check (graders.pipeline.refusals.NotebookReads)."""
        if not os.path.isdir(folder):
            return None
        found = survey(folder, self.max_files, self.max_bytes)
        refused = self.verdict(found, who)
        reads = reads if reads is not None else NotebookReads()
        for path in [] if refused else [p for p in found.files if os.sep not in p and p.endswith(".ipynb")]:
            if _cells(reads.get(Path(folder) / path).json) > self.max_cells:
                return (f"UnsafeSubmissionError: {who}/{path} holds more than {self.max_cells} cells; "
                        "keep only the cells the notebook needs")
        return refused


def _cells(nb: object) -> int:
    """How many cells the parsed notebook ``nb`` holds (0 when it is not one: the refusals say why)."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    return len(cells) if isinstance(cells, list) else 0


def copy_regular_files(source: str, dest: str, intake: Intake | None = None, ignore: Sequence[str] = ()) -> None:
    """A private copy of ``source``'s regular files and folders, except names matching ``ignore``, made by the one
    safe copy (``graders.pipeline.safecopy.stage``: counted through descriptors first, at most the bytes counted);
    a symlink, a special file, or an entry over the ``intake`` caps copies nothing (``UnsafeSubmissionError``)."""
    intake = intake if intake is not None else Intake()
    try:
        stage(Path(source), Path(dest), "", False, Caps(intake.max_bytes, intake.max_files, intake.max_cells), ignore)
    except Refused as exc:
        raise UnsafeSubmissionError(f"UnsafeSubmissionError: {exc}") from None


def graded_path(graded_dir: str | os.PathLike, student: str, notebook: str) -> Path:
    """Where the coordinator puts one student's graded notebook for ``SafeAutograde`` to record (per student, named
    by a digest, so that no student id can reach outside ``graded_dir``)."""
    return Path(graded_dir) / hashlib.sha256(student.encode()).hexdigest()[:32] / f"{notebook}.ipynb"


class RecordingMissing(VecgradeError, NbGraderException):
    """A notebook of the submission has no graded version to record (its job graded another set of notebooks)."""


class SafeAutograde(Autograde):
    """nbgrader's ``Autograde``, refusing unsafe submissions and unconfined grading before copying anything; with
    ``graded_dir`` set, the recording of notebooks graded by vecgrade's jobs (graders.engine.record)."""

    graded_dir = Unicode("", help="Set by vecgrade's coordinator, never in nbgrader_config.py: a folder of notebooks "
                                  "its grading jobs graded (graded_path). Autograde then records each one as it is "
                                  "(nbgrader's steps from SaveAutoGrades on: scores, late penalty, metadata check) "
                                  "instead of sanitizing and grading the submitted one; the job already ran the "
                                  "sanitize steps and the intake checks").tag(config=True)

    def convert_single_notebook(self, notebook_filename: str) -> None:
        if not self.graded_dir:
            return super().convert_single_notebook(notebook_filename)
        found = self.init_single_notebook_resources(notebook_filename)["nbgrader"]
        graded = graded_path(self.graded_dir, found["student"], found["notebook"])
        if not graded.is_file():
            raise RecordingMissing(f"no graded notebook of {found['notebook']}.ipynb to record")
        dest = Path(self._format_dest(found["assignment"], found["student"])) / graded.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(graded, dest)
        self._sanitizing = False  # nbgrader's second pass, on the graded notebook: what the pipeline has after grading
        self._init_preprocessors()
        try:
            with setenv(NBGRADER_EXECUTION="autograde"):
                BaseConverter.convert_single_notebook(self, str(dest))
        finally:
            self._sanitizing = True

    def init_notebooks(self) -> None:
        """One student's folder without a notebook is refused with the fix (nbgrader looks for notebooks before
        ``init_assignment``, and says only "No notebooks were matched by ...")."""
        assignment_id, student_id = self.coursedir.assignment_id, self.coursedir.student_id
        if self.graded_dir:  # recording what a job graded: the job refused what had to be refused
            return super().init_notebooks()
        folder = self._format_source(assignment_id, student_id)
        if os.path.isdir(folder) and not glob.glob(os.path.join(glob.escape(folder), "*.ipynb")):
            # one student's submission (not a pattern over several) without a notebook
            refused = submission_refusal(self.coursedir.root, folder, known_notebooks(self.coursedir.db_url,
                                                                                      assignment_id),
                                         assignment_id, student_id)
            if isinstance(refused, NoNotebookError):
                self.log.error("vecgrade: %s", refused)
                raise refused
        super().init_notebooks()

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        arrivals.note_arrival(self, assignment_id, student_id)  # its time of record, before anything may refuse it
        if self.graded_dir:  # recording what a job graded: its intake checks and refusals ran there
            super().init_assignment(assignment_id, student_id)
            arrivals.stamp_graded_copy(self, assignment_id, student_id)
            return
        try:
            Sandbox(parent=self).check()
        except Exception as exc:  # noqa: BLE001 - SandboxUnavailableError: one line, no points, batch goes on
            self.log.error("vecgrade: SandboxUnavailableError: %s", exc)
            raise GradingRefusedError(f"SandboxUnavailableError: {exc}") from None
        refusal = Intake(parent=self).refusal(self._format_source(assignment_id, student_id),
                                              f"{student_id}/{assignment_id}")
        if refusal:
            self.log.error("vecgrade: %s", refusal)
            raise UnsafeSubmissionError(refusal)
        folder = self._format_source(assignment_id, student_id)
        refused = submission_refusal(self.coursedir.root, folder, known_notebooks(self.coursedir.db_url, assignment_id),
                                     assignment_id, student_id)
        if refused:
            self.log.error("vecgrade: %s", refused)
            raise refused
        super().init_assignment(assignment_id, student_id)
        arrivals.stamp_graded_copy(self, assignment_id, student_id)  # lateness from the time of record


def install() -> None:
    """Make ``nbgrader autograde`` and ``NbGraderAPI.autograde`` use ``SafeAutograde``, and date submissions by
    their time of record (``graders.pipeline.arrivals``)."""
    patch("nbgrader.apps.api.Autograde", SafeAutograde)
    patch("nbgrader.apps.autogradeapp.Autograde", SafeAutograde)
    arrivals.install()  # collect records each submission's time of record; nbgrader reads times from it
