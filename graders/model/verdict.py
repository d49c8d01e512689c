"""The result contract: a verdict is data (a status, a reason code, a message, figures, the program's key).

A verdict is a property of the program, or it is no verdict:

- ``passed`` and ``failed`` are decided from a clean observation of the program (its process started, ran
  and answered in a jail nothing else ran in). Only these may be shared between students and kept, but for
  ``out_of_time``: the notebook's own code used up the notebook's time budget (graders.sandbox.budget), a
  failure of this submission that depends on its other exercises too, so it is recorded and never shared.
- ``not_graded`` says the run was disrupted (a process that died, could not start, was stopped, ran past a
  deadline, a jail something unexpected ran in) or the grader could not grade at all. It is never shared,
  never kept and never written as a mark: the submission is graded again cleanly, and where that is not
  possible the teacher is told why (``ungraded.csv``, ``vecgrade status``, the export, the service's page).

The grade cell's ``metadata.vecgrade`` holds ``Verdict.to_json()``; its output text is rendered from it
(``graders.pipeline.verdicts``). Nothing reads verdict text back: readers call ``Verdict.from_json``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_GRADED = "not_graded"


class Reason(str, Enum):
    """Why a verdict is what it is: a code of one of three groups (``Reason.status``: passed, failed, not graded),
    each with its one-line meaning (``Reason.meaning``; docs/grading.md lists them from ``table()``)."""

    OK = "ok"
    WRONG_VALUE = "wrong_value"
    RAISED = "raised"
    NOT_WRITTEN = "not_written"
    NOT_DEFINED = "not_defined"
    MODIFIED_INPUT = "modified_input"
    NOT_A_VIEW = "not_a_view"
    HANG = "hang"
    CRASHED = "crashed"
    PYTHON_LOOP = "python_loop"
    OUTSIDE_SUBSET = "outside_subset"
    KEEPS_STATE = "keeps_state"
    GROWS = "grows"
    FORBIDDEN_OP = "forbidden_op"
    THREADS = "threads"
    TOO_SLOW = "too_slow"
    GATED = "gated"
    OUT_OF_TIME = "out_of_time"
    COULD_NOT_START = "could_not_start"
    KILLED = "killed"
    STOPPED = "stopped"
    DEADLINE = "deadline"
    JAIL_DISTURBED = "jail_disturbed"
    BUDGET = "budget"
    REFUSED = "refused"
    INTERNAL = "internal"

    @property
    def disruption(self) -> bool:
        """An accident of the run: graded again in a fresh jail, and, if it happens again there, the program's
        own doing (``settled``)."""
        return self in DISRUPTIONS

    @property
    def status(self) -> Status:
        """The status a verdict with this reason has: ``ok`` passes, a failure fails, the rest is no verdict."""
        return _MEANINGS[self][0]

    @property
    def meaning(self) -> str:
        """One line: when a verdict has this reason."""
        return _MEANINGS[self][1]

    @property
    def shared(self) -> bool:
        """Whether a verdict with this reason says something of the program alone, so that it may be shared with
        another student who wrote the same program and kept (graders.model.store): every passed and failed reason
        but ``out_of_time``, which depends on what the rest of the notebook spent (recorded for this submission,
        never shared or kept); no ``not_graded`` one."""
        return self.status is not Status.NOT_GRADED and self not in NOT_SHARED


_P, _F, _N = Status.PASSED, Status.FAILED, Status.NOT_GRADED
# the one source of each code's group and meaning (the docs' table of reason codes, ``table()``)
_MEANINGS: dict[Reason, tuple[Status, str]] = {
    Reason.OK: (_P, "the part passed"),
    # failed: decided from a clean observation of the program
    Reason.WRONG_VALUE: (_F, "an output differs from the reference (shape, dtype or value)"),
    Reason.RAISED: (_F, "the function raised, or returned something refused"),
    Reason.NOT_WRITTEN: (_F, "still the stub (`NotImplementedError`)"),
    Reason.NOT_DEFINED: (_F, "no function of that name, or not a plain `def`"),
    Reason.MODIFIED_INPUT: (_F, "wrote into an input, or did not change it in place when required"),
    Reason.NOT_A_VIEW: (_F, "returned a copy where a view was required"),
    Reason.HANG: (_F, "never returned, again in a clean jail"),
    Reason.CRASHED: (_F, "its process died, again in a clean jail"),
    Reason.PYTHON_LOOP: (_F, "static findings: Python-level iteration, forbidden calls, form"),
    Reason.OUTSIDE_SUBSET: (_F, "code outside the checked subset (its timing cannot be trusted)"),
    Reason.KEEPS_STATE: (_F, "writes state that outlives a call (a memo): not timed on its compute"),
    Reason.GROWS: (_F, "the ATen ops or Python lines grow with the input"),
    Reason.FORBIDDEN_OP: (_F, "dispatched a forbidden ATen op"),
    Reason.THREADS: (_F, "started a thread while being counted"),
    Reason.TOO_SLOW: (_F, "the speedup or the factor over the reference misses the bar"),
    Reason.GATED: (_F, "not graded until the answer is correct (scores 0, like a failure)"),
    Reason.OUT_OF_TIME: (_F, "the notebook's own code (loading, calls, counts and timed requests of every exercise) "
                             "used up the notebook's time budget before this part was decided: a 0 for this "
                             "submission, never shared or kept"),
    # not graded: an accident of the run or a fault of the grading machine
    Reason.COULD_NOT_START: (_N, "a process or jail that could not be started"),
    Reason.KILLED: (_N, "a process that died while being graded"),
    Reason.STOPPED: (_N, "a process the machine kept from running (no CPU while it waited)"),
    Reason.DEADLINE: (_N, "a process that missed its deadline (graded again in a fresh jail)"),
    Reason.JAIL_DISTURBED: (_N, "something unexpected ran in its jail"),
    Reason.BUDGET: (_N, "the grading machine's time ran out: its load kept the notebook's code from the time its "
                        "budget allows (the wall-clock cap, or a request its load cut short)"),
    Reason.REFUSED: (_N, "the submission was refused before any code ran"),
    Reason.INTERNAL: (_N, "the grader itself failed"),
}
assert set(_MEANINGS) == set(Reason), "every reason has its group and meaning"

DISRUPTIONS = frozenset({Reason.KILLED, Reason.DEADLINE, Reason.JAIL_DISTURBED, Reason.STOPPED})
# decided verdicts that depend on more than the program: recorded for the submission, never shared nor kept
NOT_SHARED = frozenset({Reason.OUT_OF_TIME})
# what a disruption that happens again in a clean, isolated jail says of the program; a stopped process (the
# machine gave it no CPU) or one that could not start says nothing of it and stays not graded
OWN_DOING = {Reason.KILLED: Reason.CRASHED, Reason.DEADLINE: Reason.HANG, Reason.JAIL_DISTURBED: Reason.CRASHED}

STATUS_WORDS = {Status.PASSED: "passed", Status.FAILED: "failed", Status.NOT_GRADED: "not graded"}


def table() -> str:
    """The reason codes as a Markdown table, for the docs (docs/hooks.py): code, verdict, meaning, shared."""
    rows = [f"| `{r.value}` | {STATUS_WORDS[r.status]} | {'yes' if r.shared else 'no'} | {r.meaning} |"
            for r in Reason]
    return "\n".join(["| reason | verdict | shared and kept | meaning |", "|---|---|---|---|", *rows])


PARTS = ("correct", "vectorized", "fast")
ERROR_NAMES = {"correct": "Incorrect", "vectorized": "NotVectorized", "fast": "TooSlow"}


@dataclass
class Verdict:
    """One part's verdict. ``key``: the program key it was decided for (graders.checks.identity)."""

    part: str
    status: Status
    reason: Reason
    message: str
    figures: dict[str, Any] = field(default_factory=dict)
    key: str = ""

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED

    @property
    def graded(self) -> bool:
        """A decided verdict (passed or failed): recorded as a mark."""
        return self.status is not Status.NOT_GRADED

    @property
    def shared(self) -> bool:
        """A decided verdict that says something of the program alone (``Reason.shared``): fit to share and keep."""
        return self.graded and self.reason.shared

    def to_json(self) -> dict[str, Any]:
        return {"part": self.part, "status": self.status.value, "reason": self.reason.value,
                "message": self.message, "figures": {k: v for k, v in self.figures.items()
                                                     if isinstance(v, (int, float, str, bool))},
                "key": self.key}

    @classmethod
    def from_json(cls, data: Any) -> Verdict | None:
        """The verdict ``to_json`` wrote, or None for anything else (a student's own metadata, an old notebook)."""
        if not isinstance(data, dict):
            return None
        try:
            return cls(str(data["part"]), Status(data["status"]), Reason(data["reason"]), str(data["message"]),
                       dict(data.get("figures") or {}), str(data.get("key", "")))
        except (KeyError, ValueError, TypeError):
            return None


