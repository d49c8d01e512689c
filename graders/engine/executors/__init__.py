"""Where grading jobs run, chosen by an address: each kind of executor is one module, named by the address's scheme.

An executor takes ``GradingRequest``s and gives back ``GradingOutcome``s (graders.engine.request), and ships
nothing else: ``submit`` never blocks and never raises for a request, ``wait`` returns what has finished, each
once, as (request, outcome) pairs; a job whose process died comes back as an outcome that says so (not graded).
Each executor lives as long as the engine that holds it (a whole ``vecgrade grade`` run, or ``vecgrade serve``),
so its processes stay warm from one submission to the next.

``EXECUTORS`` is the registry: an address's scheme -> ``"module:factory"``, ``factory(address, jobs)`` making the
executor. ``vecgrade grade --jobs N`` is ``local`` (this process, or ``N`` local processes); ``--scheduler
tcp://host:8786`` a Dask cluster. A new kind (Ray, Kubernetes, a queue) is one module with a factory, and one
line here (or ``register`` at run time).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from graders.engine.request import GradingOutcome, GradingRequest, SubmissionStatus
from graders.model.errors import VecgradeError
from graders.model.verdict import Reason

Outcome = tuple[GradingRequest, GradingOutcome]

EXECUTORS: dict[str, str | Callable[[str, int], "Executor"]] = {
    "local": "graders.engine.executors.local:open_local",
    "tcp": "graders.engine.executors.dask:Dask",
    "tls": "graders.engine.executors.dask:Dask",
    "inproc": "graders.engine.executors.dask:Dask",
}


@runtime_checkable
class Executor(Protocol):
    """Where jobs run: at most ``capacity`` jobs ``in_flight`` at once; ``submit`` never blocks and never raises for a
    request; ``wait`` blocks until at least one job has finished (``[]`` when none is in flight) and returns each
    finished one once; ``warm`` grades a request on every process, its outcome thrown away, keeping the processes;
    ``close`` ends them (idempotent). A kind whose processes are not this one also has ``spread(fn, calls)``: the
    calls run over its processes at once, a failed one giving None."""

    capacity: int

    @property
    def in_flight(self) -> int: ...

    def submit(self, request: GradingRequest) -> None: ...

    def wait(self) -> list[Outcome]: ...

    def warm(self, request: GradingRequest) -> None: ...

    def close(self) -> None: ...


class UnknownExecutor(VecgradeError, ValueError):
    """An address whose scheme names no executor."""


def register(scheme: str, factory: str | Callable[[str, int], Executor]) -> None:
    """``factory`` (``"module:name"``, or the callable) makes the executors of addresses ``scheme://...``."""
    EXECUTORS[scheme] = factory


def scheme_of(address: str | None) -> str:
    """``local`` for no address; a bare ``host:port`` is Dask's (its default scheme is ``tcp``)."""
    if not address:
        return "local"
    return address.split("://", 1)[0] if "://" in address else "tcp"


def executor_for(address: str | None = None, jobs: int = 1) -> Executor:
    """The executor of ``address`` (its scheme looked up in ``EXECUTORS``): none, ``jobs`` local processes."""
    scheme = scheme_of(address)
    factory = EXECUTORS.get(scheme)
    if factory is None:
        raise UnknownExecutor(f"no executor for addresses {scheme}://... (known: {', '.join(sorted(EXECUTORS))})")
    if isinstance(factory, str):
        module, _, name = factory.partition(":")
        factory = getattr(importlib.import_module(module), name)
    return factory(address or "local://", jobs)


def lost(request: GradingRequest, why: str) -> GradingOutcome:
    """The outcome of a job that never came back (its process died, its task failed): not graded, the machine's."""
    return GradingOutcome(request.student, request.assignment, SubmissionStatus.NOT_GRADED, Reason.INTERNAL,
                          why[:300])


def call(fn, *args):
    """``fn(*args)``: what ``spread`` runs to spread calls of different functions at once."""
    return fn(*args)


def results_of(futures) -> list:
    """Each future's result, or None for one that raised (what a call could not measure, the jobs measure
    themselves); a pool's and a cluster's futures alike."""
    results = []
    for future in futures:
        try:
            results.append(future.result())
        except Exception:  # noqa: BLE001 - see the docstring
            results.append(None)
    return results
