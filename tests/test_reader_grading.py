"""The reader's verdicts through a grading run: a function missing because its cell does not parse says so in
its "correct" failure, and a black-formatted answer beside a line magic is graded like any other."""
from test_checks import RUN

from graders.checks.submission import grade_submission
from graders.model.exercise import PARTS
from graders.model.verdict import Reason

from tests.testkit import program

BROKEN = "def batch_outer(a):\n    out = (a[:, :, None]\n    return out * a[:, None, :]\n"
BLACK = ("%timeit -n 1 -r 1 torch.zeros(3)\n"
         "def batch_outer(a):\n"
         "    keep = (\n"
         "        a.new_ones(())\n"
         "        % 2\n"
         "        != 0\n"
         "    )\n"
         "    return a[:, :, None] * a[:, None, :] * keep\n")


def grade(assignment, source):
    cells = program(assignment, batch_outer=source)
    return grade_submission(assignment, cells, only=["batch_outer"], run=RUN)["batch_outer"]


def test_a_function_whose_cell_does_not_parse_names_the_syntax_error(broadcasting):
    correct = grade(broadcasting, BROKEN)["correct"]
    assert not correct.passed and correct.reason is Reason.NOT_DEFINED
    assert correct.message.startswith("`batch_outer` is not defined because a cell it needs does not run: "
                                      "your `batch_outer` cell has a syntax error at line 2: "), correct.message


def test_a_black_formatted_answer_beside_a_line_magic_is_graded(broadcasting):
    result = grade(broadcasting, BLACK)
    assert [result[p].passed for p in PARTS][:2] == [True, True], {p: result[p].message for p in PARTS}
