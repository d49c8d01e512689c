"""The service's one door to the grading engine: a ``ClassGrader`` that stays warm between submissions.

This is a thin adapter with the interface of the persistent coordinator that
``graders/course/grade.py`` is getting (``ClassGrader(course, assignment, jobs=,
scheduler=, seed=)``, ``.seed``, ``.grade(students)``, ``.verdicts``, ``.close()``),
built on today's pieces of ``grade.py``: nbgrader's sanitize steps, the
expensive steps as a pure function (``execute_and_judge``) on local processes
or Dask, and nbgrader's own autograde recording the result (``PutBackPrecomputed``).
Unlike ``grade_class``, the processes (a spawned pool, or a Dask client) live as
long as the service, so each keeps its ``GradingRun`` -- fork server, reference
workers, timing calibrations -- warm from one submission to the next. Every call
from the service to the engine goes through this module; when the coordinator
lands, this file shrinks to an import.

The same program gets the same verdict: before a result is recorded, every
exercise whose reached code (``program_key``) already has verdicts kept for
this student gets those verdicts back, "fast" included, so resubmitting cannot
fish for a luckier timing.
"""
from __future__ import annotations

import ast
import hashlib
import json
import multiprocessing
import shutil
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Iterator, Sequence

import nbformat
from nbformat import NotebookNode
from nbformat.validator import MissingIDFieldWarning
from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy.exc import SAWarning

from graders.checks.parts import Verdict
from graders.checks.static import Submission
from graders.course.directory import Course

# the batch's own steps, reused as they are until the persistent coordinator replaces this adapter
from graders.course.grade import (
    Outcome,
    StudentResult,
    _autograde,
    _drop_ungraded_rows,
    _run_dask,
    _run_here,
    _sanitized_jobs,
    _timed,
    record_ungraded,
)
from graders.model.exercise import Assignment
from graders.model.notebook import grade_id_of, submission_cells
from graders.pipeline.precomputed import GradingJob, PutBackPrecomputed, definitions_files
from graders.pipeline.verdicts import verdict_output

__all__ = ["ClassGrader", "StudentResult", "VerdictCache", "Workers", "program_key", "verdict_salt"]

UNSETTLED = ("could not grade", "time budget ran out")  # an internal error or a late verdict is not kept

Key = tuple[str, str, str]  # (student, exercise, program key)
Verdicts = dict[str, dict]  # part -> {"passed": bool, "message": str}


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return tree


def program_key(cells: Sequence[tuple[str, str]], exercise: str, salt: str = "") -> str:
    """A hash of the code ``exercise``'s function reaches (``program_for``), normalized: comments, blank
    lines, formatting and docstrings do not count; ``salt`` binds it to the definitions and the seed."""
    source = "\n".join(text for _, text in Submission(cells).program_for(exercise))
    try:
        source = ast.unparse(_strip_docstrings(ast.parse(source)))
    except SyntaxError:
        pass
    return hashlib.sha256(f"{salt}\0{exercise}\0{source}".encode()).hexdigest()[:32]


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
        self._pool: ProcessPoolExecutor | None = None

    @property
    def batch(self) -> int:
        """Submissions worth grading at once: one per process (a Dask cluster's size is its own business)."""
        return self.jobs

    def _fresh_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def run(self, jobs: list[GradingJob]) -> Iterator[Outcome]:
        if self.scheduler:
            yield from _run_dask(jobs, self.scheduler)
        elif self.jobs > 1:
            yield from self._run_pool(jobs, retry=True)
        else:
            yield from _run_here(jobs)

    def _run_pool(self, jobs: list[GradingJob], retry: bool) -> Iterator[Outcome]:
        """A process that dies breaks the pool: a fresh one takes its unfinished jobs, once."""
        pool = self._fresh_pool()
        futures = {pool.submit(_timed, job): job for job in jobs}
        broken, died = [], False
        for future in as_completed(futures):
            try:
                graded, seconds = future.result()
                yield futures[future], graded, seconds, ""
            except BrokenProcessPool as exc:
                died = True
                if retry:
                    broken.append(futures[future])
                else:
                    yield futures[future], None, 0.0, f"its grading process died ({exc})"
            except Exception as exc:  # noqa: BLE001 - one bad submission never stops the service
                yield futures[future], None, 0.0, f"grading failed: {type(exc).__name__}: {exc}"
        if died:
            self._close_pool()
        if broken:
            yield from self._run_pool(broken, retry=False)

    def warm(self, job: GradingJob) -> None:
        """Start every process's grading run on ``job`` (its result is thrown away)."""
        copies = [job] * (self.jobs if self.jobs > 1 and not self.scheduler else 1)
        for _ in self.run(copies):
            pass

    def _close_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def close(self) -> None:
        self._close_pool()


