"""The result contract: a verdict is data (a status, a reason code, a message, figures, the program's key).

A verdict is a property of the program, or it is no verdict:

- ``passed`` and ``failed`` are decided from a clean observation of the program (its process started, ran
  and answered in a jail nothing else ran in). Only these may be shared between students and kept.
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
    """Why a verdict is what it is; the first group passes, the second fails, the third is no verdict."""

    # passed
    OK = "ok"
    # failed: decided from a clean observation of the program
    WRONG_VALUE = "wrong_value"          # an output differs from the reference (shape, dtype or value)
    RAISED = "raised"                    # the function raised, or returned something refused
    NOT_WRITTEN = "not_written"          # still the stub (NotImplementedError)
    NOT_DEFINED = "not_defined"          # no function of that name, or not a plain ``def``
    MODIFIED_INPUT = "modified_input"    # wrote into an input, or did not change it in place when required
    NOT_A_VIEW = "not_a_view"            # returned a copy where a view was required
    HANG = "hang"                        # never returned, again in a clean jail
    CRASHED = "crashed"                  # its process died, again in a clean jail
    PYTHON_LOOP = "python_loop"          # static findings: Python-level iteration, forbidden calls, form
    OUTSIDE_SUBSET = "outside_subset"    # code outside the checked subset (its timing cannot be trusted)
    KEEPS_STATE = "keeps_state"          # writes state that outlives a call (a memo): not timed on its compute
    GROWS = "grows"                      # the ATen ops or Python lines grow with the input
    FORBIDDEN_OP = "forbidden_op"        # dispatched a forbidden ATen op
    THREADS = "threads"                  # started a thread while being counted
    TOO_SLOW = "too_slow"                # the speedup or the factor over the reference misses the bar
    GATED = "gated"                      # not graded until the answer is correct (scores 0, like a failure)
    # not graded: an accident of the run or a fault of the grading machine
    COULD_NOT_START = "could_not_start"  # a process or jail that could not be started
    KILLED = "killed"                    # a process that died while being graded
    STOPPED = "stopped"                  # a process the machine kept from running (no CPU while it waited)
    DEADLINE = "deadline"                # a process that missed its deadline
    JAIL_DISTURBED = "jail_disturbed"    # something unexpected ran in its jail
    BUDGET = "budget"                    # the notebook's time budget ran out
    REFUSED = "refused"                  # the submission was refused before any code ran
    DEFERRED = "deferred"                # graded elsewhere in this run (a placeholder the coordinator replaces)
    INTERNAL = "internal"                # the grader itself failed

    @property
    def disruption(self) -> bool:
        """An accident of the run: graded again in a fresh jail, and, if it happens again there, the program's
        own doing (``settled``)."""
        return self in DISRUPTIONS


DISRUPTIONS = frozenset({Reason.KILLED, Reason.DEADLINE, Reason.JAIL_DISTURBED, Reason.STOPPED})
# what a disruption that happens again in a clean, isolated jail says of the program; a stopped process (the
# machine gave it no CPU) or one that could not start says nothing of it and stays not graded
OWN_DOING = {Reason.KILLED: Reason.CRASHED, Reason.DEADLINE: Reason.HANG, Reason.JAIL_DISTURBED: Reason.CRASHED}

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
        """A decided verdict (passed or failed), fit to share and keep."""
        return self.status is not Status.NOT_GRADED

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
    assert not reason.disruption and reason is not Reason.OK, f"{reason} is not a failure"
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
    """Every part decided (passed or failed): such verdicts may be shared and kept."""
    return bool(verdicts) and all(v.graded for v in verdicts.values())


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
