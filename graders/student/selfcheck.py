"""What a student runs in JupyterLab: the grader's checks on the visible examples, with the grader's messages.

The released notebook's setup cell registers what the self-check needs to know about
each exercise (``register_exercises``: forbidden names, tolerances, the speed bar), so
the examples cell stays short: ``examples_of(name)``, ``Examples.expect`` (printing
``[ok]``/``[x]`` per example) and ``Examples.report`` (static analysis of all the code
the kernel ran, work counted at two sizes, a speed estimate). Each grade cell calls
``grade_part``, which runs the same check for its part and raises with the grader's
message, in one line and without the kit's frames, when the part would fail, so
``nbgrader validate`` (and JupyterLab's Validate, with ``vecgrade[lab]``) fails on a stub
or a loop. "fast" is never passed here: only the grader's timing decides it. The
autograder ignores what this prints or raises: it decides every part in its own process,
on hidden inputs. Nothing here knows a reference solution or a hidden case.
"""
from __future__ import annotations

import ast
import inspect
import os
import signal
import sys
import textwrap
import threading
from dataclasses import dataclass, field

import torch

from graders.checks.compare import mismatch
from graders.checks.nesting import TooDeep
from graders.checks.rules import forbidden_ops_used, grows
from graders.checks.static import LOOP_HINT, Finding, Submission, summarize
from graders.model.errors import VecgradeError
from graders.model.verdict import GATED_MESSAGE as GATED
from graders.student import history, work

NOT_TIMED = "not checked here: the grader times it"
FAR = 6.0  # an estimate this many times off the speed bar is worth a word; nearer, only the grader's timing tells
# under autograde the grader decides every part elsewhere: an example call that never ends costs the class
# this long, not the kernel's whole cell timeout. It decides no mark, only what the feedback says of the example;
# the course's loop versions take at most 1.5 ms on a visible example, 160x less (patchify's 256x256 image: 1.2 s,
# cut either way); a hanging notebook cost the class 0.5 s of CPU here at 0.5 s
AUTOGRADE_EXAMPLE_SECONDS = 0.25


class _StillRunning(BaseException):
    """An example call passed its time under autograde (BaseException: a student's `except Exception`
    does not swallow it)."""


def _bounded(call):
    """``call()``, stopped after ``AUTOGRADE_EXAMPLE_SECONDS`` under autograde (where the timer is usable)."""
    if not _autograding() or threading.current_thread() is not threading.main_thread():
        return call()

    def stop(signum, frame):
        raise _StillRunning

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, AUTOGRADE_EXAMPLE_SECONDS)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


class SelfCheckError(VecgradeError):
    """What a self-check cell raises: IPython shows it as one line (``_render_traceback_``), not as a
    traceback through the kit's frames, so the student reads the one message that matters."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


class Incorrect(SelfCheckError):
    """The part "correct" would fail (same name as the grader's error output)."""


class NotVectorized(SelfCheckError):
    """The part "vectorized" would fail."""


class TooSlow(SelfCheckError):
    """The part "fast" cannot be had yet: the answer is not correct."""


class NotReady(SelfCheckError):
    """A cell was run before the one it depends on."""


class Interrupted(SelfCheckError):
    """The student stopped the kernel while their function was running."""


ERRORS = {"correct": Incorrect, "vectorized": NotVectorized, "fast": TooSlow}


@dataclass
class Example:
    """A visible example: ``call`` evaluated over the values its names had when the examples cell ran."""

    call: str
    bindings: dict
    expected: torch.Tensor  # what `mismatch` compares the output against
    rtol: float
    atol: float
    label: str = ""  # how the lines name it, when its call alone does not tell it from another example

    @property
    def name(self) -> str:
        return self.label or self.call

    def problem(self, function: str | None = None) -> str | None:
        """The grader's message for this example, or None when it matches.

        The exercise's own name is looked up afresh (the student's latest definition);
        tensors are copied, so an in-place answer cannot change the next run's input.
        """
        namespace = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in self.bindings.items()}
        if function:
            namespace[function] = _function(function)
            if namespace[function] is None:
                return f"`{function}` is not defined yet: run your answer cell first"
        try:
            out = _bounded(lambda: eval(self.call, namespace))
        except KeyboardInterrupt:
            raise Interrupted(f"stopped while `{self.call}` was running") from None
        except _StillRunning:
            return (f"still running after {AUTOGRADE_EXAMPLE_SECONDS:g} s, stopped (under autograde; "
                    "the grade cells say what the grader decided)")
        except NotImplementedError:
            return "not implemented yet"
        except Exception as exc:  # noqa: BLE001 - the student's function may raise anything
            return f"raised {type(exc).__name__}: {exc}"
        return mismatch(out, self.expected, self.rtol, self.atol)


def _bindings(call: str, namespace: dict) -> dict:
    names = {n.id for n in ast.walk(ast.parse(call, mode="eval")) if isinstance(n, ast.Name)}
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in namespace.items() if k in names}


