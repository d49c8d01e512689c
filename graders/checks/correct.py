"""The "correct" part: every hidden case, compared with the reference by the grader in its own memory.

Each case's tensor arguments live in shared memory the grader owns (graders.sandbox.shared): after the
call, the grader reads them in its own mapping to see whether the function changed them in place, and an
output that lives there is rebuilt from that mapping, so an in-place or view requirement is observed,
never reported.
"""
from __future__ import annotations

import torch

from graders.checks.compare import describe_args, mismatch
from graders.checks.vocabulary import StudentError, Verdict, answer, clone_args, param_names
from graders.model.exercise import Case
from graders.sandbox.session import WorkerFailure
from graders.sandbox.shared import SharedArgs

STUB = "raised NotImplementedError"


def correct(checks) -> Verdict:
    """The first hidden case that fails, said with its label; an answer that raises NotImplementedError on the very
    first case is the stub as handed out, and is said to be unwritten (its case says nothing to act on)."""
    cases = list(checks.ex.hidden(checks.gen))
    for i, case in enumerate(cases):
        problem = check_case(checks, case)
        if problem and i == 0 and problem.startswith(STUB):
            return Verdict("correct", False, f"not written yet: `{checks.ex.name}` still raises NotImplementedError "
                           "(the stub's line); replace it with your answer")
        if problem:
            return Verdict("correct", False, f"{problem} ({case.label}; {describe_args(case.args)})")
    return Verdict("correct", True, f"all {len(cases)} hidden cases match in shape, dtype and value",
                   {"cases": len(cases)})


def check_case(checks, case: Case) -> str | None:
    """What is wrong with the student's output for ``case``, or None."""
    ex = checks.ex
    expected_args = clone_args(case.args)
    expected = ex.reference(*expected_args, **case.kwargs)
    with SharedArgs(case.args) as shared:
        try:
            reply, _ = checks.student.request("call", checks.budget(checks.timeouts.call), fds=shared.fds,
                                              regions=shared.regions, name=ex.name, args=shared.args,
                                              kwargs=case.kwargs)
            out = answer(reply)["out"]
        except WorkerFailure as exc:
            return str(exc)
        except StudentError as exc:
            return str(exc)
        where = shared.region_of(out)
        is_arg0 = shared.is_argument(out, 0)
        args_after, out = shared.snapshot(out)  # what the grader reads in its own memory, now
    problem = mismatch(out, expected, ex.rtol, ex.atol, ex.magnitude(case.args))
    if problem:
        return problem
    names = param_names(ex.signature)
    for i, (before, after) in enumerate(zip(expected_args if ex.in_place else case.args, args_after, strict=True)):
        if isinstance(before, torch.Tensor) and mismatch(after, before, 0.0, 0.0):
            what = names[i] if i < len(names) else f"argument {i + 1}"
            if ex.in_place and i == 0:
                return f"`{what}` was not changed in place as required"
            return f"modified its input `{what}`; compute the result without writing into the inputs"
    if ex.in_place and not is_arg0:
        return f"returned a new tensor; return `{names[0]}` itself after changing it in place"
    if ex.must_be_view and where != 0:
        return f"returned a copy; return a view that shares the storage of `{names[0]}`"
    return None
