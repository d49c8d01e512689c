"""The nbgrader autograde step that writes trusted verdicts into the grade cells.

It runs after nbgrader's ``Execute`` and before ``SaveAutoGrades``. Whatever
the student's kernel printed or raised in a grade cell is thrown away: the
cell's ``metadata.vecgrade`` becomes this step's verdict (``Verdict.to_json``,
graders.model.verdict), decided by ``graders.checks.submission`` in this (the
grader's) process from a worker that runs the student's code, and the cell's
output is rendered from it. A passing part gets a plain output, a failing part
an error output, which is how ``SaveAutoGrades`` scores them. A submission with
a part that is ``not_graded`` is never scored: this step raises ``NotGraded``,
so nbgrader records nothing (``vecgrade grade`` decides that before recording).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nbconvert.exporters.exporter import ResourcesDict
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.converters.base import NbGraderException
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades
from nbgrader.utils import determine_grade
from traitlets import Bool, Float, Instance, Integer, Unicode

from graders.checks.own_modules import notebook_modules, read_modules
from graders.checks.reader import too_deep
from graders.checks.timeouts import Timeouts
from graders.model.errors import VecgradeError
from graders.model.fingerprint import stamp
from graders.model.notebook import grade_id_of, submission_cells
from graders.model.verdict import ERROR_NAMES, Reason, Status, Verdict, all_parts, cell_verdict, not_graded
from graders.sandbox.policy import Sandbox
from graders.sandbox.spec import Limits

if TYPE_CHECKING:  # torch: imported when a notebook is graded, not when nbgrader_config.py is read
    from graders.checks.submission import GradingRun
    from graders.model.exercise import Assignment

class NotGraded(VecgradeError, NbGraderException):
    """A part could not be graded (graders.model.verdict): nothing of the submission is recorded."""


def verdict_output(verdict: Verdict) -> NotebookNode:
    """The grade cell's output, rendered from the verdict (the only place verdict text is made for a cell)."""
    if verdict.passed:
        return new_output("stream", name="stdout", text=f"{verdict.part}: passed. {verdict.message}\n")
    name = ERROR_NAMES.get(verdict.part, "NotGraded") if verdict.status is Status.FAILED else "NotGraded"
    return new_output("error", ename=name, evalue=verdict.message,
                      traceback=[f"\x1b[0;31m{name}\x1b[0m: {verdict.message}"])


def grading_settings(parent) -> tuple:
    """(limits, timeouts, sandbox) as ``TrustedVerdicts`` configured by ``parent`` grades with them."""
    verdicts = TrustedVerdicts(parent=parent) if not isinstance(parent, TrustedVerdicts) else parent
    sandbox = Sandbox(parent=verdicts)
    return (sandbox.limits(start_timeout=verdicts.load_timeout),
            Timeouts(call=verdicts.call_timeout, cell=verdicts.cell_timeout), sandbox)


def salt_for(config, seed: int, assignment: Assignment) -> str:
    """The salt of every program key a grading under ``config`` shares or keeps verdicts under (the same one
    ``GradingRun.grade`` computes in the process that grades)."""
    from traitlets.config import Configurable

    from graders.checks.submission import verdict_salt
    limits, timeouts, sandbox = grading_settings(Configurable(config=config))
    return verdict_salt(seed, assignment, limits, timeouts, sandbox.check())


