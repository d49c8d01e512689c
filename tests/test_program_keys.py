"""The same program gets the same verdict, and only a verdict the program earned is kept: the program key (what
the function reaches, the salt, the student's own modules), the verdict as data, the store and the service's
ledger of kept verdicts. Each both ways."""
from __future__ import annotations

import nbformat

from graders.checks import identity
from graders.checks.static import Submission
from graders.model.notebook import grade_id_of
from graders.model.store import VerdictStore
from graders.model.verdict import Reason, Status, Verdict, cell_verdict, failed, not_graded, passed
from graders.pipeline.verdicts import verdict_output, write_verdicts
from graders.serve.ledger import Ledger

from tests.testkit import ROOT

SOURCE = ROOT / "source" / "broadcasting" / "broadcasting.ipynb"


# --- the same program gets the same verdict --------------------------------------------------------------

def _cells(*extra: str, answer: str | None = None):
    cells = [("preamble", "import torch")]
    cells.append(("your `batch_outer` cell", answer or "def batch_outer(a):\n    return helper(a)\n"))
    cells.append(("cell 3", "def helper(a):\n    return a[:, :, None] * a[:, None, :]\n"))
    return cells + [(f"cell {9 + i}", src) for i, src in enumerate(extra)]


def program_key(cells, exercise: str, salt: str, modules: dict[str, str] | None = None) -> str:
    return identity.program_key(Submission(list(cells), modules), exercise, salt)


def test_the_program_key_ignores_what_the_function_does_not_reach_and_how_it_is_written():
    key = program_key(_cells(), "batch_outer", "salt")
    assert program_key(_cells("%timeit batch_outer(x)", "x = torch.ones(3, 3)\nprint(x)"), "batch_outer",
                       "salt") == key
    reformatted = 'def batch_outer(a):\n    """Outer products."""\n\n    # the helper does it\n    return helper( a )\n'
    assert program_key(_cells(answer=reformatted), "batch_outer", "salt") == key


def test_the_program_key_changes_with_the_reached_code_and_the_salt():
    key = program_key(_cells(), "batch_outer", "salt")
    assert program_key(_cells(answer="def batch_outer(a):\n    return helper(a) + 0\n"), "batch_outer", "salt") != key
    helper_changed = _cells()[:2] + [("cell 3", "def helper(a):\n    return a[:, None, :] * a[:, :, None]\n")]
    assert program_key(helper_changed, "batch_outer", "salt") != key
    assert program_key(_cells(), "batch_outer", "another seed") != key


def test_the_program_key_covers_the_students_own_module():
    """A kept verdict never outlives a fixed helpers.py: the key holds the module's source."""
    imports = "from helpers import outer\ndef batch_outer(a):\n    return outer(a)\n"
    broken = {"helpers": "def outer(a):\n    return a[:, None, :] * a[:, None, :]\n"}
    fixed = {"helpers": "def outer(a):\n    return a[:, :, None] * a[:, None, :]\n"}
    key = program_key(_cells(answer=imports), "batch_outer", "salt", broken)
    assert program_key(_cells(answer=imports), "batch_outer", "salt", broken) == key  # control: the same
    assert program_key(_cells(answer=imports), "batch_outer", "salt", fixed) != key


def test_a_verdict_is_data_that_round_trips_and_its_output_is_rendered_from_it(broadcasting):
    verdicts = {"correct": passed("correct", "all 12 hidden cases match"),
                "vectorized": failed("vectorized", Reason.PYTHON_LOOP, "your cell, line 2: `for` loop"),
                "fast": failed("fast", Reason.GATED, "not graded until the answer is correct")}
    nb = nbformat.read(SOURCE, as_version=4)
    write_verdicts(nb, broadcasting, {"batch_outer": verdicts})
    shown = {found[1]: (cell_verdict(c), c.outputs) for c in nb.cells
             if (found := broadcasting.part_of(grade_id_of(c))) and found[0].name == "batch_outer"}
    for part, verdict in verdicts.items():
        read, outputs = shown[part]
        assert read == verdict
        assert outputs == [verdict_output(verdict)]
    assert shown["vectorized"][1][0]["output_type"] == "error" and shown["correct"][1][0]["output_type"] == "stream"
    # what is not a verdict the grader wrote reads as none: a student's own metadata, an old notebook's text
    assert cell_verdict({"metadata": {"vecgrade": {"figures": {"speedup": 1.0}}}}) is None
    assert cell_verdict({"metadata": {"vecgrade": {**verdicts["correct"].to_json(), "status": "great"}}}) is None
    assert cell_verdict({"metadata": {}}) is None


def test_only_settled_verdicts_are_kept_and_the_first_kept_stays():
    store = VerdictStore()
    fresh = {p: passed(p, f"{p} now") for p in ("correct", "vectorized", "fast")}
    assert store.put("k", fresh) and [k for k, _ in store.fresh()] == ["k"]
    unlucky = {**fresh, "fast": failed("fast", Reason.TOO_SLOW, "fast later")}
    assert not store.put("k", unlucky)  # the same program: its first verdict stays, "fast" included
    assert store.get("k")["fast"].passed and store.get("k")["fast"].key == "k"
    for reason in (Reason.INTERNAL, Reason.KILLED, Reason.COULD_NOT_START, Reason.DEADLINE, Reason.STOPPED):
        disrupted = {**fresh, "fast": not_graded("fast", reason, "could not grade")}
        assert not store.put(f"other {reason.value}", disrupted), reason
    assert store.fresh() == [] and len(store) == 1
    assert VerdictStore({"x": {"correct": not_graded("correct", Reason.KILLED, "died")}}).get("x") is None


def test_a_ledger_keeps_settled_verdicts_by_program_and_reads_them_back(tmp_path):
    ledger = Ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    kept = {p: passed(p, f"{p} ok", {"speedup": 12.5} if p == "fast" else {}) for p in ("correct", "vectorized",
                                                                                      "fast")}
    broken = {p: not_graded(p, Reason.KILLED, "died") for p in kept}
    ledger.keep_verdicts("broadcasting", "entry-1", "ada", [("k1", kept), ("k2", broken)])
    back = ledger.verdicts("broadcasting")
    assert set(back) == {"k1"} and back["k1"]["fast"].figures == {"speedup": 12.5}
    assert back["k1"]["fast"].status is Status.PASSED and isinstance(back["k1"]["fast"], Verdict)
    ledger.close()
