"""Where a submission's expensive steps run: in this process, in N local processes, or on a Dask cluster.

Each executor lives as long as the coordinator that holds it (a whole ``vecgrade grade`` run, or one
assignment in ``vecgrade serve``), so its processes stay warm from one notebook to the next: a grading
process keeps one ``GradingRun`` per seed (its fork server, the reference's templates, the calibrations),
and a Dask worker keeps it across tasks. ``submit`` takes one job; ``wait`` returns what has finished.
Every kind is an ``Executor`` (the Protocol its callers annotate with); ``executor_for`` picks one.
A local process that dies breaks the pool: its unfinished jobs run once more in a fresh one. A Dask task
whose worker dies is rerun elsewhere (Dask's own retry on worker loss, plus one for an error).
"""
from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util
import os
import secrets
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator, Protocol, runtime_checkable

from graders.engine.job import GradingJob, JobResult, execute_and_judge, release
from graders.sandbox import launch
from graders.sandbox.exits import ProcessExit
from graders.sandbox.session import ForkServer

Outcome = tuple[GradingJob, "JobResult | None", float, str]  # job, its result or None, seconds, error


@runtime_checkable
class Executor(Protocol):
    """Where jobs run (``Serial``, ``Pool``, ``Dask``): at most ``capacity`` jobs ``in_flight`` at once; ``submit``
    never blocks and never raises for a bad submission (its error comes back from ``wait``); ``wait`` blocks until
    at least one job has finished (``[]`` when none is in flight) and returns each finished one once; ``warm``
    runs a job on every process, its result thrown away, keeping the processes; ``close`` ends them (idempotent).
    A kind whose processes are not this one also has ``spread(fn, calls)``: the calls run over its processes at
    once, a failed one giving None (``Serial`` has none: its one process measures as it grades)."""

    capacity: int

    @property
    def in_flight(self) -> int: ...

    def submit(self, job: GradingJob) -> None: ...

    def wait(self) -> list[Outcome]: ...

    def warm(self, job: GradingJob) -> None: ...

    def close(self) -> None: ...


def timed(job: GradingJob) -> tuple[JobResult, float]:
    start = time.perf_counter()
    return execute_and_judge(job), time.perf_counter() - start


def call(fn, *args):
    """``fn(*args)``: what ``spread`` runs to spread calls of different functions at once."""
    return fn(*args)


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


def warmed(job: GradingJob) -> int:
    """Grade ``job`` to warm this process up (fork server, reference, calibrations); its result is thrown away.
    Returns this process's pid, so a pool can tell which of its processes are warm."""
    execute_and_judge(job)
    return os.getpid()


def _results(futures) -> list:
    """Each future's result, or None for one that raised (what a call could not measure, the jobs measure
    themselves); a pool's and a cluster's futures alike."""
    results = []
    for future in futures:
        try:
            results.append(future.result())
        except Exception:  # noqa: BLE001 - see the docstring
            results.append(None)
    return results


class Serial:
    """In this process, one job at a time (``vecgrade grade --jobs 1``)."""

    capacity = 1

    def __init__(self):
        self.done: list[Outcome] = []

    @property
    def in_flight(self) -> int:
        return len(self.done)

    def submit(self, job: GradingJob) -> None:
        try:
            result, seconds = timed(job)
            self.done.append((job, result, seconds, ""))
        except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
            self.done.append((job, None, 0.0, f"{type(exc).__name__}: {exc}"))

    def wait(self) -> list[Outcome]:
        done, self.done = self.done, []
        return done

    def warm(self, job: GradingJob) -> None:
        warmed(job)

    def close(self) -> None:
        pass