class ClassGrader:
    """One assignment's grading run: one seed for its lifetime, called again and again."""

    def __init__(self, course: Course, assignment: str, *, jobs: int = 1, scheduler: str | None = None,
                 seed: int | None = None, confined: bool = True, console=None, workers: Workers | None = None,
                 known: dict[Key, Verdicts] | None = None):
        warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
        warnings.filterwarnings("ignore", category=MissingIDFieldWarning)  # students' notebooks, nbgrader fixes them
        self.course, self.assignment, self.confined = course, assignment, confined
        self.definitions_of = course.assignments[assignment]
        self.config = course.config(confined=confined)
        configured = self.config.TrustedVerdicts.get("seed")
        self.seed: int = seed if seed is not None else configured if configured is not None else 0
        pipeline = list(self.config.Autograde.autograde_preprocessors)
        cut = next((i for i, s in enumerate(pipeline) if issubclass(s, SaveAutoGrades)), len(pipeline))
        self.expensive, self.recording = pipeline[:cut], pipeline[cut:]
        self.workers = workers or Workers(jobs, scheduler)
        self._own_workers = workers is None
        self.verdicts = VerdictCache(known)
        self._results = Path(tempfile.mkdtemp(prefix="vecgrade-serve-graded-"))

    def _definitions(self) -> dict[str, str]:
        folder = Path(self.config.TrustedVerdicts.get("assignments_dir", self.course.root / "assignments"))
        return definitions_files(folder) if folder.is_dir() else {}

    def warm(self) -> bool:
        """Grade the course's own solution notebook once, unrecorded, so the first student waits for nothing."""
        source = self.course.root / "source" / self.assignment / f"{self.assignment}.ipynb"
        if not source.exists():
            return False
        job = GradingJob("(warm-up)", self.assignment, self.assignment, source.read_text(), self._definitions(),
                         self.expensive, self.config, self.seed, None)
        self.workers.warm(job)
        return True

    def grade(self, students: list[str]) -> list[StudentResult]:
        """Grade and record ``students``' submissions in ``submitted/``; ungraded ones say why (ungraded.csv)."""
        definitions = self._definitions()
        salt = verdict_salt(self.seed, definitions)
        with self.course.api(confined=self.confined):
            work = {s: _sanitized_jobs(self.course, self.config, self.assignment, s, self.expensive, self.seed,
                                       definitions) for s in students}
        if self.workers.scheduler:
            for job in (j for js in work.values() for j in js):
                job.path = None  # a Dask worker may be on another machine
        record_config = self.course.config(confined=self.confined)
        record_config.Autograde.autograde_preprocessors = [PutBackPrecomputed] + self.recording
        record_config.PutBackPrecomputed.results_dir = str(self._results)
        errors: dict[str, list[str]] = {s: [] for s in students}
        seconds = {s: 0.0 for s in students}
        remaining = {s: len(js) for s, js in work.items()}
        results: list[StudentResult] = []
        with self.course.api(config=record_config) as api:
            def record(student: str) -> None:
                if errors[student]:
                    results.append(StudentResult(student, False, seconds[student], "; ".join(errors[student])))
                else:
                    r = _autograde(api, self.assignment, student)
                    results.append(StudentResult(student, r.success, seconds[student] + r.seconds, r.reason))

            for student in [s for s, n in remaining.items() if n == 0]:
                record(student)  # nothing to precompute: nbgrader says why
            for job, graded, secs, error in self.workers.run([j for js in work.values() for j in js]):
                seconds[job.student] += secs
                if graded is None:
                    errors[job.student].append(f"{job.notebook_id}.ipynb: {error}"[:300])
                else:
                    nb = keep_unchanged(nbformat.reads(graded, as_version=4), self.definitions_of, job.student,
                                        self.verdicts, salt)
                    nbformat.write(nb, self._results / f"{job.key}.ipynb")
                remaining[job.student] -= 1
                if remaining[job.student] == 0:
                    record(job.student)
        for path in self._results.glob("*.ipynb"):
            path.unlink()
        record_ungraded(self.course, self.assignment, results)
        _drop_ungraded_rows(self.course, self.assignment, [r.student for r in results if not r.success])
        order = {s: i for i, s in enumerate(students)}
        return sorted(results, key=lambda r: order[r.student])

    def close(self) -> None:
        if self._own_workers:
            self.workers.close()
        shutil.rmtree(self._results, ignore_errors=True)
