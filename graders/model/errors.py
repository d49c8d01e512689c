"""``VecgradeError``: the one root of every error the kit raises (as einops has ``EinopsError``).

Contract:

- Every exception class the package defines for an error derives from ``VecgradeError``, directly or
  through a family root of its own module (``WorkerFailure``, ``SelfCheckError``, ``NoGradebook``, ``Slow``).
  ``except VecgradeError`` therefore catches everything the kit means to raise and nothing else: a bug
  (a ``KeyError``, a ``TypeError``) still reaches the traceback it deserves.
- A class that callers (or nbgrader) also catch by a standard type keeps that type as a second base:
  ``class RosterError(VecgradeError, ValueError)``, ``class NoGradebook(VecgradeError, FileNotFoundError)``,
  ``class NotGraded(VecgradeError, NbGraderException)`` (nbgrader reports its own exceptions' messages).
- The message is the whole story, in one line where a person reads it: the ``vecgrade`` command shows it
  after ``error:`` (``graders.model.exits`` has the exit codes).
- Not derived, on purpose: the signals a sandbox or a self-check raises *through a student's code*
  (``graders.sandbox.worker.CellTimeout``, ``CountLimit``, ``graders.student.selfcheck._StillRunning``) are
  ``BaseException`` so that a student's ``except Exception`` cannot swallow them; a ``VecgradeError`` is an
  ``Exception`` and could be swallowed.

This module imports nothing: the sandbox's worker and a student's self-check import it as cheaply as the
instructor's commands do.
"""
from __future__ import annotations

__all__ = ["VecgradeError"]


class VecgradeError(Exception):
    """An error the kit raises on purpose; its message says what went wrong (and, for a person, the fix)."""
