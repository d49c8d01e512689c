"""The coordinator of a class's grading: jobs prepared as they are dispatched, one verdict per program, one writer.

``Engine`` holds, for as long as it lives (one ``vecgrade grade`` run, or one assignment in
``vecgrade serve``): the hidden cases' seed, an executor whose processes stay warm (graders.engine.
executors), and one ``VerdictStore`` (graders.model.store) of the verdicts programs earned, by program key
(graders.checks.identity). ``results(students)`` yields one ``SubmissionResult`` per student; a submission
refused, or with any part not graded (graders.model.verdict), is not recorded at all. For each submission it

1. prepares the student's notebooks only when they are about to be dispatched (nbgrader's sanitize steps,
   read-only on the gradebook), so one huge or slow submission never holds the others back;
2. gives each job the verdicts already known for its programs, defers the exercises whose program another
   job is grading now, and lets the job compute the rest: within a run, every distinct program is graded
   once, and two students who wrote the same code get the same verdict, "fast" included;
3. puts the deferred verdicts into the graded notebook when they arrive, and records the student through
   nbgrader's own autograde (``PutBackPrecomputed``): only this process writes the gradebook. nbgrader's
   sanitize steps already ran in step 1, so the recording skips them (the graded notebook replaces what they
   would produce), except for a student one of whose notebooks they refused: nbgrader then runs them and
   says why.

Before its first submission, the pool's processes (or the cluster's workers) measure the reference of every
exercise between them (its calibration and shared time, one exercise per call) and every job carries what
they measured, by machine: each process would otherwise measure every exercise itself before its first
notebook. A process adopts only what was measured on its own machine.
"""
from __future__ import annotations

import secrets
import warnings
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import nbformat
from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy.exc import SAWarning

from graders.checks.identity import program_key
from graders.checks.own_modules import notebook_modules, read_modules
from graders.checks.static import Submission
from graders.checks.submission import restated
from graders.engine import gradebooks
from graders.engine.course import Course
from graders.engine.executors import Executor, executor_for
from graders.engine.job import GradingJob, JobResult
from graders.engine.paths import Step
from graders.engine.record import SubmissionResult, autograde
from graders.engine.startup import BeforeTheFirst
from graders.model.exercise import Assignment
from graders.model.fingerprint import definitions_files, fingerprint
from graders.model.notebook import submission_cells
from graders.model.store import VerdictStore
from graders.model.verdict import Reason, Status, Verdict
from graders.pipeline.intake import Intake
from graders.pipeline.precomputed import PutBackPrecomputed, notebook_key, result_path
from graders.pipeline.refusals import known_notebooks, submission_refusal
from graders.pipeline.verdicts import salt_for, write_verdicts
from graders.sandbox.scratch import Scratch


@dataclass
class Planned:
    """A job and what the coordinator knows of it: its programs' keys, its result once it arrives, and the key of
    the notebook as submitted (what the recording, which skips sanitizing, finds the graded notebook by)."""
    job: GradingJob
    keys: dict[str, str]  # exercise -> program key
    submission: Submission
    submitted_key: str = ""
    result: JobResult | None = None
    resubmitted: bool = False
    verdicts: dict[str, dict[str, Verdict]] = field(default_factory=dict)  # exercise -> its final verdicts


@dataclass
class StudentProgress:
    """One student's notebooks in this call of ``grade``."""
    left: int
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    ungraded: list[tuple[Reason, str]] = field(default_factory=list)  # parts not graded: nothing is then recorded