class TrustedVerdicts(NbGraderPreprocessor):
    """Decide every vecgrade grade cell outside the student's kernel."""

    assignments_dir = Unicode("assignments", help="Folder of the exercise definitions").tag(config=True)
    seed = Integer(None, allow_none=True,
                   help="Seed of the hidden cases; None draws a new one for each grading run").tag(config=True)
    # the defaults are Timeouts' and Limits' own: one source for each
    call_timeout = Float(Timeouts.call,
                         help="The most seconds one call of a student's function may take; a hidden case's "
                              "call gets 20x the loop version's time on the largest case, at least 1 s, "
                              "within this").tag(config=True)
    load_timeout = Float(Limits.start_timeout,
                         help="Seconds to start a worker and run the notebook's cells").tag(config=True)
    cell_timeout = Float(Timeouts.cell,
                         help="Seconds one cell may run while an exercise's program loads").tag(config=True)
    notebook_timeout = Float(600.0, help="Seconds the notebook's own code may run while its verdicts are decided "
                                         "(loading, calls, counts and timed requests of every exercise); the "
                                         "machine's load is not counted (see How grading works)").tag(config=True)
    run = Instance("graders.checks.submission.GradingRun", allow_none=True,
                   help="The grading run (seed, reference workers, loop times, settled verdicts) of this process, "
                        "handed in by the grading job that runs this step (not a setting); None: one per nbgrader "
                        "app")
    refuse_not_graded = Bool(True, help="Raise NotGraded, so that nbgrader records nothing, when a part could not "
                                        "be graded; vecgrade's own grading decides that itself").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.results: dict[str, dict[str, Verdict]] = {}  # exercise -> part -> verdict, of the notebook graded last
        self.keys: dict[str, str] = {}  # exercise -> program key
        self.computed: list[str] = []  # the exercises whose settled verdicts this step computed (not known before)

    def grading_run(self) -> GradingRun:
        """The run this notebook belongs to: the configured one, else one kept by the exporter (one app)."""
        if self.run is not None:
            return self.run
        holder = self.parent if self.parent is not None else self
        run = getattr(holder, "_vecgrade_run", None)
        if run is None:
            from graders.checks.submission import GradingRun
            run = GradingRun(self.seed)
            holder._vecgrade_run = run
            self.log.info("vecgrade: hidden cases drawn with seed %d", run.seed)
        return run

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict):
        for cell in nb.cells:  # a verdict is only ever where this step writes one (SaveVerdicts scores from it)
            if "vecgrade" in cell.get("metadata", {}):
                del cell.metadata["vecgrade"]
        assignment_id = resources["nbgrader"]["assignment"]
        path = Path(self.assignments_dir) / f"{assignment_id}.py"
        if not path.exists():
            self.log.warning("vecgrade: no definitions at %s; grade cells left to nbgrader", path)
            return nb, resources
        from graders.model.exercise import load_assignment_once
        assignment = load_assignment_once(path)
        limits, timeouts, sandbox = grading_settings(self)
        confined, status = sandbox.status()
        (self.log.info if confined else self.log.warning)("vecgrade: %s", status)
        run = self.grading_run()
        # the submission's own modules beside the notebook (helpers.py), and those the notebook writes itself
        # (%%writefile helpers.py): the kernel imported them from there
        modules = notebook_modules(nb, read_modules(resources.get("metadata", {}).get("path")))
        cells = submission_cells(nb, assignment)
        deep = too_deep(cells, modules)
        if deep:  # refused as a whole, with the student's reason (vecgrade's own job refuses it before any kernel)
            self.results = {ex.name: all_parts(not_graded, Reason.REFUSED, deep) for ex in assignment.exercises}
            write_verdicts(nb, assignment, self.results)
            if self.refuse_not_graded:
                raise NotGraded(f"not graded: {deep}")
            return nb, resources
        try:
            results = run.grade(
                assignment, cells, limits, timeouts, sandbox=sandbox,
                notebook_timeout=self.notebook_timeout, modules=modules)
            self.keys, self.computed = dict(run.keys), sorted(run.computed)
        except Exception as exc:  # noqa: BLE001 - fail closed: no verdict, no points, never a 0
            self.log.exception("vecgrade: could not grade %s", resources["nbgrader"].get("student"))
            results = {ex.name: all_parts(not_graded, Reason.INTERNAL, f"could not grade: {type(exc).__name__}")
                       for ex in assignment.exercises}
        self.results = results
        write_verdicts(nb, assignment, results)
        ungraded = [f"{name}: {v.message}" for name, parts in results.items() for v in parts.values()
                    if v.status is Status.NOT_GRADED]
        if ungraded and self.refuse_not_graded:
            raise NotGraded(f"not graded: {ungraded[0]}")
        return nb, resources


def write_verdicts(nb: NotebookNode, assignment, results: dict[str, dict[str, Verdict]]) -> None:
    """Each grade cell's output becomes its verdict (the exercises in ``results``; other cells stay), and the
    notebook records the definitions' fingerprint they were computed under (``fingerprint.stamp``; an assignment
    built in code has none to record)."""
    stamp(nb.metadata, assignment.fingerprint)
    for cell in nb.cells:
        found = assignment.part_of(grade_id_of(cell))
        if found and cell.cell_type == "code" and found[0].name in results:
            ex, part = found
            verdict = results[ex.name][part]
            # the verdict as data (status, reason, message, figures, key), and its output rendered from it; a
            # student's own "vecgrade" metadata in a grade cell is overwritten here like its output
            cell.metadata["vecgrade"] = verdict.to_json()
            cell.outputs = [verdict_output(verdict)]
            cell.execution_count = None


def cell_score(cell: NotebookNode, log) -> float | None:
    """A grade cell's automatic score: for a vecgrade part, from its verdict (``metadata.vecgrade``, which only
    ``TrustedVerdicts`` writes): its points when passed, else 0; for any other grade cell, nbgrader's own rule."""
    verdict = cell_verdict(cell)
    if verdict is not None:
        return float(cell.metadata["nbgrader"].get("points", 0)) if verdict.passed else 0.0
    return determine_grade(cell, log)[0]


class SaveVerdicts(SaveAutoGrades):
    """nbgrader's ``SaveAutoGrades``, scoring each vecgrade grade cell from its verdict as data (``cell_score``)
    rather than from the type of its output; everything else as nbgrader does it."""

    def _add_score(self, cell: NotebookNode, resources: ResourcesDict) -> None:
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        grade.auto_score = cell_score(cell, self.log)
        # as nbgrader: an earlier manual grade, or no automatic score, needs a look
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None
        self.gradebook.db.commit()