class Pool:
    """``n`` processes, kept for the executor's life: forked from this one when it is safe (``start_method``)."""

    def __init__(self, n: int):
        self.n, self.capacity = n, 2 * n  # a job waiting beside each running one: no process idles
        self.pool: ProcessPoolExecutor | None = None
        self.running: dict[Future, tuple[GradingJob, bool]] = {}  # future -> (job, may it be retried)

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

    def submit(self, job: GradingJob, retry: bool = True) -> None:
        self.running[self._pool().submit(timed, job)] = (job, retry)

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
        results = _results(futures)
        if any(isinstance(future.exception(), BrokenProcessPool) for future in futures) and not self.running:
            self.close()
        return results

    def warm(self, job: GradingJob, rounds: int = 3) -> None:
        """Run ``job`` in every process of the pool, so that no first submission finds one cold: a round of
        ``n`` copies may land twice on one process (another was still starting), so rounds go on until each
        process has run one, or ``rounds`` are spent."""
        pool, seen = self._pool(), set()
        for _ in range(rounds):
            seen |= {future.result() for future in [pool.submit(warmed, job) for _ in range(self.n)]}
            if len(seen) >= self.n:
                return

    def wait(self) -> list[Outcome]:
        if not self.running:
            return []
        done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        outcomes, broken = [], []
        for future in done:
            job, retry = self.running.pop(future)
            try:
                result, seconds = future.result()
                outcomes.append((job, result, seconds, ""))
            except BrokenProcessPool as exc:
                if retry:
                    broken.append(job)
                else:
                    outcomes.append((job, None, 0.0, f"its grading process died ({exc})"))
            except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
                outcomes.append((job, None, 0.0, f"grading failed: {type(exc).__name__}: {exc}"))
        if broken:  # the pool is gone with the process: every unfinished job goes to a fresh pool, once
            unfinished = [(job, retry) for job, retry in self.running.values()]
            self.running.clear()
            self.close()
            for job in broken:
                self.submit(job, retry=False)
            for job, retry in unfinished:
                self.submit(job, retry)
        return outcomes

    def close(self) -> None:
        """End the pool. With nothing in flight (a run's end, a broken pool) it waits for its manager thread and
        processes: left behind, that thread was still closing its wake-up pipe when the interpreter exited, and
        concurrent.futures' exit hook wrote into it ("Exception ignored in ... _python_exit ... OSError: [Errno 9]
        Bad file descriptor"). With jobs in flight (an interrupted run) it does not wait for them."""
        if self.pool is not None:
            self.pool.shutdown(wait=not self.running, cancel_futures=True)
            self.pool = None


class Dask:
    """One task per notebook on the cluster at ``scheduler``; only a finished task returns a result."""

    def __init__(self, scheduler: str):
        from distributed import Client  # noqa: PLC0415 - Dask loads only when a cluster is asked for
        self.client = Client(scheduler, timeout="10s")
        workers = len(self.client.scheduler_info().get("workers", {})) or 1
        self.capacity = 2 * workers
        self.running: dict = {}

    @property
    def in_flight(self) -> int:
        return len(self.running)

    def submit(self, job: GradingJob) -> None:
        key = f"vecgrade-{job.student}-{job.notebook_id}-{secrets.token_hex(4)}"
        self.running[self.client.submit(timed, job, pure=False, retries=1, key=key)] = job

    def spread(self, fn, calls: list[tuple]) -> list:
        """``fn(*args)`` for each ``args`` of ``calls``, as tasks on the cluster; a task that failed gives None."""
        return _results([self.client.submit(fn, *args, pure=False, key=f"vecgrade-spread-{secrets.token_hex(4)}")
                         for args in calls])

    def warm(self, job: GradingJob) -> None:
        """Run ``job`` once on every worker of the cluster (each keeps its grading run warm across tasks)."""
        workers = list(self.client.scheduler_info().get("workers", {}))
        futures = [self.client.submit(warmed, job, pure=False, workers=[w], allow_other_workers=False,
                                      key=f"vecgrade-warm-{secrets.token_hex(4)}") for w in workers]
        self.client.gather(futures)

    def wait(self) -> list[Outcome]:
        from distributed import wait as dask_wait  # noqa: PLC0415 - see __init__
        if not self.running:
            return []
        done = dask_wait(list(self.running), return_when="FIRST_COMPLETED").done
        outcomes = []
        for future in done:
            job = self.running.pop(future)
            try:
                result, seconds = future.result()
                outcomes.append((job, result, seconds, ""))
            except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: reported ungraded
                outcomes.append((job, None, 0.0, f"grading task failed: {type(exc).__name__}: {exc}"))
        return outcomes

    def close(self) -> None:
        self.client.close()


def executor_for(jobs: int = 1, scheduler: str | None = None) -> Executor:
    """The cluster at ``scheduler`` when one is named, else ``jobs`` local processes, else this process."""
    if scheduler:
        return Dask(scheduler)
    return Pool(jobs) if jobs > 1 else Serial()


def run_all(executor: Executor, jobs: list[GradingJob]) -> Iterator[Outcome]:
    """Every job through ``executor``, as they finish (for a list known in advance); ``executor`` is closed after."""
    pending = list(jobs)
    try:
        while pending or executor.in_flight:
            while pending and executor.in_flight < executor.capacity:
                executor.submit(pending.pop(0))
            yield from executor.wait()
    finally:
        executor.close()
