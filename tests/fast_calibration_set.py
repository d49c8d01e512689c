"""The answers "fast" is calibrated on (issue 40, item 2): every exercise of the six assignments, kinds near and far
from the bar.

Kinds (``Answer.kind``):

- ``reference``: the exercise's reference; ``alternative``: one of its other vectorized formulations
  (``Exercise.alternatives``); ``half loop``: a loop over one growing axis with vectorized slices
  (``Exercise.half_loops``); ``loop version``: the notebook's own loop version, renamed; ``novice loop``: a novice's
  element-by-element first answer (tests/novice_loops.py, broadcasting only);
- ``control <c>x``: calibration controls near the bar: the reference, then ``r`` more calls of it on the same
  inputs (on copies, for an exercise that works in place), then ``clones`` copies of its result (or of its first
  tensor input), its result the first call's. Its cost is about ``1 + r`` times the reference's, with
  ``r = floor(c * ref_factor) - 1``, plus the copies, which make up the fraction: ``clones`` is 0 here (so a
  control lands at or below ``c`` times the exercise's ``ref_factor`` bar; ``CONTROLS``: 0.5, 0.77, 1.0, 1.3 and
  2), and benchmarks/fast_calibration.py tunes it in process (``tuned``) so that each lands at about ``c`` times the
  bar. Where it lands is measured, not assumed: the benchmark measures each answer in process beside the reference.

``answers("default")``: per exercise, one of the first four kinds (cycling through them over the exercises, so each
kind meets every assignment) and one control (cycling through ``CONTROLS``), plus broadcasting's novice loops: 56
answers. ``answers("all")``: per exercise every kind, every alternative and half loop, and every control.
Each ``Answer.source`` is an answer cell, its function named as the exercise; ``slot`` groups answers that can share
one submitted program (one answer per exercise).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from novice_loops import ASSIGNMENT as NOVICE_ASSIGNMENT
from novice_loops import answer as novice_answer

from graders.course.personas import loop_answer
from graders.model.exercise import Assignment, Exercise

CONTROLS = (0.5, 0.77, 1.0, 1.3, 2.0)
PRIMARY = ("reference", "alternative", "half loop", "loop version")
SCOPES = ("default", "all")


@dataclass(frozen=True)
class Answer:
    assignment: str
    exercise: str
    kind: str
    source: str
    slot: int  # answers of one assignment and slot are graded as one program (one answer per exercise)
    target: float | None = None  # a control's intended ratio to the bar
    clones: int = 0  # a control's copies of its result (see control_source)


def control_repeats(ex: Exercise, target: float) -> int:
    """How many more calls of the reference a control at ``target`` times the bar makes (the rest is copies)."""
    return max(0, math.floor(target * ex.ref_factor + 1e-9) - 1)


def control_source(ex: Exercise, target: float, clones: int = 0) -> str:
    """The reference under a helper's name, and the exercise's function: the helper's result, after
    ``control_repeats`` more calls of it (unrolled: the control's cost is tensor work, not a Python loop) and
    ``clones`` copies of its result (of its first tensor input when the result is not a tensor)."""
    helper = f"_reference_{ex.name}"
    again = (f"    {helper}(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)\n"
             if ex.in_place else f"    {helper}(*args, **kwargs)\n")
    copies = ("    extra = out if isinstance(out, torch.Tensor) else "
              "next(a for a in args if isinstance(a, torch.Tensor))\n"
              f"    for _ in range({clones}):\n        extra.clone()\n") if clones else ""
    return (ex.source_as(ex.reference, helper) + f"\n\ndef {ex.name}(*args, **kwargs):\n"
            f"    out = {helper}(*args, **kwargs)\n" + again * control_repeats(ex, target) + copies
            + "    return out\n")


def tuned(answer: Answer, ex: Exercise, clones: int) -> Answer:
    """A control with ``clones`` copies added (benchmarks/fast_calibration.py measures how many)."""
    if answer.target is None:
        raise ValueError(f"{answer.exercise} {answer.kind}: only a control is tuned")
    return replace(answer, source=control_source(ex, answer.target, clones), clones=clones)


def _primary(ex: Exercise, kind: str, which: int = 0) -> str:
    if kind == "reference":
        return ex.reference_source()
    if kind == "alternative":
        return ex.source_as(ex.alternatives[which % len(ex.alternatives)])
    if kind == "half loop":
        return ex.source_as(ex.half_loops[which % len(ex.half_loops)])
    return loop_answer(ex)


def answers(course: dict[str, Assignment], scope: str = "default") -> list[Answer]:
    """The calibration set over ``course``'s assignments (name -> Assignment), in the course's order."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}: one of {', '.join(SCOPES)}")
    out: list[Answer] = []
    i = 0
    for name, assignment in course.items():
        for ex in assignment.exercises:
            if scope == "default":
                kind = PRIMARY[i % len(PRIMARY)]
                out.append(Answer(name, ex.name, kind, _primary(ex, kind, i // len(PRIMARY)), 0))
                target = CONTROLS[i % len(CONTROLS)]
                out.append(Answer(name, ex.name, f"control {target:g}x", control_source(ex, target), 1, target))
            else:
                slot = 0
                variants = [("reference", ex.reference_source())]
                variants += [("alternative", ex.source_as(fn)) for fn in ex.alternatives]
                variants += [("half loop", ex.source_as(fn)) for fn in ex.half_loops]
                variants.append(("loop version", loop_answer(ex)))
                for kind, source in variants:
                    out.append(Answer(name, ex.name, kind, source, slot))
                    slot += 1
                for target in CONTROLS:
                    out.append(Answer(name, ex.name, f"control {target:g}x", control_source(ex, target), slot,
                                      target))
                    slot += 1
            if name == NOVICE_ASSIGNMENT:
                out.append(Answer(name, ex.name, "novice loop", novice_answer(ex.name), 99))
            i += 1
    return out