def passed(part: str, message: str, figures: dict | None = None) -> Verdict:
    return Verdict(part, Status.PASSED, Reason.OK, message, dict(figures or {}))


def failed(part: str, reason: Reason, message: str, figures: dict | None = None) -> Verdict:
    assert reason.status is Status.FAILED, f"{reason} is not a failure"
    return Verdict(part, Status.FAILED, reason, message, dict(figures or {}))


def not_graded(part: str, reason: Reason, message: str) -> Verdict:
    return Verdict(part, Status.NOT_GRADED, reason, message)


def all_parts(make, *args) -> dict[str, Verdict]:
    """One verdict per part from ``make(part, *args)``."""
    return {p: make(p, *args) for p in PARTS}


GATED_MESSAGE = "not graded until the answer is correct"


def gated(part: str) -> Verdict:
    return failed(part, Reason.GATED, GATED_MESSAGE)


def settled(verdicts: dict[str, Verdict]) -> bool:
    """Every part decided (passed or failed) by the program alone (``Verdict.shared``): such verdicts, and only
    these, may be shared and kept (an ``out_of_time`` part depends on the rest of the notebook)."""
    return bool(verdicts) and all(v.shared for v in verdicts.values())


def disrupted(verdicts: dict[str, Verdict]) -> Reason | None:
    """The disruption among ``verdicts`` (graded again in a fresh jail), or None."""
    return next((v.reason for v in verdicts.values() if v.reason.disruption), None)


