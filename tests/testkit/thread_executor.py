"""A test executor, as a new kind is added: one module with a factory, and one registry line
(``graders.engine.executors.register("thread", "tests.testkit.thread_executor:Threads")``).

Jobs run on a thread of this process, one at a time (a process's grading run is not shared between threads), each
through ``grade_json``: a request crosses as JSON data and the outcome
comes back the same way, as from any executor that ships jobs elsewhere."""
from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from graders.engine.executors import Outcome, lost
from graders.engine.job import grade, grade_json
from graders.engine.request import GradingOutcome, GradingRequest


class Threads:
    """One thread of this process (``jobs`` is not used)."""

    capacity = 1

    def __init__(self, address: str, jobs: int = 1):
        self.pool = ThreadPoolExecutor(1)
        self.running: dict[Future, GradingRequest] = {}
        self.address = address

    @property
    def in_flight(self) -> int:
        return len(self.running)

    def submit(self, request: GradingRequest) -> None:
        self.running[self.pool.submit(grade_json, request.to_json())] = request

    def wait(self) -> list[Outcome]:
        if not self.running:
            return []
        done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        outcomes = []
        for future in done:
            request = self.running.pop(future)
            try:
                outcomes.append((request, GradingOutcome.from_json(future.result())))
            except Exception as exc:  # noqa: BLE001 - as every executor: the job's, never the run's
                outcomes.append((request, lost(request, f"{type(exc).__name__}: {exc}")))
        return outcomes

    def warm(self, request: GradingRequest) -> None:
        grade(request)

    def close(self) -> None:
        self.pool.shutdown(wait=True)
