"""What a student runs in JupyterLab: the visible examples, with the grader's own messages.

The released notebook imports ``expect`` and ``check_loops`` from here. They
use the same comparison and the same AST rules as the autograder, on the
visible examples only; the hidden cases and the reference never reach the
student's machine.
"""
from __future__ import annotations

import inspect
import textwrap

from graders.checks.compare import mismatch
from graders.checks.static import LOOP_HINT, Submission, summarize


def expect(call: str, thunk, expected, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Run ``thunk()`` and print whether it matches ``expected``; never raises."""
    _expect(call, thunk, expected, rtol, atol)


def _expect(call, thunk, expected, rtol, atol) -> bool:
    try:
        out = thunk()
    except NotImplementedError:
        print(f"[ ] {call}: not implemented yet")
        return False
    except Exception as exc:  # noqa: BLE001 - the student's function may raise anything
        print(f"[x] {call} raised {type(exc).__name__}: {exc}")
        return False
    problem = mismatch(out, expected, rtol, atol)
    print(f"[x] {call}: {problem}" if problem else f"[ok] {call}")
    return problem is None


def check_loops(fn, forbidden=(), loop_hint: str = LOOP_HINT, preamble: str = "") -> None:
    """Print the AST findings the grader would report for ``fn`` itself (helpers in other cells are not seen here)."""
    _check_loops(fn, forbidden, loop_hint, preamble)


def _check_loops(fn, forbidden, loop_hint, preamble) -> bool:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        print(f"[?] could not read the source of {getattr(fn, '__name__', fn)}")
        return False
    cells = [("preamble", preamble), ("your cell", source)]  # the preamble's imports name library calls
    findings = Submission(cells).iteration_findings(fn.__name__, forbidden, loop_hint)
    print(f"[x] {summarize(findings)}" if findings else f"[ok] no Python-level iteration in {fn.__name__}")
    return not findings