def _own(v: Verdict) -> Verdict:
    """One verdict disrupted again: failed with what the disruption says of the program, if it says anything."""
    if v.status is not Status.NOT_GRADED or v.reason not in OWN_DOING:
        return v
    return Verdict(v.part, Status.FAILED, OWN_DOING[v.reason], f"{v.message} (the same happened again in a fresh "
                   "process, so it is the code's own doing)", v.figures, v.key)


def own_doing(verdicts: dict[str, Verdict]) -> dict[str, Verdict]:
    """Verdicts disrupted again in a clean, isolated jail: the program's own doing where the disruption is one a
    program can cause (a crash, a hang), else left not graded (a stopped process: the machine's). A failed
    "correct" gates the other parts."""
    out = {p: _own(v) for p, v in verdicts.items()}
    correct = verdicts.get("correct")
    if correct is not None and out["correct"] is not correct and not out["correct"].passed:
        return {**{p: gated(p) for p in verdicts}, "correct": out["correct"]}
    return out


def cell_verdict(cell: Any) -> Verdict | None:
    """The verdict a graded notebook's grade cell holds in ``metadata.vecgrade`` (None: none, or not one the
    grader wrote: a student's own metadata is overwritten in every grade cell, and an old notebook's is text)."""
    metadata = cell.get("metadata", {}) if hasattr(cell, "get") else {}
    return Verdict.from_json(metadata.get("vecgrade") if hasattr(metadata, "get") else None)
