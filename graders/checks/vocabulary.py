"""The words the three parts share: a verdict, a student's error, the timeouts, and argument copies.

``correct``, ``vectorized`` and ``fast`` each import this module and nothing of each other; ``parts``
composes them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from graders.sandbox.session import WorkerFailure


@dataclass
class Verdict:
    part: str
    passed: bool
    message: str
    figures: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Timeouts:
    """Seconds one call of the student's function may take, per purpose; ``cell``: per cell while loading."""

    call: float = 10.0
    count: float = 20.0
    bench_min: float = 1.0  # floor of a timed request's deadline: far above an honest request (~20-40 ms)
    cell: float = 30.0


class StudentError(Exception):
    """The student's function raised, or returned what is refused; the message is shown to the student."""


class OutOfTime(WorkerFailure):
    """The notebook's wall-clock budget is spent."""


def clone_args(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def answer(reply: dict) -> dict:
    """The payload of a worker's reply, or the student's error it carries (raised, or an output refused)."""
    if "refused" in reply:
        raise StudentError(str(reply["refused"]))
    if "error" in reply:
        raise StudentError(f"raised {reply['error']}")
    return reply["ok"]


def param_names(signature: str) -> list[str]:
    """The parameter names of a ``def`` line."""
    inside = signature[signature.index("(") + 1: signature.rindex(")")]
    return [p.split("=")[0].split(":")[0].strip() for p in inside.split(",") if p.strip()]
