"""Grade one submission of one assignment: every exercise, every part, inside one grading run.

This is the trusted side. It is called by the nbgrader preprocessor during
``nbgrader autograde`` and by ``vecgrade validate``; it never imports the
student's code. Each exercise is judged in a fresh child, forked from one
warm template per student, that has loaded only the program the exercise's
function reaches (``Submission.program_for``): scratch cells, magics and
tampering in cells it does not reach never run there, and a hang or crash
costs only that exercise.

A ``GradingRun`` owns what lives as long as one grading run: the seed of the
hidden cases, the warm templates of the reference (one per kind of
confinement), each exercise's timing calibration (the loop version's time,
the calls per timed request) and the reference's shared timings, measured
once per run rather than once per student, and the timed requests' inputs.
Every template is forked from the process's warm ``ForkServer``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import secrets
import socket
import zlib

import torch

from graders.checks.identity import program_key
from graders.checks.parts import ExerciseChecks
from graders.checks.reference import Reference
from graders.checks.static import Submission, summarize
from graders.checks.timing import Calibration, Staged, draw
from graders.checks.vocabulary import Timeouts, Verdict
from graders.model.exercise import Assignment, Exercise
from graders.model.fingerprint import fingerprint, grader_fingerprint
from graders.model.store import VerdictStore
from graders.model.verdict import Reason, Status, all_parts, disrupted, failed, not_graded, own_doing
from graders.sandbox.budget import MachineOutOfTime, NotebookBudget, OutOfTime
from graders.sandbox.session import ForkServer, Limits, Template, WorkerFailure, WorkerSession

_DIGESTS: dict[int, tuple[Assignment, str]] = {}


def definitions_digest(assignment: Assignment) -> str:
    """The definitions' ``fingerprint``: the assignment's own (its files and the shared ones of its folder,
    ``fingerprint.assignment_fingerprint``), recorded when it was loaded from a folder; for an
    assignment built in code, the same function over what it says about each exercise (code and settings)."""
    if assignment.fingerprint:
        return assignment.fingerprint
    known = _DIGESTS.get(id(assignment))
    if known is not None and known[0] is assignment:
        return known[1]
    parts = {"name": assignment.name, "preamble": assignment.preamble}
    for ex in assignment.exercises:
        for role, fn in (("reference", ex.reference), ("loop", ex.loop), ("hidden", ex.hidden), ("sized", ex.sized),
                         ("terms", ex.terms)):
            try:
                parts[f"{ex.name}.{role}"] = inspect.getsource(fn) if fn is not None else ""
            except (OSError, TypeError):
                parts[f"{ex.name}.{role}"] = repr(fn)
        parts[f"{ex.name}.settings"] = repr((ex.rtol, ex.atol, ex.forbidden, ex.forbidden_ops, ex.count_sizes,
                                             ex.bench_size, ex.speedup, ex.ref_factor, ex.max_ops, ex.max_lines,
                                             ex.in_place, ex.must_be_view, tuple(ex.shape_params)))
    digest = fingerprint(parts)
    _DIGESTS[id(assignment)] = (assignment, digest)
    return digest


def verdict_salt(seed: int, assignment: Assignment, limits: Limits, timeouts: Timeouts, confined: bool) -> str:
    """What a verdict depends on besides the program: the hidden cases' seed, the definitions' fingerprint, the
    grader's own (its rules and measurements) and the grading settings. The one salt of every program key that
    verdicts are shared or kept under."""
    return json.dumps([seed, definitions_digest(assignment), grader_fingerprint(), repr(limits), repr(timeouts),
                       confined])


def exercise_seed(run_seed: int, name: str) -> int:
    """Each exercise draws from its own stream, so adding an exercise changes no other's cases."""
    return (run_seed ^ zlib.crc32(name.encode())) & 0x7FFF_FFFF_FFFF


def restated(verdicts: dict[str, Verdict], ex: Exercise, submission: Submission) -> dict[str, Verdict]:
    """A known program's verdicts for another student: the same verdicts; a static finding's message is
    said again with this student's own cells and lines (the program's key ignores lines, blank or not)."""
    found = verdicts["vectorized"]
    if found.passed or "findings" not in found.figures:
        return verdicts
    findings = submission.iteration_findings(ex.name, ex.forbidden, ex.loop_hint, ex.shape_params)
    if not findings:  # cannot happen for the same program; keep the verdict rather than guess
        return verdicts
    return {**verdicts, "vectorized": dataclasses.replace(found, message=summarize(findings))}


