"""What the service shares between submissions: one executor, one verdict store per assignment, one program key.

The service keeps one ``Executor`` (graders.engine.executors: this process, a pool of ``--jobs`` processes, or
a Dask client) for its whole life, shared by every assignment's ``Engine``, so each process keeps its
``GradingRun`` -- fork server, reference templates, timing calibrations -- warm from one submission to the
next; and one ``Engine`` per assignment, with the seed the ledger keeps for it.

The same program gets the same verdict: the coordinator's one ``VerdictStore``
(graders.model.store), preloaded from the ledger, holds the verdicts each
distinct program earned under its program key (``kept_key``: the reached code, the student's
own modules, the seed, the definitions' fingerprint and the grading settings),
and every job is given the verdicts known for its programs, "fast" included, so
resubmitting -- even after a restart -- cannot fish for a luckier timing. Only
settled verdicts (passed or failed from a clean observation) are kept: a
disrupted grading is graded again, never kept.
"""
from __future__ import annotations

from graders.coursedir.course import Course

__all__ = ["kept_key"]


def kept_key(course: Course, assignment: str, seed: int, cells, exercise: str,
             modules: dict[str, str] | None = None) -> str:
    """The program key the service keeps ``exercise``'s verdicts under for the notebook code ``cells`` (and the
    student's own ``modules``), graded with ``seed`` under the course's configuration: the coordinator's key."""
    from graders.checks.identity import program_key
    from graders.checks.static import Submission
    from graders.pipeline.verdicts import salt_for
    salt = salt_for(course.config(confined=True), seed, course.assignments[assignment])
    return program_key(Submission(list(cells), modules), exercise, salt)

