"""The three parts of an exercise: correct, vectorized, fast.

Each check runs in the trusted process. It generates the inputs, asks a
worker to call the student's function, and decides from what comes back:
expected outputs are computed here, times are measured here, and the AST is
read here. The student's process only ever sees arguments.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

from graders.checks.compare import describe_args, mismatch
from graders.model.exercise import Case, Exercise
from graders.sandbox.session import WorkerFailure, WorkerSession
from graders.checks.static import Finding, Submission, summarize

@dataclass
class Verdict:
    part: str
    passed: bool
    message: str
    figures: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Timeouts:
    """Seconds one call of the student's function may take, per purpose."""

    call: float = 10.0
    count: float = 20.0
    bench_min: float = 2.0


def _clone(args):
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


def _param_names(signature: str) -> list[str]:
    inside = signature[signature.index("(") + 1: signature.rindex(")")]
    return [p.split("=")[0].strip() for p in inside.split(",") if p.strip()]


class ExerciseChecks:
    """The checks of one exercise for one submission."""

    def __init__(self, ex: Exercise, student: WorkerSession, reference: WorkerSession,
                 submission: Submission, notebook_findings: list[Finding], seed: int,
                 timeouts: Timeouts = Timeouts()):
        self.ex, self.student, self.reference = ex, student, reference
        self.submission, self.notebook_findings = submission, notebook_findings
        self.gen = torch.Generator().manual_seed(seed)
        self.timeouts = timeouts

    def run(self) -> dict[str, Verdict]:
        correct = self.correct()
        if not correct.passed:
            gated = "not graded until the answer is correct"
            return {"correct": correct, "vectorized": Verdict("vectorized", False, gated),
                    "fast": Verdict("fast", False, gated)}
        return {"correct": correct, "vectorized": self.vectorized(), "fast": self.fast()}

    # -- correct ----------------------------------------------------------------------------
    def _call(self, args, kwargs, timeout, return_args=False) -> tuple[dict, float]:
        reply, seconds = self.student.request("call", timeout, name=self.ex.name, args=args,
                                              kwargs=kwargs, return_args=return_args)
        if "error" in reply:
            raise _StudentError(f"raised {reply['error']}")
        return reply["ok"], seconds

    def correct(self) -> Verdict:
        ex = self.ex
        cases = list(ex.hidden(self.gen))
        for case in cases:
            problem = self._check_case(case)
            if problem:
                return Verdict("correct", False, f"{problem} ({case.label}; {describe_args(case.args)})")
        return Verdict("correct", True, f"all {len(cases)} hidden cases match in shape, dtype and value",
                       {"cases": len(cases)})

    def _check_case(self, case: Case) -> str | None:
        ex = self.ex
        expected_args = _clone(case.args)
        expected = ex.reference(*expected_args, **case.kwargs)
        try:
            reply, _ = self._call(case.args, case.kwargs, self.timeouts.call, return_args=True)
        except (WorkerFailure, _StudentError) as exc:
            return str(exc)
        problem = mismatch(reply["out"], expected, ex.rtol, ex.atol, ex.magnitude(case.args))
        if problem:
            return problem
        names = _param_names(ex.signature)
        for i, (before, after) in enumerate(zip(expected_args if ex.in_place else case.args, reply["args_after"])):
            if isinstance(before, torch.Tensor) and mismatch(after, before, 0.0, 0.0):
                what = names[i] if i < len(names) else f"argument {i + 1}"
                if ex.in_place and i == 0:
                    return f"`{what}` was not changed in place as required"
                return f"modified its input `{what}`; compute the result without writing into the inputs"
        if ex.in_place and not reply["same_as_arg0"]:
            return f"returned a new tensor; return `{names[0]}` itself after changing it in place"
        if ex.must_be_view and not reply["shares_arg0"]:
            return f"returned a copy; return a view that shares the storage of `{names[0]}`"
        return None

    # -- vectorized ---------------------------------------------------------------------------
    def vectorized(self) -> Verdict:
        ex = self.ex
        findings = self.submission.iteration_findings(ex.name, ex.forbidden, ex.loop_hint)
        findings += self.notebook_findings
        if findings:
            return Verdict("vectorized", False, summarize(findings), {"findings": len(findings)})
        small, large = ex.count_sizes
        try:
            counts = [self._count(n) for n in (small, large)]
        except (WorkerFailure, _StudentError) as exc:
            return Verdict("vectorized", False, f"{exc} while its work was being counted")
        used = sorted(_op_patterns(ex.forbidden_ops, counts[1]["ops"]))
        if used:
            return Verdict("vectorized", False, f"dispatched `aten.{used[0]}`, which is forbidden in this exercise")
        (ops1, lines1), (ops2, lines2) = [(sum(c["ops"].values()), c["lines"]) for c in counts]
        figures = {"ops": (ops1, ops2), "lines": (lines1, lines2)}
        if _grows(ops1, ops2) or _grows(lines1, lines2):
            top = max(counts[1]["ops"], key=lambda k: counts[1]["ops"][k] - counts[0]["ops"].get(k, 0), default="")
            return Verdict("vectorized", False,
                           f"the work grows with the input: {ops1} ATen ops and {lines1} Python lines at size {small}, "
                           f"{ops2} and {lines2} at size {large} (most added: `{top}`), so Python-level iteration "
                           f"is still running", figures)
        return Verdict("vectorized", True,
                       f"no Python-level iteration; {ops1} ATen ops at size {small}, {ops2} at size {large}", figures)

    def _count(self, n: int) -> dict:
        args = self.ex.sized(self.gen, n)
        reply, _ = self.student.request("count", self.timeouts.count, name=self.ex.name, args=args, kwargs={})
        if "error" in reply:
            raise _StudentError(f"raised {reply['error']}")
        return reply["ok"]

    # -- fast ---------------------------------------------------------------------------------
    def fast(self, reps: int = 7, loop_reps: int = 3) -> Verdict:
        ex = self.ex
        loop_t, student_t, ref_t = [], [], []
        n = ex.bench_size
        try:
            for rep in range(reps):
                if rep < loop_reps:
                    _, t = self.reference.request("call", 600, name=ex.loop_name, args=ex.sized(self.gen, n), kwargs={})
                    loop_t.append(t)
                args = ex.sized(self.gen, n)
                expected = ex.reference(*_clone(args))
                timeout = max(self.timeouts.bench_min, 3 * min(loop_t))
                reply, t = self._call(args, {}, timeout)
                student_t.append(t)
                if mismatch(reply["out"], expected, ex.rtol, ex.atol, ex.magnitude(args)):
                    return Verdict("fast", False, "gave a wrong result on a benchmark input while being timed")
                _, t = self.reference.request("call", 600, name=ex.name, args=ex.sized(self.gen, n), kwargs={})
                ref_t.append(t)
        except (WorkerFailure, _StudentError) as exc:
            return Verdict("fast", False, f"{exc} on a benchmark input")
        speedup = min(loop_t) / min(student_t)
        factor = min(student_t) / min(ref_t)
        figures = {"speedup": speedup, "ref_factor": factor, "reference_speedup": min(loop_t) / min(ref_t)}
        if speedup < ex.speedup:
            return Verdict("fast", False, f"speedup {speedup:.1f}x over the loop version, required {ex.speedup:g}x", figures)
        if factor > ex.ref_factor:
            return Verdict("fast", False, f"{factor:.1f}x slower than the reference solution, allowed {ex.ref_factor:g}x",
                           figures)
        return Verdict("fast", True, f"speedup {speedup:.1f}x over the loop version (required {ex.speedup:g}x)", figures)


class _StudentError(Exception):
    """The student's function raised; the message is shown to the student."""


def _grows(small: int, large: int) -> bool:
    return large > small + max(2, small // 4)


def _op_patterns(patterns, ops) -> list[str]:
    return [op for op in ops if any(re.fullmatch(p.replace("*", ".*"), op) for p in patterns)]