def _this_machine() -> str:
    """What tells this machine from another (and from itself before a reboot): timings measured here hold here."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()} {boot}"


MACHINE = _this_machine()


def combine(into: dict, measured: dict) -> None:
    """Merge reference measurements ``measured`` into ``into`` (both shaped as ``GradingRun.measured`` gives them):
    a calibration is kept once, a shared reference time keeps its fastest measurement (a slow moment only raises
    the bar, see graders.checks.reference)."""
    for key, calibration in measured.get("calibrations", {}).items():
        into.setdefault("calibrations", {}).setdefault(key, calibration)
    times = into.setdefault("reference_times", {})
    for key, (seconds, at) in measured.get("reference_times", {}).items():
        if key not in times or seconds < times[key][0]:
            times[key] = (seconds, at)


class GradingRun:
    """One grading run: its seed, the reference's warm templates, the timing calibrations and shared timings."""

    def __init__(self, seed: int | None = None, limits: Limits = Limits()):
        self.seed = secrets.randbits(48) if seed is None else seed
        torch.set_num_threads(1)  # the grader's comparisons are small; more threads only contend with workers
        self.limits = limits
        self._templates: dict[bool, Template] = {}
        self._spare: Template | None = None  # the next exercise's fresh template, begun (see _grade_exercise)
        self.calibrations: dict[tuple, Calibration] = {}
        self.reference_times: dict[tuple, tuple[float, float]] = {}  # key -> (seconds per call, measured at)
        self.loop_case_times: dict[tuple, float] = {}  # the loop version on the largest hidden case (correct's limit)
        self._bench_inputs: dict[tuple, Staged] = {}
        self.verdicts = VerdictStore()  # program key -> verdicts: one per program per run, only what it earned
        self.keys: dict[str, str] = {}  # exercise name -> program key, of the notebook graded last
        self.computed: set[str] = set()  # the exercises of the notebook graded last whose verdicts were computed
        self.server = ForkServer.shared()  # starts every student's template (and kernel) warm

    def measured(self) -> dict:
        """What this run measured of the reference (calibrations, shared reference times), as plain data that
        another process of this machine may ``adopt`` instead of measuring it again."""
        return {"machine": MACHINE, "calibrations": dict(self.calibrations),
                "reference_times": dict(self.reference_times)}

    def adopt(self, by_machine: dict) -> None:
        """Take what other processes of this run measured on this machine (``by_machine``: machine -> what
        ``measured`` gave there; see ``combine``). Another machine's timings do not hold here."""
        if MACHINE in by_machine:
            combine({"calibrations": self.calibrations, "reference_times": self.reference_times},
                    by_machine[MACHINE])

    @staticmethod
    def code_key(cells) -> str:
        return hashlib.sha256(json.dumps(cells).encode()).hexdigest()

    def stream(self, ex: Exercise, purpose: str) -> torch.Generator:
        """The run's random stream for one purpose of one exercise."""
        return torch.Generator().manual_seed(exercise_seed(self.seed, f"{ex.name} {purpose}"))

    def reference_template(self, sandbox=None) -> Template:
        """The warm template the reference's children are forked from: confined like the students' when
        ``sandbox`` confines them (the same kind of process), unconfined otherwise."""
        confined = sandbox is not None and sandbox.check()
        template = self._templates.get(confined)
        if template is None or not template.alive:
            template = self._templates[confined] = Template(self.limits, sandbox if confined else None, self.server)
            template.start()
        return template

    def reference(self, assignment: Assignment, sandbox=None) -> Reference:
        """The course's reference of ``assignment`` on the timing side of this run."""
        return Reference(self, assignment, self.reference_template(sandbox))

    def bench_inputs(self, ex: Exercise, request: str, k: int) -> Staged:
        """The inputs of one timed request (``request`` names it), the same for every student of the run (and for
        the reference timed beside them): drawn from the run's own stream, new for every call of every request
        (new data; for a shape-only exercise a new shape of equal work: graders.checks.timing.inputs), and
        encoded once per run, not per student. Each request of its own stream, named by the request and its k: two
        requests of one name and different k (the one-call warm-up and the full one) share no input."""
        key = (ex.name, ex.sized, ex.bench_size, request, k)
        if key not in self._bench_inputs:
            self._bench_inputs[key] = draw(ex, ex.name, self.stream(ex, f"{request} of {k} calls"), k)
        return self._bench_inputs[key]

    def grade(self, assignment: Assignment, cells: list[tuple[str, str]], limits: Limits | None = None,
              timeouts: Timeouts = Timeouts(), only: list[str] | None = None, sandbox=None,
              notebook_timeout: float | None = None,
              modules: dict[str, str] | None = None) -> dict[str, dict[str, Verdict]]:
        """Verdicts by exercise name and part for the notebook code ``cells`` (label, source).

        Each exercise is judged in a fresh jail of its own (a template forked for it alone and ended with it), so
        nothing an earlier exercise's code started can reach its evidence. A disrupted exercise (a process that
        died, missed a deadline, was stopped; graders.model.verdict) is graded again, once, in another fresh
        jail: if the same happens there it is the program's own doing, else the clean verdicts stand.

        ``sandbox`` confines the student's templates (and so every child); ``notebook_timeout`` is the notebook's
        time budget (graders.sandbox.budget): the seconds the notebook's own code may run, loading and answering,
        over all its exercises. The parts it did not reach before its code spent them fail ``out_of_time`` (never
        shared or kept); the machine's load that kept it from them (past a wall-clock cap) leaves them not graded.
        A program whose settled verdicts the run's store already holds (by program key: computed in this process,
        or carried by the grading request, graders.engine.request) gets them again, restated at this student's
        own cells and lines. ``modules``: the submission's own modules beside the notebook (name -> source,
        graders.checks.own_modules).
        """
        budget = None if notebook_timeout is None else NotebookBudget(notebook_timeout)
        submission = Submission(cells, modules)
        exercises = [ex for ex in assignment.exercises if only is None or ex.name in only]
        salt = self.salt(assignment, limits or self.limits, timeouts, sandbox)
        self.keys = {ex.name: program_key(submission, ex.name, salt) for ex in exercises}
        self.computed = set()
        results: dict[str, dict[str, Verdict]] = {}
        for ex in exercises:  # what the run already settled comes first (this process's, the request's)
            kept = self.verdicts.get(self.keys[ex.name])
            if kept is not None:
                results[ex.name] = restated(kept, ex, submission)
        todo = [ex for ex in exercises if ex.name not in results]
        if not todo:
            return results
        reference = self.reference(assignment, sandbox)
        try:
            for i, ex in enumerate(todo):
                more = i + 1 < len(todo)
                verdicts = self._grade_exercise(ex, submission, limits, sandbox, reference, timeouts, budget, more)
                if disrupted(verdicts) is not None:
                    again = self._grade_exercise(ex, submission, limits, sandbox, reference, timeouts, budget, more)
                    verdicts = kept_in_time(verdicts, own_doing(again) if disrupted(again) is not None else again)
                key = self.keys[ex.name]
                results[ex.name] = {p: dataclasses.replace(v, key=key) for p, v in verdicts.items()}
                if self.verdicts.put(key, results[ex.name]):  # only what the program earned is shared
                    self.computed.add(ex.name)
        finally:
            self._drop_spare()
        return results

    def salt(self, assignment: Assignment, limits: Limits, timeouts: Timeouts, sandbox) -> str:
        """What else a verdict depends on besides the program: the run's seed, the definitions, the limits."""
        return verdict_salt(self.seed, assignment, limits, timeouts, sandbox is not None and sandbox.check())

    def _grade_exercise(self, ex, submission, limits, sandbox, reference, timeouts, budget: NotebookBudget | None,
                        more: bool = False) -> dict[str, Verdict]:
        """One exercise in a jail of its own: a fresh template, ended (with everything in its jail) afterwards.

        The template is the spare begun beside the previous exercise of this notebook, if any (a jail that has run
        nothing yet, made for this notebook's limits and sandbox); ``more``: another exercise follows, whose
        template is begun now, so that its jail's setup goes on while this exercise is graded. ``budget``: the
        notebook's time budget, charged by the exercise's processes: spent by the notebook's code, every part
        fails ``out_of_time``; the machine's wall-clock cap passed first, none is graded (``Reason.BUDGET``)."""
        if budget is not None:
            try:
                budget.left()
            except (OutOfTime, MachineOutOfTime) as exc:
                return out_of_budget(exc)
        template, self._spare = self._spare or Template(limits or self.limits, sandbox, self.server), None
        with template:
            try:
                template.start()
            except WorkerFailure as exc:
                return all_parts(not_graded, Reason.COULD_NOT_START, f"the jail that runs `{ex.name}` could not "
                                 f"start: {exc}")
            if more:
                self._spare = Template(limits or self.limits, sandbox, self.server)
                self._spare.begin()
            with WorkerSession(submission.program_for(ex.name), template=template, cell_timeout=timeouts.cell,
                               modules=submission.modules_for(ex.name), budget=budget) as student:
                try:
                    student.start()
                except (OutOfTime, MachineOutOfTime) as exc:
                    return out_of_budget(exc)
                except WorkerFailure as exc:
                    return all_parts(not_graded, Reason.KILLED, f"the code of `{ex.name}` could not run: {exc}")
                checks = ExerciseChecks(ex, student, reference, submission, exercise_seed(self.seed, ex.name),
                                        timeouts, run=self, notebook_budget=budget)
                return with_load_errors(checks.run(), ex.name, student.load_errors,
                                        submission.syntax_errors_for(ex.name))

    def _drop_spare(self) -> None:
        """The spare template no exercise took (the notebook's grading ended) is ended, with its jail."""
        spare, self._spare = self._spare, None
        if spare is not None:
            spare.__exit__()

    def close(self) -> None:
        self._drop_spare()
        for template in self._templates.values():
            template.__exit__()
        self._templates.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def out_of_budget(exc: OutOfTime | MachineOutOfTime) -> dict[str, Verdict]:
    """Every part of an exercise the notebook's budget ended before it began: failed ``out_of_time`` when the
    notebook's code spent the budget (its own doing, a 0 never shared), not graded ``budget`` when the machine's
    load kept it from its time."""
    if isinstance(exc, OutOfTime):
        return all_parts(failed, Reason.OUT_OF_TIME, str(exc))
    return all_parts(not_graded, Reason.BUDGET, str(exc))


