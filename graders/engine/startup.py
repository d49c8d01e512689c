"""What an ``Engine`` (graders.engine.coordinator) does once, before its first submission: the preflight (a jail
of a grading process runs torch under the configured limits) and the reference's measurements, spread over the
executor's processes. A mixin of ``Engine``: it reads the engine's executor, assignment, config and seed, and
sets ``_preflight_done`` and ``measured``."""
from __future__ import annotations

from traitlets.config import Config

from graders.checks.submission import combine
from graders.engine.executors import Executor, call
from graders.engine.job import jail_problem, reference_measurements
from graders.engine.request import GradingRequest, settings_of
from graders.model.errors import VecgradeError
from graders.model.exercise import Assignment


class JailUnusable(VecgradeError, RuntimeError):
    """No jail of this machine can run torch under the configured limits: nothing is graded (one line)."""


class BeforeTheFirst:
    """The engine's steps before its first submission (see the module's docstring)."""

    executor: Executor
    assignment_name: str
    config: Config
    seed: int
    measured: dict | None
    _preflight_done: bool

    def assignment(self) -> Assignment:
        raise NotImplementedError  # the engine's own

    def measure_references(self, definitions: dict[str, str]) -> dict:
        """The reference of every exercise measured once, spread over the executor's processes (its ``spread``;
        serially the one process measures as it grades), by machine: each process would otherwise measure every
        exercise before its first notebook (0.25 s of calibration and 0.1 s of shared reference time each,
        measured on broadcasting)."""
        spread = getattr(self.executor, "spread", None)
        if spread is None:
            return {}
        return self._by_machine(spread(call, self._reference_calls(definitions)))

    def _reference_calls(self, definitions: dict[str, str]) -> list[tuple]:
        probe = GradingRequest("(reference)", self.assignment_name, definitions, settings_of(self.config), self.seed)
        return [(reference_measurements, probe, ex.name) for ex in self.assignment().exercises]

    @staticmethod
    def _by_machine(results: list) -> dict:
        by_machine: dict = {}
        for result in results:
            if result:
                combine(by_machine.setdefault(result["machine"], {}), result)
        return by_machine

    def before_the_first(self, definitions: dict[str, str]) -> None:
        """The preflight and the reference's measurements, spread over the executor's processes at once: one
        process probes the jail while the others measure (each grading process starts its fork server meanwhile),
        instead of the measurements waiting for the probe. Nothing of a submission is touched before both
        are done, and ``JailUnusable`` is raised as ``preflight`` raises it."""
        spread = getattr(self.executor, "spread", None)
        if spread is None or self._preflight_done or self.measured is not None:
            self.preflight()
            if self.measured is None:
                self.measured = self.measure_references(definitions)
            return
        found, *measured = spread(call, [(jail_problem, self._preflight_probe()), *self._reference_calls(definitions)])
        self._preflight_found(found)
        self.measured = self._by_machine(measured)

    def preflight(self) -> None:
        """Once per grader: a jail of a grading process, under the configured limits, runs torch; else
        ``JailUnusable`` (one line naming the setting), before any submission is touched."""
        if self._preflight_done:
            return
        probe = self._preflight_probe()
        spread = getattr(self.executor, "spread", None)
        self._preflight_found(spread(jail_problem, [(probe,)])[0] if spread is not None else jail_problem(probe))

    def _preflight_probe(self) -> GradingRequest:
        return GradingRequest("(preflight)", self.assignment_name, {}, settings_of(self.config), self.seed)

    def _preflight_found(self, found: str | None) -> None:
        if found:
            raise JailUnusable(found)
        self._preflight_done = True
