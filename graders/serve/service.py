"""``vecgrade serve``: poll the inbound folder, admit each new entry, grade what is due, release its feedback.

One loop, one writer. Each pass: admit new inbound entries (``Admission``:
checked, staged, queued or refused), decide per student and assignment what is
due (``limiter``), then per assignment collect the due submissions, grade them
on the assignment's warm ``Engine`` and release each one's feedback, all
while holding the gradebook lock. Every state is in the ledger before its step
begins, so SIGKILL at any point and a restart converge: an entry left
``grading`` is done again (collect, autograde and feedback are idempotent and
the gradebook holds one submission per student), at most ``Serve.max_attempts``
times. SIGTERM lets the batch under way finish and be released; a second SIGTERM
or Ctrl-C stops at once.
"""
from __future__ import annotations

import fcntl
import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from nbgrader.coursedir import CourseDirectory

from graders.course.grade import settle_ungraded
from graders.course.lock import gradebook_lock
from graders.coursedir.course import Course
from graders.engine.coordinator import Engine
from graders.engine.executors import Executor, executor_for
from graders.model.errors import VecgradeError
from graders.model.inert import inert
from graders.pipeline.intake import Intake
from graders.pipeline.safecopy import Caps
from graders.sandbox.scratch import Scratch, sweep
from graders.serve import pages
from graders.serve.admission import Admission
from graders.serve.ledger import GRADED, GRADING, QUEUED, REFUSED, SUPERSEDED, Entry, Ledger, ledger_url
from graders.serve.limiter import decide
from graders.serve.logline import log, outcome_line
from graders.serve.settings import Serve
from graders.serve.steps import StepFailed, collect, exchange_course, feedback, score

SERVICE_LOCK = ".vecgrade-serve.lock"


class AlreadyServing(VecgradeError, RuntimeError):
    pass