def kept_in_time(first: dict[str, Verdict], again: dict[str, Verdict]) -> dict[str, Verdict]:
    """The verdicts of an exercise graded again after a disruption (``again``), but for a part the first grading
    decided that the second could not decide because the notebook's code had spent its budget by then: the first's
    verdict, which was earned in time, stands."""
    return {p: first[p] if v.reason is Reason.OUT_OF_TIME and first[p].status is not Status.NOT_GRADED else v
            for p, v in again.items()}


def with_load_errors(verdicts: dict[str, Verdict], name: str, errors: list[str],
                     syntax: list[str] | None = None) -> dict[str, Verdict]:
    """A failed "correct" says what went wrong while the code loaded (a cell that raised, an import that
    failed), not only what followed from it ("no function ... is defined"); and, when the function is not
    defined, each cell it needed that does not run (``syntax``: ``Submission.syntax_errors_for``)."""
    correct = verdicts["correct"]
    syntax = syntax if correct.reason is Reason.NOT_DEFINED else None
    if correct.passed or not (errors or syntax):
        return verdicts
    loaded = "; ".join(errors)
    if syntax:
        cells = "a cell it needs does" if len(syntax) == 1 else "cells it needs do"
        message = f"`{name}` is not defined because {cells} not run: {'; '.join(syntax)}"
        message += f"; while its code loaded: {loaded}" if errors else ""
    elif correct.reason is Reason.NOT_DEFINED:
        message = f"`{name}` was not defined because its code failed while loading: {loaded}"
    else:
        message = f"{correct.message}; while its code loaded: {loaded}"
    return {**verdicts, "correct": dataclasses.replace(correct, message=message)}


def grade_submission(assignment: Assignment, cells: list[tuple[str, str]], seed: int | None = None,
                     limits: Limits = Limits(), timeouts: Timeouts = Timeouts(),
                     only: list[str] | None = None, sandbox=None, run: GradingRun | None = None,
                     notebook_timeout: float | None = None,
                     modules: dict[str, str] | None = None) -> dict[str, dict[str, Verdict]]:
    """Verdicts for one notebook, in ``run`` (or in a run of its own, with ``seed``); ``modules``: the
    submission's own modules beside the notebook (name -> source)."""
    if run is not None:
        return run.grade(assignment, cells, limits, timeouts, only, sandbox, notebook_timeout, modules=modules)
    with GradingRun(seed, limits) as own:
        return own.grade(assignment, cells, limits, timeouts, only, sandbox, notebook_timeout, modules=modules)
