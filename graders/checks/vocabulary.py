"""The words the three parts share: a verdict, a student's error, the timeouts, and argument copies.

``correct``, ``vectorized`` and ``fast`` each import this module and nothing of each other; ``parts``
composes them.
"""
from __future__ import annotations

import torch

from graders.checks.timeouts import Timeouts
from graders.model.errors import VecgradeError
from graders.model.verdict import Reason, Status, Verdict, failed, not_graded
from graders.sandbox.budget import MachineOutOfTime, OutOfTime
from graders.sandbox.protocol import ErrorCode
from graders.sandbox.session import Deadline, WorkerFailure

__all__ = ["Disrupted", "MachineOutOfTime", "OutOfTime", "StudentError", "Timeouts", "Verdict", "answer", "clone_args",
           "disruption", "param_names"]


class StudentError(VecgradeError):
    """The student's function raised, or returned what is refused; the message is shown to the student, ``code``
    (the worker's ``ErrorCode``, None for a refusal or the grader's own finding) is what a check decides on."""

    def __init__(self, message: str, code: ErrorCode | None = None):
        super().__init__(message)
        self.code = code


class Disrupted(VecgradeError):
    """The process running the student's code died, missed a deadline or could not start: no verdict was decided
    (``reason`` says which; graders.model.verdict), and the exercise is graded again in a fresh jail when the
    reason is a disruption. Or the notebook's time budget ended the part: ``Reason.OUT_OF_TIME`` (the notebook's
    code spent it: the part, and every part after it, fails; ``verdict``) or ``Reason.BUDGET`` (the machine's
    load did: not graded)."""

    def __init__(self, reason: Reason, message: str):
        super().__init__(message)
        self.reason = reason

    def verdict(self, part: str) -> Verdict:
        """What it makes of ``part``: failed when the program spent the budget, else not graded."""
        if self.reason.status is Status.FAILED:
            return failed(part, self.reason, str(self))
        return not_graded(part, self.reason, str(self))


def disruption(exc: WorkerFailure, doing: str = "") -> Disrupted:
    """The ``Disrupted`` a failure of the student's process stands for; ``doing``: what it was doing then."""
    reason = Reason.OUT_OF_TIME if isinstance(exc, OutOfTime) else Reason.BUDGET \
        if isinstance(exc, MachineOutOfTime) else Reason.DEADLINE if isinstance(exc, Deadline) else Reason.KILLED
    return Disrupted(reason, f"{exc}{doing}")


def clone_args(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def answer(reply: dict) -> dict:
    """The payload of a worker's reply, or the student's error it carries (raised, or an output refused)."""
    if "refused" in reply:
        raise StudentError(str(reply["refused"]))
    if "error" in reply:  # Raised carries its code; a Failed frame (unreadable to the child) has none
        raise StudentError(f"raised {reply['error']}", ErrorCode(reply.get("code", ErrorCode.UNREADABLE)))
    return reply["ok"]


def param_names(signature: str) -> list[str]:
    """The parameter names of a ``def`` line."""
    inside = signature[signature.index("(") + 1: signature.rindex(")")]
    return [p.split("=")[0].split(":")[0].strip() for p in inside.split(",") if p.strip()]
