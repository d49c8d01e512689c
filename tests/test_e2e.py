"""End to end through the real nbgrader apps: generate, submit a class, autograde, read the gradebook.

The class is the demo's class of ``broadcasting`` plus one submission per way
of faking a grade inside the student's kernel. Each must score 0 on what it
fakes and keep its honest marks. The hidden cases are drawn with a fixed seed
here, so the test knows which data must not reach the student.
"""
import io

import pytest
import torch
from nbgrader.api import Gradebook
from rich.console import Console

from graders import KIT_ROOT
from graders.checks.submission import exercise_seed
from graders.course.demo import deserved_marks, run_demo, submit_class
from graders.course.grade import grade_class
from graders.course.marks import exercise_marks
from graders.course.personas import (
    CHEAT_CELL,
    CORRECT_ONLY,
    NOTHING,
    Persona,
    anything_answer,
    demo_module,
    loop_answer,
)
from graders.model.exercise import load_assignment

from tests.testkit import generated_course

DEMO = demo_module(KIT_ROOT, "broadcasting")
DEMO_ASSIGNMENT = load_assignment(KIT_ROOT / "assignments" / "broadcasting.py")
SEED = 7  # c.TrustedVerdicts.seed of the test course

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
    return {"wrong": lambda ex: DEMO.WRONG[ex.name], "loops": loop_answer, "anything": anything_answer}[kind]


def tampering_personas():
    return [Persona(f"t_{name}", name, _answers(kind), lambda n, d=deserved: d, extra_cells=[cell])
            for name, (cell, kind, deserved) in TAMPERING.items()]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("e2e") / "course", broadcasting,
                              extra_config=f"c.TrustedVerdicts.seed = {SEED}")
    people = DEMO.roster(broadcasting) + tampering_personas()
    students = submit_class(course, "broadcasting", people)
    results = grade_class(course, "broadcasting", students)
    return course, people, {r.student: r for r in results}


@pytest.mark.e2e
def test_every_submission_was_graded(graded):
    _, people, results = graded
    assert set(results) == {p.student for p in people}
    assert all(r.success for r in results.values()), {s: r.reason for s, r in results.items() if not r.success}


def _check(graded, broadcasting, persona):
    course, _, _ = graded
    scores = course.part_scores(broadcasting)[persona.student]
    for ex in broadcasting.exercises:
        got, want = exercise_marks(ex, scores), deserved_marks(ex, persona)
        assert got == want, f"{persona.student} ({persona.about}), {ex.name}: got {got}, deserves {want}"


@pytest.mark.e2e
@pytest.mark.parametrize("persona", DEMO.roster(DEMO_ASSIGNMENT), ids=lambda p: p.student)
def test_demo_class_gets_what_it_deserves(graded, broadcasting, persona):
    _check(graded, broadcasting, persona)


@pytest.mark.e2e
@pytest.mark.parametrize("persona", tampering_personas(), ids=lambda p: p.student)
def test_faking_a_grade_in_the_kernel_scores_zero_on_what_it_fakes(graded, broadcasting, persona):
    _check(graded, broadcasting, persona)


def hidden_data(assignment, seed):
    """Text only the grader knows: the reference's own lines, and the hidden inputs as torch prints them."""
    found = set()
    for ex in assignment.exercises:
        shown = ex.loop_source()  # lines the loop version shares with the reference are public anyway
        found |= {line.strip() for line in ex.reference_body().splitlines()
                  if len(line.strip()) > 25 and line.strip() not in shown}
        for case in ex.cases(torch.Generator().manual_seed(exercise_seed(seed, ex.name))):
            for arg in case.args:
                if isinstance(arg, torch.Tensor):
                    rows = (line.strip(" [](),") for line in str(arg).splitlines())
                    found |= {row for row in rows if len(row) >= 20 and any(ch.isdigit() for ch in row)}
    return found


def leaks(text, secrets):
    return sorted(s for s in secrets if s in text)


@pytest.fixture(scope="module")
def bob_outputs(graded):
    """What bob sees (his feedback) and what the instructor's autograded copy holds."""
    course, _, _ = graded
    with course.api() as api:
        assert api.generate_feedback("broadcasting", "bob")["success"]
    html = (course.root / "feedback" / "bob" / "broadcasting" / "broadcasting.html").read_text()
    autograded = (course.root / "autograded" / "bob" / "broadcasting" / "broadcasting.ipynb").read_text()
    return html, autograded


@pytest.mark.e2e
def test_feedback_shows_messages(bob_outputs):
    html, _ = bob_outputs
    assert "NotVectorized" in html and "`for` loop" in html and "speedup" in html


@pytest.mark.e2e
def test_feedback_and_autograded_notebook_hold_no_hidden_data(bob_outputs, broadcasting):
    secrets = hidden_data(broadcasting, SEED)
    assert len(secrets) > 20, "the hidden data to look for"
    for text in bob_outputs:
        assert leaks(text, secrets) == []


@pytest.mark.e2e
def test_the_hidden_data_check_finds_planted_data(bob_outputs, broadcasting):
    """The check above can fail: a hidden input or a reference line pasted into the feedback is found."""
    html, _ = bob_outputs
    secrets = hidden_data(broadcasting, SEED)
    ex = broadcasting.exercise("pairwise_sq_dists")
    case = max(ex.hidden(torch.Generator().manual_seed(exercise_seed(SEED, ex.name))),
               key=lambda c: c.args[0].numel())  # one large enough to print rows of numbers
    assert leaks(html + f"<pre>on inputs {case.args[0]}</pre>", secrets)
    reference_line = next(line.strip() for line in ex.reference_body().splitlines() if len(line.strip()) > 25)
    assert leaks(html + reference_line, secrets) == [reference_line]
    # the same case drawn with another seed holds other numbers
    other = max(ex.hidden(torch.Generator().manual_seed(exercise_seed(SEED + 1, ex.name))),
                key=lambda c: c.args[0].numel())
    assert not leaks(f"<pre>on inputs {other.args[0]}</pre>", secrets)


@pytest.mark.e2e
def test_the_gradebook_holds_no_score_beyond_the_maximum(graded):
    course, _, _ = graded
    with Gradebook(course.db_url) as gb:
        for student in gb.students:
            sub = gb.find_submission("broadcasting", student.id)
            assert 0 <= sub.score <= sub.max_score


@pytest.mark.e2e
def test_the_strides_demo_gives_every_student_what_they_deserve(tmp_path):
    """A second assignment's whole demo (its own class, its own wrong answers) through ``run_demo``."""
    out = io.StringIO()
    code = run_demo(tmp_path / "demo", "strides", Console(file=out, width=400))
    assert code == 0, out.getvalue()
    text = out.getvalue()
    assert "every student got the grade they deserve" in text and "NO" not in text


def test_the_demo_of_an_unknown_assignment_is_one_line_and_exit_2(tmp_path):
    out = io.StringIO()
    assert run_demo(tmp_path / "demo", "no_such", Console(file=out, width=400)) == 2
    assert out.getvalue().count("\n") == 1 and "no assignment 'no_such'" in out.getvalue()


def test_a_demo_class_without_a_wrong_answer_is_refused(broadcasting):
    from graders.course.personas import standard_class
    with pytest.raises(ValueError, match="no wrong answer for softmax_rows"):
        standard_class(broadcasting, {k: v for k, v in DEMO.WRONG.items() if k != "softmax_rows"})
