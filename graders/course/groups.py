"""Answer groups: the students of a class who wrote the same program for an exercise, and near-duplicates.

Read from the autograded notebooks (the code the grader judged, with the student's own modules beside them) with the
grader's own program key (graders.checks.identity): comments, docstrings, blank lines and formatting don't count;
names and constants do. A group carries its students, its verdict (the same for all of them: within a grading run a
program is graded once) and one representative program. Near-duplicates are groups that are the same program up to
renaming of local variables: for a teacher checking collaboration, never a grade.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from html import escape

import nbformat
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from graders.checks.identity import near_key, program_key
from graders.checks.nesting import TooDeep
from graders.checks.own_modules import notebook_modules, read_modules
from graders.checks.static import Submission
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.exercise import PARTS, Assignment
from graders.model.notebook import grade_id_of, submission_cells
from graders.model.verdict import cell_verdict


@dataclass
class Group:
    key: str
    near: str
    program: str  # one member's reached code, normalized
    verdict: dict[str, bool]  # part -> passed, as the grade cells of the first member say
    students: list[str] = field(default_factory=list)


@dataclass
class ExerciseGroups:
    exercise: str
    groups: list[Group]  # largest first

    def near_duplicates(self) -> list[list[Group]]:
        """Sets of two or more distinct programs that are the same up to renaming of local variables."""
        by_near: dict[str, list[Group]] = defaultdict(list)
        for g in self.groups:
            by_near[g.near].append(g)
        return [gs for gs in by_near.values() if len(gs) > 1]


def _passed(nb, assignment: Assignment, name: str) -> dict[str, bool]:
    out = {}
    for cell in nb.cells:
        found = assignment.part_of(grade_id_of(cell))
        if found and found[0].name == name:
            verdict = cell_verdict(cell)
            out[found[1]] = verdict is not None and verdict.passed
    return {p: out.get(p, False) for p in PARTS}


def _shown(submission: Submission, name: str) -> str:
    return "\n".join(ast.unparse(node) for _, node in submission.statements_for(name))


def answer_groups(course: Course, assignment: Assignment, students: list[str]) -> list[ExerciseGroups]:
    """Per exercise, the groups of identical programs among ``students``' autograded notebooks."""
    found: dict[str, dict[str, Group]] = {ex.name: {} for ex in assignment.exercises}
    for student in sorted(students):
        path = course.paths.notebook(Step.AUTOGRADED, assignment.name, student)
        if not path.exists():
            continue
        nb = nbformat.read(path, as_version=4)
        # the student's own modules are part of the program, as in the grader's key: the files autograded beside
        # the notebook and the ones it writes itself
        try:
            submission = Submission(submission_cells(nb, assignment),
                                    notebook_modules(nb, read_modules(path.parent)))
        except TooDeep:
            continue  # refused, not graded (graders.checks.nesting): no program to group
        for ex in assignment.exercises:
            if not submission.statements_for(ex.name):
                continue  # nothing written for it: no program to group
            key = program_key(submission, ex.name)
            group = found[ex.name].get(key)
            if group is None:
                group = found[ex.name][key] = Group(key, near_key(submission, ex.name),
                                                    _shown(submission, ex.name), _passed(nb, assignment, ex.name))
            group.students.append(student)
    return [ExerciseGroups(name, sorted(groups.values(), key=lambda g: (-len(g.students), g.students[0])))
            for name, groups in found.items()]


def groups_text(groups: list[ExerciseGroups]) -> str:
    """``vecgrade report A --groups``: the same as the HTML section, as text."""
    lines = []
    for eg in groups:
        lines.append(f"{eg.exercise}: {len(eg.groups)} distinct program(s)")
        for i, g in enumerate(eg.groups, 1):
            verdict = " ".join(f"{p} {'pass' if ok else 'fail'}" for p, ok in g.verdict.items())
            lines.append(f"  group {i}: {len(g.students)} student(s), {verdict}: {', '.join(g.students)}")
            lines += ["      " + line for line in g.program.splitlines()]
        for gs in eg.near_duplicates():
            names = "; ".join(", ".join(g.students) for g in gs)
            lines.append(f"  near-duplicates (the same program up to renaming local variables): {names}")
    return "\n".join(lines)


def groups_html(groups: list[ExerciseGroups]) -> str:
    """The answer-groups section of the HTML report: largest groups first, one highlighted program each."""
    formatter = HtmlFormatter(noclasses=True, nowrap=False)
    parts = ['<h2 id="answer-groups">Answer groups</h2>',
             "<p>Students who wrote the same program (comments, docstrings, blank lines and formatting aside) "
             "share one verdict: within a grading run a program is graded once.</p>"]
    for eg in groups:
        parts.append(f'<h3 class="exercise-groups">{escape(eg.exercise)}: {len(eg.groups)} distinct program(s)</h3>')
        for i, g in enumerate(eg.groups, 1):
            verdict = ", ".join(f"{p} {'passed' if ok else 'failed'}" for p, ok in g.verdict.items())
            parts.append(f'<div class="answer-group"><p><b>group {i}</b>: {len(g.students)} student(s), '
                         f"{escape(verdict)}</p><p>{escape(', '.join(g.students))}</p>"
                         f"{highlight(g.program, PythonLexer(), formatter)}</div>")
        for gs in eg.near_duplicates():
            names = "; ".join(", ".join(g.students) for g in gs)
            parts.append(f'<p class="near-duplicates"><b>near-duplicates</b> (the same program up to renaming of '
                         f"local variables): {escape(names)}</p>")
    return "\n".join(parts)