@dataclass
class Examples:
    """One exercise's visible examples and the facts its checks need (all public)."""

    name: str
    assignment: str = ""
    loop_hint: str = LOOP_HINT
    forbidden: tuple = ()
    forbidden_ops: tuple = ()
    shape_params: tuple = ()  # parameters as fixed-size as a tensor's shape (``Exercise.shape_params``)
    speedup: float = 10.0
    bench_size: int | None = None  # the size the grader times "fast" at
    rtol: float = 1e-5  # the visible examples' tolerances (their expected values are rounded in the notebook)
    atol: float = 1e-6
    preamble: str = "import torch"
    examples: list[Example] = field(default_factory=list)
    _measured: dict = field(default_factory=dict)  # (what, function) -> result: the report and grade cells share it

    def expect(self, call: str, expected, rtol: float | None = None, atol: float | None = None,
               label: str = "") -> None:
        """Record a visible example (``call`` over the caller's current variables) and print whether it matches;
        ``label`` names it where another example has the same call (``vecgrade build`` writes it)."""
        example = Example(call, _bindings(call, sys._getframe(1).f_globals), expected,
                          self.rtol if rtol is None else rtol, self.atol if atol is None else atol, label)
        self.examples.append(example)
        _print_example(example.name, example.problem(self.name))

    # -- the three parts, as (passed, message) -----------------------------------------------
    def correct(self) -> tuple[bool, str]:
        for example in self.examples:
            problem = example.problem(self.name)
            if problem:
                return False, f"{example.name}: {problem}"
        matched = "the visible example matches" if len(self.examples) == 1 else \
            f"all {len(self.examples)} visible examples match"
        return True, f"{matched} (the grader also checks hidden inputs)"

    def findings(self, fn=None) -> list[Finding]:
        """The grader's static findings over every cell the kernel ran."""
        submission = Submission(self.program(fn))
        return submission.iteration_findings(self.name, self.forbidden, self.loop_hint, self.shape_params)

    def program(self, fn=None) -> list[tuple[str, str]]:
        """The kernel's cells (IPython's history); the function's own source when no cell defined it."""
        runs = history.kernel_history() or []
        cells = history.program_cells(runs, self.preamble, answers=list(_REGISTRY) + [self.name])
        if not any(label == f"your `{self.name}` cell" for label, _ in cells):
            fn = fn or _function(self.name)
            try:
                cells.append((f"your `{self.name}` cell", textwrap.dedent(inspect.getsource(fn))))
            except (OSError, TypeError):
                pass  # nothing to read: the iteration check finds nothing, the work count still runs
        return cells

    def vectorized(self) -> tuple[bool, str]:
        if not self.correct()[0]:
            return False, GATED
        try:
            findings = self.findings()
        except TooDeep as exc:  # the grader refuses such a notebook, with this reason
            return False, str(exc)
        if findings:
            return False, summarize(findings)
        try:
            counted = self.count()
        except Exception as exc:  # noqa: BLE001 - the student's function may raise anything
            return False, f"raised {type(exc).__name__}: {exc} while its work was being counted"
        if counted is None:
            return True, "no Python-level iteration found in the code (work not counted: inputs file missing)"
        (small, large), (c1, c2) = counted
        used = forbidden_ops_used(self.forbidden_ops, c2["ops"])
        if used:
            return False, f"dispatched `aten.{used[0]}`, which is forbidden in this exercise"
        (ops1, lines1), (ops2, lines2) = [(sum(c["ops"].values()), c["lines"]) for c in (c1, c2)]
        if grows([ops1, ops2]) or grows([lines1, lines2]):
            top = max(c2["ops"], key=lambda k: c2["ops"][k] - c1["ops"].get(k, 0), default="")
            return False, (f"the work grows with the input: {ops1} ATen ops and {lines1} Python lines at size "
                           f"{small}, {ops2} and {lines2} at size {large} (most added: `{top}`), so Python-level "
                           f"iteration is still running")
        return True, f"no Python-level iteration; {ops1} ATen ops at size {small}, {ops2} at size {large}"

    def count(self):
        inputs = (work.load_inputs(self.assignment) or {}).get(self.name)
        fn = _function(self.name)
        if inputs is None or fn is None:
            return None
        if ("count", fn) not in self._measured:
            self._measured["count", fn] = inputs["sizes"], [work.count_work(fn, args) for args in inputs["args"]]
        return self._measured["count", fn]

    def fast(self) -> tuple[bool, str]:
        """Only the grader decides "fast": here it is gated on correct, and otherwise an estimate, never a pass."""
        if not self.correct()[0]:
            return False, GATED
        where = f" at size {self.bench_size}" if self.bench_size else ""
        bar = f"{NOT_TIMED}{where} and requires {self.speedup:g}x the loop version's speed"
        inputs = (work.load_inputs(self.assignment) or {}).get(self.name)
        fn, loop = _function(self.name), _function(f"{self.name}_loop")
        if inputs is None or fn is None or loop is None:
            return True, (f"{bar} (no estimate: run the loop version's cell, and keep "
                          f"{work.inputs_path(self.assignment)} next to the notebook)")
        size, args = inputs["sizes"][-1], inputs["args"][-1]
        if ("speed", fn, loop) not in self._measured:
            try:
                self._measured["speed", fn, loop] = work.best_time(loop, args) / work.best_time(fn, args)
            except Exception as exc:  # noqa: BLE001 - the student's function may raise anything
                return False, f"raised {type(exc).__name__}: {exc} on a benchmark input"
        return True, f"{bar}; {estimate(self._measured['speed', fn, loop], size, self.speedup)}"

    def report(self) -> None:
        """Print the vectorized check and the speed estimate (after the examples' own lines)."""
        if _autograding():
            return
        for part in ("vectorized", "fast"):
            passed, message = _stoppable(getattr(self, part))
            if message == GATED:
                print(f"[ ] {part}: {message}")
            elif part == "fast":
                print(f"[~] fast: {message}" if passed else f"[x] fast: {message}")
            else:
                print(f"[ok] {part}: {message}" if passed else f"[x] {part}: {message}")


