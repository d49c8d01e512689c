"""Recording one student's submission through nbgrader's own autograde, and saying why when it could not be."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from graders.model.verdict import Reason


@dataclass
class SubmissionResult:
    """One student's grading. ``code``: why it was not graded (graders.model.verdict.Reason; None when graded);
    ``recorded``: nbgrader's recording ran (what a failed recording left behind is cleared, see
    graders.course.grade.settle_ungraded); a submission refused or not graded before recording leaves the earlier
    marks and files as they were. ``reason`` is the teacher's; ``for_student``, when set, is what the student's page
    says instead (graders.pipeline.refusals)."""
    student: str
    success: bool
    seconds: float
    reason: str = ""
    code: Reason | None = None
    recorded: bool = False
    for_student: str = ""  # the reason worded for the student (no teacher's command or course path), when it differs


_EXCEPTION_LINE = re.compile(r"\s*[\w.]*(Error|Exception|Missing)\b")  # ``KeyError: ...``, ``x.y.FooError: ...``
_LOGGED_ERROR = re.compile(r"(Error|ERROR|Exception|CRITICAL)\b")  # ``[AutogradeApp | ERROR] ...``
_WRAPPER = ("NbGraderException", "see the above traceback")  # nbgrader's own wrapper, which says nothing


def nbgrader_reason(result: dict) -> str:
    """The most specific error line of an nbgrader API result (its ``log`` and ``error``), at most 300 characters:
    the last exception line, else the last line logged as an error, else the last line ("unknown error" when
    there is none); never nbgrader's wrapper ("NbGraderException ... Please see the above traceback")."""
    lines = [line.strip() for line in f"{result.get('log', '')}\n{result.get('error', '')}".splitlines()]
    lines = [line for line in lines if line and not any(w in line for w in _WRAPPER)]
    exceptions = [line for line in lines if _EXCEPTION_LINE.match(line)]
    logged = [line for line in lines if _LOGGED_ERROR.search(line)]
    return _tidy((exceptions or logged or lines or ["unknown error"])[-1])[:300]


def _tidy(line: str) -> str:
    """``graders.pipeline.intake.UnsafeSubmissionError: UnsafeSubmissionError: why`` reads
    ``UnsafeSubmissionError: why``."""
    line = re.sub(r"^(?:\w+\.)+(\w+: )", r"\1", line)
    return re.sub(r"^(\w+: )\1", r"\1", line)


def skipped(result: dict) -> str:
    """nbgrader grades the known notebooks of a submission and only logs the others: that is not a success."""
    found = re.findall(r"Skipping unknown notebook: (\S.*)", result.get("log", ""))
    return "; ".join(f"Skipping unknown notebook {Path(f.strip()).name}" for f in found)


def autograde(api, assignment: str, student: str) -> SubmissionResult:
    """``nbgrader autograde ASSIGNMENT --student STUDENT --force`` through nbgrader's API."""
    start = time.perf_counter()
    try:
        result = api.autograde(assignment, student, force=True, create=True)
    except Exception as exc:  # noqa: BLE001 - one bad submission never stops the batch
        result = {"success": False, "error": f"{type(exc).__name__}: {exc}"}
    ok, unknown = bool(result.get("success")), skipped(result)
    why = "; ".join(r for r in (unknown, "" if ok else nbgrader_reason(result)) if r)
    success = ok and not unknown
    return SubmissionResult(student, success, time.perf_counter() - start, why,
                         None if success else Reason.INTERNAL, recorded=True)
