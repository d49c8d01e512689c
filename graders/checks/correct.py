"""The "correct" part: every hidden case, compared with the reference by the grader in its own memory.

Each case's tensor arguments live in shared memory the grader owns (graders.sandbox.shared): after the
call, the grader reads them in its own mapping to see whether the function changed them in place, and an
output that lives there is rebuilt from that mapping, so an in-place or view requirement is observed,
never reported.

A call may take ``CALL_MARGIN`` times what the course's loop version takes on the largest hidden case
(the case at the benchmark size, ``Exercise.large_case``, checked last: that case itself), at least
``CALL_FLOOR`` seconds, at most ``TrustedVerdicts.call_timeout``: the loop versions are the
slowest natural code, element by element, so an honest answer, loops included, stays far inside it, and
an answer that never returns costs the class about a second rather than the whole call timeout. Code
outside the checked subset may start machinery on its first call (``torch.compile`` compiles, a module
imports): its first call gets the whole call timeout.
"""
from __future__ import annotations

import time

import torch

from graders.checks.compare import describe_args, mismatch
from graders.checks.vocabulary import Disrupted, StudentError, Verdict, answer, clone_args, disruption, param_names
from graders.model.exercise import Case
from graders.model.verdict import Reason, failed, passed
from graders.sandbox.protocol import ErrorCode
from graders.sandbox.session import Deadline, WorkerFailure
from graders.sandbox.shared import SharedArgs

STUB = "raised NotImplementedError"
CALL_MARGIN = 20.0  # times the loop version's time on the largest hidden case that one call may take
CALL_FLOOR = 1.0  # seconds one call may always take


def _size(case: Case) -> int:
    return sum(a.numel() for a in (*case.args, *case.kwargs.values()) if isinstance(a, torch.Tensor))


def call_limit(checks, cases: list[Case], group: str = "hidden") -> float:
    """Seconds one call of ``cases`` may take (see the module's docstring); the loop version is timed once per
    grading run and ``group`` of cases, here, on the run's own cases (every student of a run gets the same)."""
    ex, run = checks.ex, checks.run_state
    known = getattr(run, "loop_case_times", None) if checks.reference is not None else None
    key = (ex.name, checks.reference.key(ex), group) if known is not None else None
    if known is not None and key in known:
        loop = known[key]
    else:
        largest = max(cases, key=_size)
        start = time.perf_counter()
        try:
            ex.loop(*clone_args(largest.args), **largest.kwargs)
            loop = time.perf_counter() - start
        except Exception:  # noqa: BLE001 - a loop version that cannot take this case: the whole call timeout
            loop = float("inf")
        if known is not None:
            known[key] = loop
    return min(checks.timeouts.call, max(CALL_FLOOR, CALL_MARGIN * loop))


def correct(checks) -> Verdict:
    """The first hidden case that fails, said with its label; an answer that raises NotImplementedError on the very
    first case is the stub as handed out, and is said to be unwritten (its case says nothing to act on). A process
    that died or missed its deadline decides nothing: ``Disrupted`` (graders.checks.vocabulary) is raised."""
    hidden = list(checks.ex.hidden(checks.gen))
    large = checks.ex.large_case(checks.gen, hidden)
    cases = [*hidden, large]
    limit = call_limit(checks, hidden) if hidden else checks.timeouts.call
    limits = [limit] * len(hidden) + [call_limit(checks, [large], "large")]  # a hang costs the small cases' limit
    if checks.submission.outside_findings(checks.ex.name):
        limits[0] = checks.timeouts.call
    for i, case in enumerate(cases):
        try:
            found = check_case(checks, case, limits[i])
        except Disrupted as exc:
            raise Disrupted(exc.reason, f"{exc} ({case.label}; {describe_args(case.args)})") from None
        if found and i == 0 and found[1].startswith(STUB):
            return failed("correct", Reason.NOT_WRITTEN, f"not written yet: `{checks.ex.name}` still raises "
                          "NotImplementedError (the stub's line); replace it with your answer")
        if found:
            return failed("correct", found[0], f"{found[1]} ({case.label}; {describe_args(case.args)})")
    return passed("correct", f"all {len(cases)} hidden cases match in shape, dtype and value", {"cases": len(cases)})


def check_case(checks, case: Case, limit: float) -> tuple[Reason, str] | None:
    """What is wrong with the student's output for ``case`` (a call may take ``limit`` seconds), or None;
    ``Disrupted`` when the process died or missed its deadline."""
    ex = checks.ex
    expected_args = clone_args(case.args)
    expected = ex.reference(*expected_args, **case.kwargs)
    with SharedArgs(case.args) as shared:
        try:
            with checks.budgeted(limit) as allowed:
                reply, _ = checks.student.request("call", allowed, fds=shared.fds, regions=shared.regions,
                                                  name=ex.name, args=shared.args, kwargs=case.kwargs)
            out = answer(reply)["out"]
        except Deadline as exc:
            raise Disrupted(Reason.DEADLINE, f"{exc} ({CALL_MARGIN:g}x the loop version's time on the largest "
                            f"hidden case, at least {CALL_FLOOR:g} s): an answer that never returns, or far slower "
                            "than any loop") from None
        except WorkerFailure as exc:
            raise disruption(exc) from None
        except StudentError as exc:
            return (Reason.NOT_DEFINED if exc.code is ErrorCode.NOT_DEFINED else Reason.RAISED), str(exc)
        where = shared.region_of(out)
        is_arg0 = shared.is_argument(out, 0)
        args_after, out = shared.snapshot(out)  # what the grader reads in its own memory, now
    rtol, atol = ex.tolerance(expected.dtype)
    problem = mismatch(out, expected, rtol, atol, ex.magnitude(case.args))
    if problem:  # what was observed, and nothing of its cause (graders.checks.precision observes float32 work)
        return Reason.WRONG_VALUE, problem
    names = param_names(ex.signature)
    for i, (before, after) in enumerate(zip(expected_args if ex.in_place else case.args, args_after, strict=True)):
        if isinstance(before, torch.Tensor) and mismatch(after, before, 0.0, 0.0):
            what = names[i] if i < len(names) else f"argument {i + 1}"
            if ex.in_place and i == 0:
                return Reason.MODIFIED_INPUT, f"`{what}` was not changed in place as required"
            return Reason.MODIFIED_INPUT, f"modified its input `{what}`; compute the result without writing into " \
                                          "the inputs"
    if ex.in_place and not is_arg0:
        return Reason.MODIFIED_INPUT, f"returned a new tensor; return `{names[0]}` itself after changing it in place"
    if ex.must_be_view and where != 0:
        return Reason.NOT_A_VIEW, f"returned a copy; return a view that shares the storage of `{names[0]}`"
    return None