class Engine(BeforeTheFirst):
    """One assignment's grading, called once (``vecgrade grade``) or again and again (``vecgrade serve``).

    ``executor``: an executor to use instead of one of its own (the service shares one between assignments);
    it is then not closed with the grader.
    """

    def __init__(self, course: Course, assignment: str, *, jobs: int = 1, scheduler: str | None = None,
                 seed: int | None = None, confined: bool = True, executor: Executor | None = None,
                 known: dict[str, dict[str, Verdict]] | None = None):
        warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
        self.course, self.assignment_name, self.confined = course, assignment, confined
        self.config = course.config(confined=confined)
        pipeline = list(self.config.Autograde.autograde_preprocessors)
        cut = next((i for i, step in enumerate(pipeline) if issubclass(step, SaveAutoGrades)), len(pipeline))
        self.expensive, self.recording = pipeline[:cut], pipeline[cut:]
        configured = self.config.TrustedVerdicts.get("seed")
        self.seed = seed if seed is not None else configured if configured is not None else secrets.randbits(48)
        self.scheduler = scheduler
        self.executor = executor or executor_for(jobs, scheduler)
        self._own_executor = executor is None
        if self._own_executor and hasattr(self.executor, "start"):
            self.executor.start()  # a pool's processes start now, forked before any thread of this run exists
        # program key -> {part: Verdict}, for this engine's life: only what was earned; ``known``: what the
        # service's ledger kept (already kept, so not ``fresh``)
        self.verdicts = VerdictStore(known)
        self.verdicts.fresh()
        self._salt: str | None = None  # the salt of every program key (seed, definitions, settings)
        self.gradings: Counter[str] = Counter()  # program key -> how often a job computed its verdicts
        self._definitions: dict[str, str] | None = None
        self._owner: dict[str, Planned] = {}  # program key -> the job computing it now
        self._unsanitized: set[str] = set()  # students one of whose notebooks nbgrader's sanitize steps refused
        self._refused: dict[str, tuple[str, str]] = {}  # refused before grading: why (the teacher's, the student's)
        self._preflight_done = not confined  # unconfined grading (tests, benchmarks) has no jail to probe
        self._known: set[str] | None = None  # the assignment's notebooks in the gradebook, read once per call
        self._assignment: Assignment | None = None  # its definitions, loaded once per version of the files
        self.measured: dict | None = None  # the reference as the pool measured it (GradingJob.measured)
        gradebooks.share()  # the one writer records every student: one engine per gradebook, compiled once
        self._sharing = True

    # -- what jobs carry ------------------------------------------------------------------------------
    def definitions(self) -> dict[str, str]:
        folder = Path(self.config.TrustedVerdicts.get("assignments_dir", self.course.root / "assignments"))
        files = definitions_files(folder) if folder.is_dir() else {}
        if self._definitions is None or fingerprint(files) != fingerprint(self._definitions):  # the course changed
            self._definitions, self._assignment, self.measured, self._salt = files, None, None, None
        return files

    def salt(self) -> str:
        """The salt of this grader's program keys: the same one each grading process computes (``salt_for``)."""
        if self._salt is None:
            self._salt = salt_for(self.config, self.seed, self.assignment())
        return self._salt

    def key(self, submission: Submission, exercise: str) -> str:
        return program_key(submission, exercise, self.salt())

    def assignment(self) -> Assignment:
        """The assignment's definitions, imported once per version of the course's files (``definitions`` forgets
        them when the files change), not once per notebook: importing the course's six modules took 40 ms."""
        if self._assignment is None:
            self._assignment = self.course.assignments[self.assignment_name]
        return self._assignment

    def _prepare(self, student: str, definitions: dict[str, str]) -> list[Planned]:
        """nbgrader's sanitize steps on each of the student's notebooks. A notebook that fails here (unknown
        to the gradebook, say) gets no job: nbgrader's own autograde then meets it and says why."""
        folder = self.course.paths.folder(Step.SUBMITTED, self.assignment_name, student)
        assignment = self.assignment()
        if self._known is None:
            self._known = known_notebooks(self.course.db_url, self.assignment_name) or set()
        refused = Intake(config=self.config).refusal(str(folder), f"{student}/{self.assignment_name}") or \
            submission_refusal(str(self.course.root), str(folder), self._known, self.assignment_name, student)
        if refused:  # refused before any kernel runs (intake caps, an unknown or empty notebook): not graded, and
            self._refused[student] = (str(refused), getattr(refused, "for_student", ""))  # nothing recorded, so
            # earlier marks and files stay
            return []
        planned = []
        modules = read_modules(folder)  # the student's own helpers.py beside the notebooks
        for path in sorted(folder.glob("*.ipynb")):
            resources = {"unique_key": path.stem, "metadata": {"path": str(folder)},
                         "nbgrader": {"student": student, "assignment": self.assignment_name,
                                      "notebook": path.stem, "db_url": self.course.db_url}}
            try:
                nb = nbformat.read(path, as_version=4)
                submitted_key = notebook_key(nb)
                for step in self.config.Autograde.sanitize_preprocessors:
                    nb, resources = step(config=self.config)(nb, resources)
            except Exception:  # noqa: BLE001 - left to nbgrader, which says why
                self._unsanitized.add(student)
                continue
            job = GradingJob(student, self.assignment_name, path.stem, nbformat.writes(nb), definitions,
                             self.expensive, self.config, self.seed, None if self.scheduler else str(folder),
                             modules=modules, measured=self.measured or {})
            # the modules the verdicts will see: the files, and what the notebook writes itself (%%writefile)
            submission = Submission(submission_cells(nb, assignment), notebook_modules(nb, modules))
            keys = {ex.name: self.key(submission, ex.name) for ex in assignment.exercises}
            planned.append(Planned(job, keys, submission, submitted_key))
        return planned

    def _plan(self, p: Planned) -> None:
        """Known verdicts go with the job; a program another job grades now is deferred; the rest it computes."""
        p.job.known, p.job.defer = {}, []
        for name, key in p.keys.items():
            kept = self.verdicts.get(key)
            if kept is not None:
                p.job.known[name] = kept
            elif key in self._owner and self._owner[key] is not p:
                p.job.defer.append(name)
            else:
                self._owner[key] = p

    # -- a call ---------------------------------------------------------------------------------------
    def grade(self, students: list[str], on_start: Callable[[str], None] = lambda student: None,
              on_result: Callable[[SubmissionResult], None] = lambda result: None) -> list[SubmissionResult]:
        """``results`` of ``students``, in their order; ``on_start``/``on_result`` follow each student (a
        progress bar, a log line)."""
        results = []
        for result in self.results(students, on_start):
            on_result(result)
            results.append(result)
        order = {s: i for i, s in enumerate(students)}
        return sorted(results, key=lambda r: order[r.student])

    def results(self, students: list[str],
                on_start: Callable[[str], None] = lambda student: None) -> Iterator[SubmissionResult]:
        """Grade ``students``' submissions (in ``submitted/``) and record each through nbgrader; each student's
        result as soon as it is recorded (or known not graded: then nothing is recorded)."""
        pending: deque[SubmissionResult] = deque()
        self._unsanitized, self._known, self._refused = set(), None, {}
        with Scratch("graded") as self.graded_dir, \
                self.course.api(config=self.record_config(sanitized=True)) as api, \
                self.course.api(config=self.record_config(sanitized=False)) as sanitizing:

            def record(student: str, state: StudentProgress) -> None:
                """Record a student through nbgrader, unless something was not graded: then nothing is written,
                and the earlier marks and files stay (never a 0)."""
                if student in self._refused:
                    why, for_student = self._refused[student]
                    result = SubmissionResult(student, False, state.seconds, why, Reason.REFUSED,
                                              for_student=for_student)
                elif state.errors:
                    result = SubmissionResult(student, False, state.seconds, "; ".join(state.errors), Reason.INTERNAL)
                elif state.ungraded:
                    why = "; ".join(dict.fromkeys(message for _, message in state.ungraded))
                    result = SubmissionResult(student, False, state.seconds, f"not graded: {why}"[:300],
                                           state.ungraded[0][0])
                else:
                    r = autograde(sanitizing if student in self._unsanitized else api, self.assignment_name, student)
                    result = SubmissionResult(student, r.success, state.seconds + r.seconds, r.reason,
                                           None if r.success else Reason.INTERNAL, recorded=True)
                pending.append(result)

            for _ in self._grade(students, record, on_start):
                while pending:
                    yield pending.popleft()
        while pending:
            yield pending.popleft()

    def _grade(self, students: list[str], record: Callable[[str, StudentProgress], None],
               on_start: Callable[[str], None]) -> Iterator[None]:
        """The dispatch loop; yields after each round, so the results recorded in it can go out."""
        definitions = self.definitions()
        if students:
            self.before_the_first(definitions)
        queue: deque[str] = deque(students)
        ready: deque[Planned] = deque()
        progress: dict[str, StudentProgress] = {}
        waiting: list[Planned] = []
        by_job: dict[int, Planned] = {}
        assignment = self.assignment()

        def done(p: Planned, error: str = "") -> None:
            state = progress[p.job.student]
            if error:
                state.errors.append(f"{p.job.notebook_id}.ipynb: {error}"[:300])
            for name, parts in p.verdicts.items():
                for v in parts.values():
                    if v.status is Status.NOT_GRADED:
                        state.ungraded.append((v.reason, f"`{name}`: {v.message}"))
                        break
            state.left -= 1
            if state.left == 0:
                record(p.job.student, state)

        def settle() -> None:
            """Finish every waiting job whose deferred verdicts are known; resubmit one whose owner failed."""
            for p in list(waiting):
                missing = [n for n in p.job.defer if p.keys[n] not in self.verdicts]
                if not missing:
                    waiting.remove(p)
                    assert p.result is not None, "a job waits only once its result is in"
                    nb = nbformat.reads(p.result.notebook, as_version=4)
                    filled = {n: restated(self.verdicts.get(p.keys[n]) or {}, assignment.exercise(n), p.submission)
                              for n in p.job.defer}
                    p.verdicts = {**p.result.results, **filled}
                    write_verdicts(nb, assignment, filled)
                    text = nbformat.writes(nb)
                    for key in {p.job.key, p.submitted_key}:  # found by either: sanitized again, or as submitted
                        path = result_path(self.graded_dir, p.job.student, key)
                        path.parent.mkdir(exist_ok=True)
                        path.write_text(text)
                    done(p)
                elif any(p.keys[n] not in self._owner for n in missing) and not p.resubmitted:
                    waiting.remove(p)  # the job that was computing it failed: this one computes it itself
                    p.resubmitted, p.result = True, None
                    ready.appendleft(p)

        while queue or ready or self.executor.in_flight or waiting:
            while self.executor.in_flight < self.executor.capacity and (ready or queue):
                if not ready:
                    student = queue.popleft()
                    on_start(student)
                    with self.course.inside():
                        jobs = self._prepare(student, definitions)
                    progress[student] = StudentProgress(len(jobs))
                    if not jobs:
                        record(student, progress[student])  # nothing to precompute: nbgrader says why
                    ready.extend(jobs)
                    continue
                p = ready.popleft()
                self._plan(p)
                by_job[id(p.job)] = p
                self.executor.submit(p.job)
            for job, result, seconds, error in self.executor.wait():
                p = by_job.pop(id(job))
                progress[job.student].seconds += seconds
                owned = [k for k, owner in self._owner.items() if owner is p]
                for key in owned:
                    del self._owner[key]
                if result is None:
                    done(p, error)
                else:
                    for name, verdicts in result.verdicts.items():
                        if self.verdicts.put(p.keys[name], verdicts):  # only what the program earned is shared
                            self.gradings[p.keys[name]] += 1
                    p.result = result
                    waiting.append(p)
                settle()
            if not self.executor.in_flight and waiting and not ready and not queue:
                settle()
                if not ready:
                    for p in list(waiting):  # nothing left that could resolve them
                        waiting.remove(p)
                        done(p, "its deferred verdicts never arrived")
            yield

    def warm(self) -> bool:
        """Grade the course's own solution notebook once, unrecorded, on every process of the executor, so the
        first student waits for nothing (the service does this at start)."""
        source = self.course.paths.notebook(Step.SOURCE, self.assignment_name)
        if not source.exists():
            return False
        job = GradingJob("(warm-up)", self.assignment_name, self.assignment_name, source.read_text(),
                         self.definitions(), self.expensive, self.config, self.seed, None)
        self.executor.warm(job)
        return True

    def record_config(self, sanitized: bool = True):
        """nbgrader's autograde with the expensive steps replaced by ``PutBackPrecomputed``; ``sanitized``: the
        coordinator already ran the sanitize steps, so nbgrader skips them."""
        config = self.course.config(confined=self.confined)
        config.Autograde.autograde_preprocessors = [PutBackPrecomputed] + self.recording
        if sanitized:
            config.Autograde.sanitize_preprocessors = []
        config.PutBackPrecomputed.results_dir = self.graded_dir
        return config

    def close(self) -> None:
        if self._own_executor:
            self.executor.close()
        if self._sharing:
            gradebooks.unshare()
            self._sharing = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
