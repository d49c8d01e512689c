"""The coordinator of a class's grading: paths in, requests out, outcomes back, one verdict per program, one writer.

``Engine`` holds, for as long as it lives (one ``vecgrade grade`` run, or one assignment in ``vecgrade serve``): the
hidden cases' seed, an executor whose processes stay warm (graders.engine.executors), and one ``VerdictStore``
(graders.model.store) of the verdicts programs earned, by program key. ``results(students)`` yields one
``SubmissionResult`` per student, as soon as it is known. For each student it

1. makes a ``GradingRequest`` from paths and the run's data (graders.engine.request): the submission's folder,
   the definitions, the release's cells, the settings, the seed, the verdicts settled so far. It reads nothing
   of the submission: the job (graders.engine.job) does, in the student's own process;
2. hands it to the executor; no request waits for another's job;
3. reads the outcome: the settled verdicts the job computed join the store (the next requests carry them, so a
   program is graded once per run after it settled); a program that another job settled meanwhile with another
   verdict (two students with the same code graded at once: the figures of "fast" differ, or even its decision) is
   graded again with the settled verdict, once, so the same program gets the same verdict, figures included; a
   graded outcome is recorded through nbgrader (graders.engine.record), and a
   refused or not graded one is reported with its reason, nothing recorded.

Whatever goes wrong with one student, here or in its job, is that student's result, with a reason: the others
go on. Before its first submission, the executor's processes measure the reference of every exercise between them
(graders.engine.startup) and every request carries what they measured, by machine.
"""
from __future__ import annotations

import dataclasses
import os
import secrets
import warnings
from collections import Counter, deque
from pathlib import Path
from typing import Callable, Iterator

from nbgrader.preprocessors import SaveAutoGrades
from sqlalchemy.exc import SAWarning

from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.engine import gradebooks
from graders.engine.executors import Executor, executor_for
from graders.engine.record import SubmissionResult, autograde
from graders.engine.request import GradingOutcome, GradingRequest, settings_of
from graders.engine.startup import BeforeTheFirst
from graders.model.exercise import Assignment, load_assignment
from graders.model.fingerprint import definitions_files, fingerprint
from graders.model.store import VerdictStore
from graders.model.verdict import Reason, Verdict, settled
from graders.pipeline.intake import graded_path
from graders.pipeline.master import release_cells
from graders.sandbox.scratch import Scratch


def same_verdicts(a: dict[str, Verdict], b: dict[str, Verdict]) -> bool:
    """The same decision and the same measured figures, part by part (a message may say a static finding again at
    another student's own cells and lines: graders.checks.submission.restated)."""
    return a.keys() == b.keys() and all((a[p].status, a[p].reason, a[p].figures) ==
                                        (b[p].status, b[p].reason, b[p].figures) for p in a)


