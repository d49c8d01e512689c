"""One verdict store: the verdicts of programs, by program key, holding only what a program earned.

A key (graders.checks.identity.program_key, salted with the run's seed, the definitions' fingerprint and the
grading settings) names everything a verdict depends on. ``put`` takes a program's verdicts only when every part
was decided (passed or failed) from a clean observation of the program alone (graders.model.verdict.settled, one
rule: ``Reason.shared``): a run that was disrupted, or could not grade, and a part failed ``out_of_time`` (the
notebook's code used up the notebook's time budget, which depends on its other exercises too) are never shared with
another student and never kept.

``VerdictStore`` lives in memory for one grading run (``GradingRun``), one class's grading (``Engine``) or
the service's life; ``fresh`` drains what was put since the last call, which the service's ledger keeps across
restarts (graders.serve.ledger).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from graders.model.verdict import Verdict, settled

Verdicts = dict[str, Verdict]  # part -> verdict


@runtime_checkable
class Store(Protocol):
    """What a grader asks of a verdict store (``VerdictStore`` is the one in memory): ``get`` the verdicts kept
    under a program key, or None; ``put`` keeps a program's verdicts only when they are settled and the key is new,
    and says whether it kept them (a store never replaces what it holds)."""

    def get(self, key: str) -> Verdicts | None: ...

    def put(self, key: str, verdicts: Verdicts) -> bool: ...

    def __contains__(self, key: object) -> bool: ...


class VerdictStore:
    """Program key -> its verdicts, in memory (see the module's docstring): a ``Store``."""

    def __init__(self, known: Mapping[str, Verdicts] | None = None):
        self._known: dict[str, Verdicts] = {}
        self._fresh: list[tuple[str, Verdicts]] = []
        for key, verdicts in (known or {}).items():
            if settled(verdicts):
                self._known[key] = dict(verdicts)

    def get(self, key: str) -> Verdicts | None:
        return self._known.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._known

    def __len__(self) -> int:
        return len(self._known)

    def put(self, key: str, verdicts: Verdicts) -> bool:
        """Keep ``verdicts`` under ``key`` when they are settled and the key is new; True when kept."""
        if key in self._known or not settled(verdicts):
            return False
        self._known[key] = {p: _keyed(v, key) for p, v in verdicts.items()}
        self._fresh.append((key, self._known[key]))
        return True

    def follow(self, known: Mapping[str, Verdicts]) -> None:
        """Take ``known`` (the run's settled verdicts as the coordinator holds them, carried by a grading request) in
        place of what this store holds under the same keys: a grading process's store is a cache of the
        coordinator's, and the coordinator's verdict of a program is the one every student gets."""
        for key, verdicts in known.items():
            if settled(verdicts):
                self._known[key] = {p: _keyed(v, key) for p, v in verdicts.items()}

    def as_dict(self) -> dict[str, Verdicts]:
        """Every kept program key and its verdicts (what a grading request carries: graders.engine.request)."""
        return dict(self._known)

    def update(self, pairs: Iterable[tuple[str, Verdicts]]) -> None:
        for key, verdicts in pairs:
            self.put(key, verdicts)

    def fresh(self) -> list[tuple[str, Verdicts]]:
        """What was put since the last call (the service's ledger keeps it)."""
        out, self._fresh = self._fresh, []
        return out

    def clear(self) -> None:
        self._known.clear()
        self._fresh.clear()


def _keyed(verdict: Verdict, key: str) -> Verdict:
    if verdict.key == key:
        return verdict
    return Verdict(verdict.part, verdict.status, verdict.reason, verdict.message, dict(verdict.figures), key)
