"""The ``local`` executors: this process (``Serial``, ``--jobs 1``) or ``N`` processes of this machine (``Pool``).

A pool's processes are kept for the executor's life, forked from this one when it is safe (``start_method``), so
each keeps its grading run warm (fork server, reference templates, calibrations) from one request to the next.
A process that dies breaks the pool: its unfinished jobs run once more in a fresh one, and a job that breaks the
fresh one too comes back not graded. Requests and outcomes cross the process boundary as JSON data.
"""
from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from graders.engine.executors import Executor, Outcome, lost, results_of
from graders.engine.job import grade, grade_json, release
from graders.engine.request import GradingOutcome, GradingRequest
from graders.sandbox import launch
from graders.sandbox.exits import ProcessExit
from graders.sandbox.session import ForkServer


def open_local(address: str, jobs: int) -> Executor:
    """``local://``: ``jobs`` processes, or this one for a single job."""
    return Pool(jobs) if jobs > 1 else Serial()


def _exit_now() -> None:
    release()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(ProcessExit.OK)


def grading_process() -> None:
    """A pool process's start: its fork server starts at once. When it ends (multiprocessing's own exit steps, on
    either start method), it gives back what grading holds (its fork server and jails stopped, its folders removed:
    ``release``), then ends without the interpreter's teardown of every module, which took 0.8 s with torch loaded
    and kept the coordinator waiting at the end of each run (a forked process already ends that way)."""
    multiprocessing.util.Finalize(None, release, exitpriority=100)
    atexit.register(_exit_now)
    # its fork server (Python with torch and IPython imported: 1-2 s) starts now, as the other processes' do, rather
    # than on the process's first call: the first calls (the preflight, the reference's measurements) then find every
    # server started at once instead of one after another (a server that fails to start is tried again on use). On a
    # thread: the process takes calls meanwhile, and the first that needs the server waits for it (its lock)
    threading.Thread(target=ForkServer.shared().start, name="vecgrade-forkserver-start", daemon=True).start()


def start_method() -> str:
    """``fork`` while this process runs one thread only: the pool's processes then start with every module already
    imported here (2.6 s of imports each with spawn); ``spawn`` once other threads exist (a progress bar, a broken
    pool's replacement mid-run), since a lock one of them holds would stay held forever in the copy."""
    single = threading.active_count() == 1
    return "fork" if single and "fork" in multiprocessing.get_all_start_methods() else "spawn"


def warmed(request: dict) -> int:
    """Grade ``request`` to warm this process up (fork server, reference, calibrations); its outcome is thrown away.
    Returns this process's pid, so a pool can tell which of its processes are warm."""
    grade_json(request)
    return os.getpid()


class Serial:
    """In this process, one job at a time (``vecgrade grade --jobs 1``)."""

    capacity = 1

    def __init__(self):
        self.done: list[Outcome] = []

    @property
    def in_flight(self) -> int:
        return len(self.done)

    def submit(self, request: GradingRequest) -> None:
        self.done.append((request, grade(request)))

    def wait(self) -> list[Outcome]:
        done, self.done = self.done, []
        return done

    def warm(self, request: GradingRequest) -> None:
        grade(request)

    def close(self) -> None:
        pass


class Pool:
    """``n`` processes, kept for the executor's life (see the module's docstring)."""

    def __init__(self, n: int):
        self.n, self.capacity = n, 2 * n  # a job waiting beside each running one: no process idles
        self.pool: ProcessPoolExecutor | None = None
        self.running: dict[Future, tuple[GradingRequest, bool]] = {}  # future -> (request, may it be retried)

    @property
    def in_flight(self) -> int:
        return len(self.running)

    def _pool(self) -> ProcessPoolExecutor:
        if self.pool is None:
            main = sys.modules["__main__"]
            if not hasattr(main, "__spec__"):  # a host that embeds Python (pytest-xdist's execnet) left it out,
                main.__spec__ = None           # and spawn reads it to find the main module: none to import
            context = multiprocessing.get_context(start_method())
            self.pool = ProcessPoolExecutor(self.n, mp_context=context, initializer=grading_process)
        return self.pool

    def start(self) -> None:
        """Start the processes now (forked ones all at once, before this process starts any thread of its own); each
        claims one of the fork servers this process started early, if any (graders.sandbox.launch)."""
        self._pool().submit(os.getpid).result()
        launch.let_go()

    def submit(self, request: GradingRequest, retry: bool = True) -> None:
        self.running[self._pool().submit(grade_json, request.to_json())] = (request, retry)

    def spread(self, fn, calls: list[tuple]) -> list:
        """``fn(*args)`` for each ``args`` of ``calls``, spread over the pool's processes; a call that failed gives
        None. A pool that broke meanwhile is replaced here when no job is in flight, else by ``wait``, which
        reruns those jobs."""
        try:
            futures = [self._pool().submit(fn, *args) for args in calls]
        except BrokenProcessPool:
            if not self.running:
                self.close()
            return [None] * len(calls)
        results = results_of(futures)
        if any(isinstance(future.exception(), BrokenProcessPool) for future in futures) and not self.running:
            self.close()
        return results

    def warm(self, request: GradingRequest, within: float = 120.0) -> None:
        """Grade ``request`` in every process of the pool, so that no first submission finds one cold: a round of
        ``n`` copies may land twice on one process (another was still starting, which takes long on a busy
        machine), so rounds go on until each process has run one, or ``within`` seconds are spent."""
        pool, data = self._pool(), request.to_json()
        seen: set[int] = set()
        deadline = time.monotonic() + within
        while len(seen) < self.n and time.monotonic() < deadline:
            seen |= {future.result() for future in [pool.submit(warmed, data) for _ in range(self.n)]}

    def wait(self) -> list[Outcome]:
        if not self.running:
            return []
        done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        outcomes, broken = [], []
        for future in done:
            request, retry = self.running.pop(future)
            try:
                outcomes.append((request, GradingOutcome.from_json(future.result())))
            except BrokenProcessPool as exc:
                if retry:
                    broken.append(request)
                else:
                    outcomes.append((request, lost(request, f"its grading process died ({exc})")))
            except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
                outcomes.append((request, lost(request, f"grading failed: {type(exc).__name__}: {exc}")))
        if broken:  # the pool is gone with the process: every unfinished job goes to a fresh pool, once
            unfinished = list(self.running.values())
            self.running.clear()
            self.close()
            for request in broken:
                self.submit(request, retry=False)
            for request, retry in unfinished:
                self.submit(request, retry)
        return outcomes

    def close(self) -> None:
        """End the pool. With nothing in flight (a run's end, a broken pool) it waits for its manager thread and
        processes: left behind, that thread was still closing its wake-up pipe when the interpreter exited, and
        concurrent.futures' exit hook wrote into it ("Exception ignored in ... _python_exit ... OSError: [Errno 9]
        Bad file descriptor"). With jobs in flight (an interrupted run) it does not wait for them."""
        if self.pool is not None:
            self.pool.shutdown(wait=not self.running, cancel_futures=True)
            self.pool = None