@contextmanager
def serving(course: Course) -> Iterator[None]:
    """One service per course: a second one would grade each submission twice."""
    path = course.root / SERVICE_LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyServing(f"vecgrade serve is already running for {course.root} "
                                 f"({path.read_text().strip() or 'another process'})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


class Service:
    def __init__(self, course: Course, assignments: list[str] | None = None, jobs: int = 1,
                 scheduler: str | None = None, clock: Callable[[], float] = time.time):
        self.course, self.clock = course, clock
        self.config = course.config()
        self.settings = Serve(config=self.config)
        self.served = assignments or list(course.assignments)
        self.tz = self.config.Exchange.get("timezone", "UTC")
        self.exchange = exchange_course(self.config)
        self.ledger = Ledger(ledger_url(course))
        self.executor: Executor = executor_for(scheduler, jobs)  # for the service's life, every assignment's
        self.batch = jobs  # submissions worth grading at once: one per process (a Dask cluster's size is its own)
        self.graders: dict[str, Engine] = {}
        # <tmp>/vecgrade-serve-<pid.start>-<random>, 0700: only this service reads it; removed when the service
        # stops, and by the next run when the service was killed (graders.sandbox.scratch: its owner has ended)
        self._staging = Scratch("serve")
        self.staging = Path(self._staging.name)
        intake = Intake(config=self.config)  # the caps grading applies, applied before anything is copied
        caps = Caps(max_bytes=min(CourseDirectory(config=self.config).max_dir_size * 1000, intake.max_bytes),
                    max_files=intake.max_files, max_cells=intake.max_cells)
        self.admission = Admission(course, self.ledger, self.exchange, self.staging, self.served,
                                   self.settings.check_owner, self.settings.after_due, caps, self.tz, clock,
                                   self.settings.max_pending, self.batch)
        self.stopping = False
        self.idle = True  # polling, or waiting for the gradebook lock: a SIGTERM has nothing to wait for

    # --- life cycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Take up what a previous run left unfinished, then warm each released assignment's grader."""
        for found in sweep():  # a killed service's staged copies (and any grading process's folders) go now
            log.info("removed %s, left by a process that was killed", found)
        for e in self.ledger.select(self.served, [GRADING]):
            self._again_or_refuse(e, "the service stopped during it")
        if self.served:  # a jail runs torch under the configured limits, or the service refuses to start
            self.grader(self.served[0]).preflight()
        for assignment in self.served:
            if (self.exchange / "outbound" / assignment).is_dir():
                start = time.perf_counter()
                if self.grader(assignment).warm():
                    log.info("%s: grader warm in %.1f s (seed %d)", assignment, time.perf_counter() - start,
                             self.grader(assignment).seed)

    def grader(self, assignment: str) -> Engine:
        if assignment not in self.graders:
            fixed = self.config.TrustedVerdicts.get("seed")
            seed = self.ledger.seed(assignment, fixed if isinstance(fixed, int) else None)
            self.graders[assignment] = Engine(self.course, assignment, seed=seed, executor=self.executor,
                                                   known=self.ledger.verdicts(assignment))
        return self.graders[assignment]

    def close(self) -> None:
        for grader in self.graders.values():
            grader.close()
        self.executor.close()
        self.ledger.close()
        self._staging.cleanup()

    def run(self) -> None:
        """Serve until SIGTERM or Ctrl-C. SIGTERM lets the grading under way finish and be released (a
        second SIGTERM, like Ctrl-C, stops at once); the ledger is consistent whichever way it stops."""
        owner = os.getpid()

        def terminate(signum, frame):
            if os.getpid() != owner:  # a worker forked from this process, signalled with its group: the service
                return                # stops its workers itself (a KeyboardInterrupt there was a traceback each)
            if self.stopping or self.idle:
                raise KeyboardInterrupt(f"signal {signum}")
            self.stopping = True
            log.info("stopping after the grading under way (SIGTERM again stops at once)")

        previous = signal.signal(signal.SIGTERM, terminate)
        try:
            self.start()
            log.info("serving %s from %s (poll every %g s, min_interval %g s, check_owner %s, after_due %s)",
                     ", ".join(self.served), self.exchange / "inbound", self.settings.poll_interval,
                     self.settings.min_interval, self.settings.check_owner, self.settings.after_due)
            while not self.stopping:
                self.idle = False
                try:
                    graded = self.step()
                except Exception as exc:  # noqa: BLE001 - one pass failed (the ledger, the disk): logged, tried again
                    log.exception("a pass of the service failed (%s); trying again", inert(exc))
                    graded = False
                self.idle = True
                if not graded and not self.stopping:
                    time.sleep(self.settings.poll_interval)
        except KeyboardInterrupt:
            log.info("stopping")
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.close()
            log.info("stopped")

    # --- one pass --------------------------------------------------------------------------------------

    def step(self) -> bool:
        """Admit, decide, grade one batch (the oldest due submissions of one assignment, as many as there
        are workers, so each is released as soon as it is graded); True when it graded (poll again at once)."""
        self.admission.admit_new()
        due: list[Entry] = []
        now = self.clock()
        queued = self.ledger.select(self.served, [QUEUED])
        groups: dict[tuple[str, str], list[Entry]] = {}
        for e in queued:
            groups.setdefault((e.student, e.assignment), []).append(e)
        for (student, assignment), pending in groups.items():
            last = self.ledger.last_graded(student, assignment)
            decision = decide(pending, last.started_at if last else None, self.settings.min_interval, now)
            for e in decision.superseded:
                assert decision.ready is not None
                self._finish_ungraded(e, SUPERSEDED, f"not graded: your later submission ({decision.ready.timestamp})"
                                      " was graded instead; only the latest one in a grading window is graded")
            for e in decision.waiting:
                if e.not_before != decision.opens:  # the page first, then the record that it is out
                    self.admission.page_for(e, "Waiting for your grading window",
                                            f"received; it will be graded at {pages.when(decision.opens, self.tz)}, "
                                            f"when your next grading window opens (one grading per "
                                            f"{pages.every(self.settings.min_interval)}); if you submit again "
                                            "before then, only your latest submission is graded")
                    self.ledger.set(e.entry, not_before=decision.opens)
            if decision.ready is not None:
                due.append(decision.ready)
        if not due:
            return False
        due.sort(key=lambda e: (e.seen_at, e.entry))
        assignment = due[0].assignment
        batch = [e for e in due if e.assignment == assignment][:self.batch]
        self._grade_apart(assignment, batch)
        return True

    def _grade_apart(self, assignment: str, batch: list[Entry]) -> None:
        """``grade`` the batch; if that fails (a failure of the service itself, never a submission's: the engine
        reports those per student), each entry is graded again on its own, so no classmate is refused for
        another's failure; one that fails alone is tried again later (``_again_or_refuse``)."""
        try:
            self.grade(assignment, batch)
            return
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.exception("%s: grading %s failed: %s", inert(assignment), inert(", ".join(e.student for e in batch)),
                          inert(exc))
            if len(batch) == 1:
                self._again_or_refuse(self.ledger.get(batch[0].entry), f"{type(exc).__name__}: {exc}")
                time.sleep(self.settings.poll_interval)
                return
        for e in batch:
            if self.ledger.get(e.entry).state == GRADING:  # not finished before the failure
                self._grade_apart(assignment, [e])

    def grade(self, assignment: str, batch: list[Entry]) -> None:
        """Collect, grade and release ``batch`` while holding the gradebook lock (waiting for it counts as
        idle: a SIGTERM then stops at once, and nothing of the batch has begun)."""
        grader = self.grader(assignment)
        self.idle = True
        with gradebook_lock(self.course, "vecgrade serve", waiting=lambda who: log.info(
                "%s: waiting for the gradebook, held by %s", assignment, who)):
            self.idle = False
            for e in batch:
                self.ledger.start(e.entry)
            with self.course.api() as api:
                collected = [e for e in batch if self._collect(api, e)]
                results = grader.grade([e.student for e in collected]) if collected else []
                settle_ungraded(self.course, assignment, results)
                self._keep_verdicts(grader, assignment, {e.student: e.entry for e in collected})
                for e, result in zip(collected, results, strict=True):
                    if result.success:
                        self._release(api, self.ledger.get(e.entry))
                    else:  # the teacher's words in the ledger and the log, the student's on the page
                        self._refuse(e, result.reason, result.for_student)

    def _collect(self, api, e: Entry) -> bool:
        try:
            staged_root, staged = self.admission.staged(e)
            collect(api, self.course, staged_root, staged, e.assignment, e.student)
            return True
        except (StepFailed, self.admission.Refused) as exc:
            self._refuse(e, str(exc))
            return False

    def _keep_verdicts(self, grader: Engine, assignment: str, entry_of: dict[str, str]) -> None:
        """The ledger keeps every settled verdict this batch earned (graders.model.store), for after a restart."""
        fresh = grader.verdicts.fresh()
        if fresh and entry_of:
            student, entry = next(iter(entry_of.items()))
            self.ledger.keep_verdicts(assignment, entry, student, fresh)

    def _release(self, api, e: Entry) -> None:
        """nbgrader's feedback for a graded submission, with when the next grading can happen on top."""
        began, interval = e.started_at or self.clock(), self.settings.min_interval
        nxt = (f"Your next submission of {e.assignment} can be graded from {pages.when(began + interval, self.tz)} "
               f"(one grading per {pages.every(interval)})" if interval > 0 else
               f"Your next submission of {e.assignment} is graded when it arrives")
        line = (f"Graded on submit at {pages.when(began, self.tz)}. {nxt}; an exercise whose code is unchanged "
                "keeps its verdicts. Your teacher's grading after the due date is the grade of record.")
        reason = ""
        try:
            feedback(api, self.course, e.assignment, e.student, line)
        except StepFailed as exc:
            reason = str(exc)
            self.admission.page_for(e, "Graded, feedback unavailable", f"graded, but {reason}")
        got, out_of = score(self.course, e.assignment, e.student)
        self.ledger.finish(e.entry, GRADED, reason, got, out_of)
        self.admission.discard(e.entry)
        self._log(self.ledger.get(e.entry))

    # --- outcomes --------------------------------------------------------------------------------------

    def _again_or_refuse(self, e: Entry, why: str) -> None:
        """An unfinished grading is done again, up to ``Serve.max_attempts`` attempts in all."""
        if e.state != GRADING:
            return
        if e.attempts >= self.settings.max_attempts:
            self._refuse(e, f"grading was interrupted {e.attempts} times ({why})")
        else:
            self.ledger.set(e.entry, state=QUEUED)
            log.info("%s %s: taken up again after an interrupted grading (%s; %s)", inert(e.student),
                     inert(e.assignment), inert(why), inert(e.entry))

    def _refuse(self, e: Entry, reason: str, for_student: str = "") -> None:
        self._finish_ungraded(e, REFUSED, reason, for_student)

    def _finish_ungraded(self, e: Entry, state: str, reason: str, for_student: str = "") -> None:
        """The page first (``for_student``: its wording, when ``reason`` is the teacher's), then the record: a crash
        between them does the entry again, page and all. The staged copy goes with the entry."""
        title = "Not graded" if state == REFUSED else "Superseded"
        shown = for_student or reason
        self.admission.page_for(e, title, shown if state != REFUSED else f"not graded: {shown}")
        self.ledger.finish(e.entry, state, reason)
        self.admission.discard(e.entry)
        self._log(self.ledger.get(e.entry))

    def _log(self, e: Entry) -> None:
        log.info(outcome_line(e))