def estimate(ratio: float, size: int, required: float) -> str:
    """The speed estimate in words, saying so when it is far from the bar (its size is smaller than the grader's,
    so only a large gap tells anything)."""
    text = f"estimate on this machine at size {size}: about {ratio:.1f}x faster than the loop version"
    if ratio * FAR <= required:
        return f"{text}, far below {required:g}x: as it is, it would most likely fail"
    if ratio >= required * FAR:
        return f"{text}, far above {required:g}x"
    return text


def _stoppable(check):
    """``check()``, with the student's Ctrl-C (or Validate's timeout) on their own function as one line."""
    try:
        return check()
    except KeyboardInterrupt:
        raise Interrupted("stopped while your function was running") from None


_REGISTRY: dict[str, Examples] = {}
_FACTS: dict[str, dict] = {}  # exercise -> what the setup cell registered


def register_exercises(assignment: str, exercises: dict[str, dict], preamble: str = "import torch") -> None:
    """What the setup cell calls: each exercise's public facts (forbidden names, tolerances, speed bar)."""
    for name, facts in exercises.items():
        _FACTS[name] = {"assignment": assignment, "preamble": preamble, **facts}


def examples_of(name: str, **facts) -> Examples:
    """Start (or restart) the visible examples of exercise ``name``; the grade cells check against them."""
    _REGISTRY[name] = Examples(name, **{**_FACTS.get(name, {}), **facts})
    return _REGISTRY[name]


def grade_part(name: str, part: str) -> None:
    """What a grade cell runs: raise with the grader's message when ``part`` of ``name`` would fail."""
    if _autograding():
        print(f"{part}: decided by the autograder")
        return
    examples = _REGISTRY.get(name)
    if examples is None:
        raise NotReady(f"run the examples cell of `{name}` first: it records the examples this cell checks")
    passed, message = _stoppable(getattr(examples, part))
    if not passed:
        raise ERRORS[part](message)
    if part == "fast":
        print(f"fast: {message}.")
    else:
        print(f"{part}: passes the self-check. {message}. The autograder decides this part on hidden inputs.")


def _autograding() -> bool:
    """Under ``nbgrader autograde`` the grader overwrites these cells' outputs: skip the work."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def _function(name: str):
    """The student's current definition of ``name`` in the kernel's namespace."""
    from IPython import get_ipython
    shell = get_ipython()
    namespace = shell.user_ns if shell is not None else vars(sys.modules["__main__"])
    fn = namespace.get(name)
    return fn if callable(fn) else None


def _print_example(call: str, problem: str | None) -> None:
    if problem == "not implemented yet" or (problem or "").endswith("run your answer cell first"):
        print(f"[ ] {call}: {problem}")
    elif problem and problem.startswith("raised "):
        print(f"[x] {call} {problem}")
    else:
        print(f"[x] {call}: {problem}" if problem else f"[ok] {call}")


def expect(call: str, thunk, expected, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Run ``thunk()`` and print whether it matches ``expected``; never raises."""
    _print_example(call, Example("thunk()", {"thunk": thunk}, expected, rtol, atol).problem())


def check_loops(fn, forbidden=(), loop_hint: str = LOOP_HINT, preamble: str = "import torch") -> None:
    """Print the grader's static findings for ``fn`` over all the code the kernel ran."""
    checks = Examples(fn.__name__, forbidden=tuple(forbidden), loop_hint=loop_hint, preamble=preamble)
    try:
        findings = checks.findings(fn)
    except TooDeep as exc:
        print(f"[x] {exc}")
        return
    print(f"[x] {summarize(findings)}" if findings else f"[ok] no Python-level iteration in {fn.__name__}")
