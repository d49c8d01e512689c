"""The service's one door to the grading engine: the coordinator's ``ClassGrader``, warm between submissions.

The service keeps one ``Workers`` (an executor of graders.course.executors: this
process, a spawned pool, or a Dask client) for its whole life, shared by every
assignment, so each process keeps its ``GradingRun`` -- fork server, reference
templates, timing calibrations -- warm from one submission to the next; and one
``ClassGrader`` per assignment, with the seed the ledger keeps for it.

The same program gets the same verdict: the coordinator's one ``VerdictStore``
(graders.model.store), preloaded from the ledger, holds the verdicts each
distinct program earned under its program key (the reached code, the student's
own modules, the seed, the definitions' fingerprint and the grading settings),
and every job is given the verdicts known for its programs, "fast" included, so
resubmitting -- even after a restart -- cannot fish for a luckier timing. Only
settled verdicts (passed or failed from a clean observation) are kept: a
disrupted grading is graded again, never kept.
"""
from __future__ import annotations

from graders.course import coordinator
from graders.course.directory import Course
from graders.course.executors import executor
from graders.course.grade import StudentResult, settle_ungraded
from graders.model.store import Verdicts, VerdictStore
from graders.pipeline.precomputed import GradingJob

__all__ = ["ClassGrader", "StudentResult", "Workers", "kept_key"]


def kept_key(course: Course, assignment: str, seed: int, cells, exercise: str,
             modules: dict[str, str] | None = None) -> str:
    """The program key the service keeps ``exercise``'s verdicts under for the notebook code ``cells`` (and the
    student's own ``modules``), graded with ``seed`` under the course's configuration: the coordinator's key."""
    from graders.checks.identity import program_key
    from graders.checks.static import Submission
    from graders.pipeline.verdicts import salt_for
    salt = salt_for(course.config(confined=True), seed, course.assignments[assignment])
    return program_key(Submission(list(cells), modules), exercise, salt)


class Workers:
    """The processes that run the expensive steps, shared by every assignment and kept for the service's life:
    this process (``jobs=1``), a spawned pool of ``jobs``, or a Dask cluster."""

    def __init__(self, jobs: int = 1, scheduler: str | None = None):
        self.jobs, self.scheduler = jobs, scheduler
        self.runner = executor(jobs, scheduler)

    @property
    def batch(self) -> int:
        """Submissions worth grading at once: one per process (a Dask cluster's size is its own business)."""
        return self.jobs

    def warm(self, job: GradingJob) -> None:
        """Start every process's grading run on ``job`` (its result is thrown away), keeping the processes."""
        self.runner.warm(job)

    def close(self) -> None:
        self.runner.close()


class ClassGrader(coordinator.ClassGrader):
    """One assignment's grading run in the service: one seed for its lifetime, called again and again; ``known``:
    the verdicts the ledger kept, by program key."""

    def __init__(self, course: Course, assignment: str, *, jobs: int = 1, scheduler: str | None = None,
                 seed: int | None = None, confined: bool = True, workers: Workers | None = None,
                 known: dict[str, Verdicts] | None = None):
        self.workers = workers or Workers(jobs, scheduler)
        self._own_workers = workers is None
        super().__init__(course, assignment, scheduler=self.workers.scheduler, seed=seed, confined=confined,
                         runner=self.workers.runner)
        self.verdicts = VerdictStore(known)  # what the ledger kept: settled verdicts only
        self.verdicts.fresh()  # those are kept already

    def warm(self) -> bool:
        """Grade the course's own solution notebook once, unrecorded, so the first student waits for nothing."""
        source = self.course.root / "source" / self.assignment_name / f"{self.assignment_name}.ipynb"
        if not source.exists():
            return False
        job = GradingJob("(warm-up)", self.assignment_name, self.assignment_name, source.read_text(),
                         self.definitions(), self.expensive, self.config, self.seed, None)
        self.workers.warm(job)
        return True

    def grade(self, students: list[str], *args, **kwargs) -> list[StudentResult]:
        """Grade and record ``students``' submissions in ``submitted/``; ungraded ones say why (ungraded.csv)."""
        results = super().grade(students, *args, **kwargs)
        settle_ungraded(self.course, self.assignment_name, results)
        return results

    def close(self) -> None:
        super().close()
        if self._own_workers:
            self.workers.close()
