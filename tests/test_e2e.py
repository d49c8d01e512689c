"""End to end through the real nbgrader apps: generate, submit a class, autograde, read the gradebook.

The class is the demo's roster plus one submission per way of faking a
grade inside the student's kernel. Each must score 0 on what it fakes and
keep its honest marks.
"""
import pytest
from nbgrader.api import Gradebook

from graders.course.build import write_source
from graders.course.grade import grade_class
from graders.course.demo import make_course, submit_class
from graders.model.exercise import PARTS
from graders.course.roster import CHEAT_CELL, WRONG, Persona, loop_answer, roster

NOTHING, CORRECT_ONLY, FULL = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 1.0, 1.0)

TAMPERING = {
    # name: (extra cell run in the kernel, answers, deserved)
    "set_custom_exc": ("get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n", "wrong", NOTHING),
    "patch_torch": ("import torch\ntorch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
                    "torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)\n", "wrong", NOTHING),
    "patch_ast": ("import ast\nast.parse = lambda *a, **k: ast.Module(body=[], type_ignores=[])\n"
                  "ast.walk = lambda node: iter(())\n", "loops", CORRECT_ONLY),
    "patch_timers": ("import time, timeit\ntime.perf_counter = lambda: 0.0\ntime.time = lambda: 0.0\n"
                     "timeit.default_timer = lambda: 0.0\n", "loops", CORRECT_ONLY),
    "ast_transformers": ("import ast\nclass NoAsserts(ast.NodeTransformer):\n"
                         "    def visit_Assert(self, node):\n        return ast.Pass()\n"
                         "    def visit_Raise(self, node):\n        return ast.Pass()\n"
                         "get_ipython().ast_transformers.append(NoAsserts())\n", "wrong", NOTHING),
    "fake_graders": ("import sys, types\nfake = types.ModuleType('graders')\nfake.check = lambda *a, **k: True\n"
                     "sys.modules['graders'] = fake\nsys.modules['graders.checks.parts'] = fake\n", "wrong", NOTHING),
    "equal_to_anything": (CHEAT_CELL, "anything", NOTHING),
    "prints_passed": ("print('All tests passed!')\nprint('correct: passed. 2 / 2')\n", "wrong", NOTHING),
}


def _answers(kind):
    return {
        "wrong": lambda ex: WRONG[ex.name],
        "loops": loop_answer,
        "anything": lambda ex: f"def {ex.signature[4:]}\n    return Anything(torch.zeros(1))\n",
    }[kind]


def tampering_personas():
    return [Persona(f"t_{name}", name, _answers(kind), lambda n, d=deserved: d, extra_cells=[cell])
            for name, (cell, kind, deserved) in TAMPERING.items()]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting, monkeypatch_module):
    course = make_course(tmp_path_factory.mktemp("e2e") / "course")
    write_source(course.root, broadcasting)
    with course.api() as api:
        assert api.generate_assignment("broadcasting")["success"]
    people = roster() + tampering_personas()
    monkeypatch_module.setattr("graders.course.demo.roster", lambda: people)
    students = submit_class(course, "broadcasting")
    results = grade_class(course, "broadcasting", students)
    return course, people, {r.student: r for r in results}


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_every_submission_was_graded(graded):
    _, people, results = graded
    assert set(results) == {p.student for p in people}
    assert all(r.success for r in results.values()), {s: r.reason for s, r in results.items() if not r.success}


def _check(graded, broadcasting, persona):
    course, _, _ = graded
    scores = course.part_scores(broadcasting)[persona.student]
    for ex in broadcasting.exercises:
        got = tuple(scores[ex.grade_id(p)] for p in PARTS)
        want = tuple(f * ex.points.of(p) for f, p in zip(persona.deserves(ex.name), PARTS))
        assert got == want, f"{persona.student} ({persona.about}), {ex.name}: got {got}, deserves {want}"


@pytest.mark.parametrize("persona", roster(), ids=lambda p: p.student)
def test_demo_class_gets_what_it_deserves(graded, broadcasting, persona):
    _check(graded, broadcasting, persona)


@pytest.mark.parametrize("persona", tampering_personas(), ids=lambda p: p.student)
def test_faking_a_grade_in_the_kernel_scores_zero_on_what_it_fakes(graded, broadcasting, persona):
    _check(graded, broadcasting, persona)


def test_feedback_shows_messages_and_no_hidden_data(graded):
    course, _, _ = graded
    with course.api() as api:
        assert api.generate_feedback("broadcasting", "bob")["success"]
    html = (course.root / "feedback" / "bob" / "broadcasting" / "broadcasting.html").read_text()
    assert "NotVectorized" in html and "`for` loop" in html and "speedup" in html
    assert "_hidden" not in html and "manual_seed" not in html


def test_the_gradebook_holds_no_score_beyond_the_maximum(graded):
    course, _, _ = graded
    with Gradebook(course.db_url) as gb:
        for student in gb.students:
            sub = gb.find_submission("broadcasting", student.id)
            assert 0 <= sub.score <= sub.max_score
