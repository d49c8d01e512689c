"""The Dask executor (``--scheduler tcp://host:8786``): one task per submission on the cluster at that address.

A worker may be another machine, with no view of the course folder, so each request travels with the submission's
files (``packed``: counted against the intake caps with ``lstat`` first, no more read than they allow) and as JSON
data; the outcome comes back the same way. Only a finished task returns an outcome; a task whose worker died is
rerun elsewhere (Dask's own retry on worker loss, plus one for an error), and one that fails for good comes back
not graded.
"""
from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path

from graders.engine.executors import Outcome, lost, results_of
from graders.engine.job import grade_json
from graders.engine.request import GradingOutcome, GradingRequest, SubmissionStatus
from graders.model.errors import VecgradeError
from graders.model.verdict import Reason
from graders.pipeline.intake import Intake, survey


class OverCaps(VecgradeError):
    """The folder is over the intake caps: nothing of it ships, and the submission is refused with this line."""


def packed(request: GradingRequest) -> GradingRequest:
    """``request`` with its folder's regular files inline, within the intake caps (``OverCaps`` otherwise: the
    refusal the job's own intake check would give)."""
    if request.folder is None:
        return request
    intake = Intake(config=request.config())
    found = survey(request.folder, intake.max_files, intake.max_bytes)
    refused = intake.verdict(found, f"{request.student}/{request.assignment}")
    if refused:
        raise OverCaps(refused)
    files = {name: (Path(request.folder) / name).read_bytes() for name in found.files}
    return dataclasses.replace(request, folder=None, files=files)


class Dask:
    """One task per submission on the cluster at ``address`` (see the module's docstring)."""

    def __init__(self, address: str, jobs: int = 1):
        from distributed import Client  # noqa: PLC0415 - Dask loads only when a cluster is asked for
        self.client = Client(address, timeout="10s")
        workers = len(self.client.scheduler_info().get("workers", {})) or 1
        self.capacity = 2 * workers
        self.running: dict = {}
        self.done: list[Outcome] = []

    @property
    def in_flight(self) -> int:
        return len(self.running) + len(self.done)

    def submit(self, request: GradingRequest) -> None:
        try:
            data = packed(request).to_json()
        except OverCaps as exc:
            self.done.append((request, GradingOutcome(request.student, request.assignment, SubmissionStatus.REFUSED,
                                                      Reason.REFUSED, str(exc))))
            return
        except Exception as exc:  # noqa: BLE001 - this student's files could not be read: its outcome, not the run's
            self.done.append((request, lost(request, f"its files could not be read: {type(exc).__name__}: {exc}")))
            return
        key = f"vecgrade-{secrets.token_hex(8)}"
        self.running[self.client.submit(grade_json, data, pure=False, retries=1, key=key)] = request

    def spread(self, fn, calls: list[tuple]) -> list:
        """``fn(*args)`` for each ``args`` of ``calls``, as tasks on the cluster; a task that failed gives None."""
        return results_of([self.client.submit(fn, *args, pure=False, key=f"vecgrade-spread-{secrets.token_hex(4)}")
                           for args in calls])

    def warm(self, request: GradingRequest) -> None:
        """Grade ``request`` once on every worker of the cluster (each keeps its grading run warm across tasks)."""
        from graders.engine.executors.local import warmed  # noqa: PLC0415 - the same warm-up, on a worker
        data = packed(request).to_json()
        workers = list(self.client.scheduler_info().get("workers", {}))
        futures = [self.client.submit(warmed, data, pure=False, workers=[w], allow_other_workers=False,
                                      key=f"vecgrade-warm-{secrets.token_hex(4)}") for w in workers]
        self.client.gather(futures)

    def wait(self) -> list[Outcome]:
        from distributed import wait as dask_wait  # noqa: PLC0415 - see __init__
        outcomes, self.done = self.done, []
        if not self.running:
            return outcomes
        done = dask_wait(list(self.running), return_when="FIRST_COMPLETED").done
        for future in done:
            request = self.running.pop(future)
            try:
                outcomes.append((request, GradingOutcome.from_json(future.result())))
            except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: not graded
                outcomes.append((request, lost(request, f"grading task failed: {type(exc).__name__}: {exc}")))
        return outcomes

    def close(self) -> None:
        self.client.close()
