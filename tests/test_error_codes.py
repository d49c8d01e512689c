"""Issue 37 item 6 (part): the worker's error reply carries a code (``protocol.ErrorCode``), and the checks decide on
the code, never on the text the student's code chose.

Both ways: a function that is not defined is ``not_defined`` by its code; a student's own exception whose text reads
exactly like the worker's "no function ... is defined" is the student's ``raised`` (it read as ``not_defined``
while ``correct`` matched the text); a reply whose code is none of the enum's values is refused.
"""
import pytest

from graders.checks.submission import grade_submission
from graders.model.verdict import Reason
from graders.sandbox.protocol import BadReply, ErrorCode, Op, encode_reply, read_reply, request
from graders.sandbox.wire import decode
from graders.sandbox.worker import Worker, _handle

from tests.test_checks import RUN
from tests.testkit import program


def ask(worker: Worker, op: Op, **payload) -> dict:
    return decode(_handle(worker, request(op, **payload), []))


def test_the_workers_error_reply_carries_its_code():
    worker = Worker()
    worker.load_cell("cell", "def f(x):\n    raise LookupError('no function `g` is defined')\n", 5)
    assert ask(worker, Op.CALL, name="g", args=(1,), kwargs={}) == {
        "error": "Undefined: no function `g` is defined", "code": ErrorCode.NOT_DEFINED.value}
    mimic = ask(worker, Op.CALL, name="f", args=(1,), kwargs={})
    assert mimic["code"] == ErrorCode.RAISED.value and "no function `g` is defined" in mimic["error"]
    assert "code" not in ask(worker, "stage")  # a request the child cannot read is not answered: Failed


@pytest.mark.parametrize("code", [ErrorCode.RAISED.value, ErrorCode.NOT_DEFINED.value])
def test_each_code_is_read(code):
    assert read_reply(encode_reply({"error": "x", "code": code}), Op.CALL) == {"error": "x", "code": code}


@pytest.mark.parametrize("code", ["bogus", 3, None])
def test_a_code_outside_the_enum_is_refused(code):
    with pytest.raises(BadReply):
        read_reply(encode_reply({"error": "x", "code": code}), Op.CALL)


MIMIC = ("def batch_outer(a):\n    raise LookupError('no function `batch_outer` is defined')\n")


def test_correct_decides_on_the_code_not_the_text(broadcasting):
    mimic = grade_submission(broadcasting, program(broadcasting, batch_outer=MIMIC), only=["batch_outer"],
                             run=RUN)["batch_outer"]["correct"]
    assert not mimic.passed and mimic.reason is Reason.RAISED, (mimic.reason, mimic.message)
    cells = program(broadcasting)  # the preamble alone: no `batch_outer` is defined
    missing = grade_submission(broadcasting, cells, only=["batch_outer"], run=RUN)["batch_outer"]["correct"]
    assert not missing.passed and missing.reason is Reason.NOT_DEFINED, (missing.reason, missing.message)