class Engine(BeforeTheFirst):
    """One assignment's grading, called once (``vecgrade grade``) or again and again (``vecgrade serve``).

    ``scheduler``: the executor's address (graders.engine.executors; None: ``jobs`` local processes);
    ``executor``: an executor to use instead of one of its own (the service shares one between assignments); it
    is then not closed with the grader; ``known``: settled verdicts by program key (the service's ledger).
    """

    def __init__(self, course: Course, assignment: str, *, jobs: int = 1, scheduler: str | None = None,
                 seed: int | None = None, confined: bool = True, executor: Executor | None = None,
                 known: dict[str, dict[str, Verdict]] | None = None):
        warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader 0.9.6's own session bookkeeping
        self.course, self.assignment_name, self.confined = course, assignment, confined
        self.config = course.config(confined=confined)
        pipeline = list(self.config.Autograde.autograde_preprocessors)
        cut = next((i for i, step in enumerate(pipeline) if issubclass(step, SaveAutoGrades)), len(pipeline))
        self.recording = pipeline[cut:]  # nbgrader's steps once a notebook is graded: scores, late penalty, checks
        configured = self.config.TrustedVerdicts.get("seed")
        self.seed = seed if seed is not None else configured if configured is not None else secrets.randbits(48)
        self.executor = executor or executor_for(scheduler, jobs)
        self._own_executor = executor is None
        if self._own_executor and hasattr(self.executor, "start"):
            self.executor.start()  # a pool's processes start now, forked before any thread of this run exists
        # program key -> {part: Verdict}, for this engine's life: only what was earned; ``known``: what the
        # service's ledger kept (already kept, so not ``fresh``)
        self.verdicts = VerdictStore(known)
        self.verdicts.fresh()
        self.gradings: Counter[str] = Counter()  # program key -> how often a job computed its verdicts (more than once
        # only for jobs dispatched before it settled)
        self._definitions: dict[str, str] | None = None
        self._assignment: Assignment | None = None  # its definitions, loaded once per version of the files
        self._settings = settings_of(self.config)
        self._master: dict = {}  # the release's cells, read from the gradebook once per call
        self._preflight_done = not confined  # unconfined grading (tests, benchmarks) has no jail to probe
        self.measured: dict | None = None  # the reference as the executor's processes measured it, by machine
        gradebooks.share()  # the one writer records every student: one engine per gradebook, compiled once
        self._sharing = True

    # -- what requests carry --------------------------------------------------------------------------
    def _definitions_folder(self) -> Path:
        return Path(self.config.TrustedVerdicts.get("assignments_dir", self.course.root / "assignments"))

    def definitions(self) -> dict[str, str]:
        folder = self._definitions_folder()
        files = definitions_files(folder) if folder.is_dir() else {}
        if self._definitions is None or fingerprint(files) != fingerprint(self._definitions):  # the course changed
            self._definitions, self._assignment, self.measured = files, None, None
        return files

    def assignment(self) -> Assignment:
        """The assignment's definitions, imported once per version of the course's files (``definitions`` forgets
        them when the files change), for the reference's measurements: its own module only (the course's six took
        0.8 s to import)."""
        if self._assignment is None:
            self._assignment = load_assignment(self._definitions_folder() / f"{self.assignment_name}.py")
        return self._assignment

    def request_for(self, student: str) -> GradingRequest:
        """The request of ``student``'s submission: its folder's path and the run's data (nothing read of it)."""
        folder = self.course.paths.folder(Step.SUBMITTED, self.assignment_name, student)
        return GradingRequest(student, self.assignment_name, self.definitions(), self._settings, self.seed,
                              self._master, str(folder), known=self.verdicts.as_dict(), measured=self.measured or {},
                              shown=os.path.relpath(folder, self.course.root) + os.sep)

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
        """Grade ``students``' submissions (in ``submitted/``) and record each graded one through nbgrader; each
        student's result as soon as it is known (see the module's docstring)."""
        definitions = self.definitions()
        if not students:
            return
        self.before_the_first(definitions)
        self._master = release_cells(self.course.db_url, self.assignment_name)
        again: set[str] = set()  # students graded a second time with a verdict another job settled
        queue: deque[str] = deque(students)
        with Scratch("graded") as graded_dir, self.course.api(config=self.record_config(graded_dir)) as api:
            while queue or self.executor.in_flight:
                while queue and self.executor.in_flight < self.executor.capacity:
                    student = queue.popleft()
                    on_start(student)
                    try:
                        self.executor.submit(self.request_for(student))
                    except Exception as exc:  # noqa: BLE001 - this student's, never the batch's
                        yield SubmissionResult(student, False, 0.0, f"could not be handed to grading: "
                                               f"{type(exc).__name__}: {exc}"[:300], Reason.INTERNAL)
                for request, outcome in self.executor.wait():
                    try:
                        result = self._settle(request, outcome, api, graded_dir, again)
                    except Exception as exc:  # noqa: BLE001 - this student's, never the batch's
                        result = SubmissionResult(request.student, False, outcome.seconds.get("total", 0.0),
                                                  f"recording failed: {type(exc).__name__}: {exc}"[:300],
                                                  Reason.INTERNAL)
                    if result is not None:
                        yield result

    def _settle(self, request: GradingRequest, outcome: GradingOutcome, api, graded_dir: str,
                again: set[str]) -> SubmissionResult | None:
        """The store learns what the job settled; the outcome is recorded, reported, or (a program settled
        differently meanwhile) graded again with the settled verdict; None while it is being graded again."""
        differs = False
        for name, key in outcome.keys.items():
            verdicts = outcome.verdicts.get(name)
            if verdicts is None or not settled(verdicts):
                continue
            if name in outcome.computed:
                self.gradings[key] += 1
            kept = self.verdicts.get(key)
            if kept is None:  # computed by this job, or by its process for another job whose outcome is to come
                self.verdicts.put(key, verdicts)
            elif not same_verdicts(kept, verdicts):
                differs = True  # settled meanwhile by another job, with other figures or another decision
        if differs and request.student not in again:
            again.add(request.student)
            self.executor.submit(dataclasses.replace(request, known=self.verdicts.as_dict()))
            return None
        seconds = outcome.seconds.get("total", 0.0)
        if not outcome.graded:
            return SubmissionResult(request.student, False, seconds, outcome.message, outcome.reason,
                                    for_student=outcome.for_student)
        for notebook, text in outcome.notebooks.items():
            path = graded_path(graded_dir, request.student, notebook)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        recorded = autograde(api, self.assignment_name, request.student)
        recorded.seconds += seconds
        return recorded

    def warm(self) -> bool:
        """Grade the course's own solution notebook once, unrecorded, on every process of the executor, so the
        first student waits for nothing (the service does this at start)."""
        folder = self.course.paths.folder(Step.SOURCE, self.assignment_name)
        if not self.course.paths.notebook(Step.SOURCE, self.assignment_name).exists():
            return False
        master = self._master or release_cells(self.course.db_url, self.assignment_name)
        request = GradingRequest("(warm-up)", self.assignment_name, self.definitions(), self._settings, self.seed,
                                 master, str(folder), warm_up=True)
        self.executor.warm(request)
        return True

    def record_config(self, graded_dir: str):
        """nbgrader's autograde as the recording of what the jobs graded: no sanitize pass, and of the pipeline
        only the steps from ``SaveAutoGrades`` on (graders.pipeline.intake.SafeAutograde.graded_dir)."""
        config = self.course.config(confined=self.confined)
        config.Autograde.autograde_preprocessors = self.recording
        config.Autograde.sanitize_preprocessors = []
        config.SafeAutograde.graded_dir = str(graded_dir)
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
