"""The service's one door to the grading engine: the coordinator's ``ClassGrader``, warm between submissions.

The service keeps one ``Workers`` (an executor of graders.course.executors: this
process, a spawned pool, or a Dask client) for its whole life, shared by every
assignment, so each process keeps its ``GradingRun`` -- fork server, reference
templates, timing calibrations -- warm from one submission to the next; and one
``ClassGrader`` per assignment, with the seed the ledger keeps for it.

The same program gets the same verdict: within the service's life the
coordinator grades each distinct program once (graders.course.coordinator), and
before a result is recorded every exercise whose reached code (``program_key``)
already has verdicts kept for this student in the ledger gets those verdicts
back, "fast" included, so resubmitting -- even after a restart -- cannot fish
for a luckier timing.
"""
from __future__ import annotations

import hashlib
import json
from typing import Sequence

from nbformat import NotebookNode

from graders.checks import identity
from graders.checks.static import Submission
from graders.checks.vocabulary import Verdict
from graders.course import coordinator
from graders.course.directory import Course
from graders.course.executors import executor
from graders.course.grade import StudentResult, settle_ungraded
from graders.model.exercise import Assignment
from graders.model.notebook import grade_id_of, submission_cells
from graders.pipeline.precomputed import GradingJob
from graders.pipeline.verdicts import verdict_output

__all__ = ["ClassGrader", "StudentResult", "VerdictCache", "Workers", "program_key", "verdict_salt"]

UNSETTLED = ("could not grade", "time budget ran out")  # an internal error or a late verdict is not kept

Key = tuple[str, str, str]  # (student, exercise, program key)
Verdicts = dict[str, dict]  # part -> {"passed": bool, "message": str}


def program_key(cells: Sequence[tuple[str, str]], exercise: str, salt: str = "") -> str:
    """graders.checks.identity's key of the code ``exercise``'s function reaches in ``cells``: comments, blank
    lines, formatting and docstrings do not count; ``salt`` binds it to the definitions and the seed."""
    return identity.program_key(Submission(list(cells)), exercise, salt)


def verdict_salt(seed: int, definitions: dict[str, str]) -> str:
    """What a kept verdict also depends on: the hidden cases' seed and the course's definitions."""
    text = json.dumps(definitions, sort_keys=True)
    return hashlib.sha256(f"{seed}\0{text}".encode()).hexdigest()


def read_verdict(part: str, outputs: list) -> dict | None:
    """The verdict a grade cell shows (the inverse of ``verdict_output``); None if it shows none."""
    if len(outputs) != 1:
        return None
    out = outputs[0]
    prefix = f"{part}: passed. "
    if out.get("output_type") == "stream" and out.get("text", "").startswith(prefix):
        return {"passed": True, "message": out["text"][len(prefix):].rstrip("\n")}
    if out.get("output_type") == "error":
        return {"passed": False, "message": out.get("evalue", "")}
    return None


def settled(verdicts: Verdicts) -> bool:
    return all(not any(u in v["message"] for u in UNSETTLED) for v in verdicts.values())


class VerdictCache:
    """(student, exercise, program key) -> verdicts: preloaded from the ledger, grown by each grading."""

    def __init__(self, known: dict[Key, Verdicts] | None = None):
        self._known: dict[Key, Verdicts] = dict(known or {})
        self._fresh: list[tuple[str, str, str, Verdicts]] = []

    def get(self, key: Key) -> Verdicts | None:
        return self._known.get(key)

    def put(self, key: Key, verdicts: Verdicts) -> None:
        if key not in self._known:
            self._known[key] = verdicts
            self._fresh.append((*key, verdicts))

    def drain(self) -> list[tuple[str, str, str, Verdicts]]:
        """What was put since the last call: the ledger keeps it."""
        fresh, self._fresh = self._fresh, []
        return fresh


def keep_unchanged(nb: NotebookNode, assignment: Assignment, student: str, cache: VerdictCache,
                   salt: str) -> NotebookNode:
    """Give each exercise whose program has kept verdicts those verdicts; keep the others' new ones."""
    cells = submission_cells(nb, assignment)
    grade_cells: dict[str, dict[str, NotebookNode]] = {}
    for cell in nb.cells:
        found = assignment.part_of(grade_id_of(cell))
        if found and cell.cell_type == "code":
            grade_cells.setdefault(found[0].name, {})[found[1]] = cell
    for ex in assignment.exercises:
        parts = grade_cells.get(ex.name, {})
        key = (student, ex.name, program_key(cells, ex.name, salt))
        kept = cache.get(key)
        if kept is not None and set(kept) == set(parts):
            for part, cell in parts.items():
                cell.outputs = [verdict_output(Verdict(part, kept[part]["passed"], kept[part]["message"]))]
            continue
        seen = {part: read_verdict(part, cell.get("outputs", [])) for part, cell in parts.items()}
        if parts and all(v is not None for v in seen.values()):
            verdicts: Verdicts = {p: v for p, v in seen.items() if v is not None}
            if settled(verdicts):
                cache.put(key, verdicts)
    return nb


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
    the verdicts the ledger kept, by (student, exercise, program key)."""

    def __init__(self, course: Course, assignment: str, *, jobs: int = 1, scheduler: str | None = None,
                 seed: int | None = None, confined: bool = True, workers: Workers | None = None,
                 known: dict[Key, Verdicts] | None = None):
        self.workers = workers or Workers(jobs, scheduler)
        self._own_workers = workers is None
        super().__init__(course, assignment, scheduler=self.workers.scheduler, seed=seed, confined=confined,
                         runner=self.workers.runner)
        self.definitions_of = course.assignments[assignment]
        self.kept = VerdictCache(known)

    def warm(self) -> bool:
        """Grade the course's own solution notebook once, unrecorded, so the first student waits for nothing."""
        source = self.course.root / "source" / self.assignment_name / f"{self.assignment_name}.ipynb"
        if not source.exists():
            return False
        job = GradingJob("(warm-up)", self.assignment_name, self.assignment_name, source.read_text(),
                         self.definitions(), self.expensive, self.config, self.seed, None)
        self.workers.warm(job)
        return True

    def finished(self, job: GradingJob, nb: NotebookNode) -> NotebookNode:
        return keep_unchanged(nb, self.definitions_of, job.student, self.kept,
                              verdict_salt(self.seed, self.definitions()))

    def grade(self, students: list[str], *args, **kwargs) -> list[StudentResult]:
        """Grade and record ``students``' submissions in ``submitted/``; ungraded ones say why (ungraded.csv)."""
        results = super().grade(students, *args, **kwargs)
        settle_ungraded(self.course, self.assignment_name, results)
        return results

    def close(self) -> None:
        super().close()
        if self._own_workers:
            self.workers.close()
