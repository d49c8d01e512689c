"""The verdicts' reason codes: one source (``graders.model.verdict.Reason``: each code's group and meaning) that
docs/grading.md's table is generated from, like the exit codes; and the one rule of what may be shared and kept
(``Reason.shared``): an ``out_of_time`` failure is recorded for its submission but never put in a verdict store."""
import importlib.util
from pathlib import Path

from graders.model.store import VerdictStore
from graders.model.verdict import Reason, Status, Verdict, all_parts, failed, passed, settled, table

ROOT = Path(__file__).resolve().parent.parent


def _hooks():
    spec = importlib.util.spec_from_file_location("vecgrade_docs_hooks_reasons", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_grading_page_lists_every_reason_code_from_the_enum():
    hooks = _hooks()
    page = (ROOT / "docs" / "grading.md").read_text()
    assert hooks.REASON_CODES in page
    filled = hooks.on_page_markdown(page, None, None, None)
    assert hooks.REASON_CODES not in filled and table() in filled
    for reason in Reason:
        assert f"| `{reason.value}` |" in table() and reason.meaning in table()
        assert reason.meaning.strip() and "\n" not in reason.meaning
    out_of_time = next(line for line in table().splitlines() if line.startswith("| `out_of_time` |"))
    assert "| failed | no |" in out_of_time  # a failure of this submission, never shared nor kept
    budget = next(line for line in table().splitlines() if line.startswith("| `budget` |"))
    assert "| not graded | no |" in budget


def test_out_of_time_is_a_failure_of_its_own_and_budget_stays_the_machines():
    assert Reason.OUT_OF_TIME.status is Status.FAILED and not Reason.OUT_OF_TIME.shared
    assert Reason.BUDGET.status is Status.NOT_GRADED and not Reason.BUDGET.shared
    assert not Reason.OUT_OF_TIME.disruption  # never graded again in a fresh jail
    assert Reason.WRONG_VALUE.shared and Reason.OK.shared  # control: the program's own verdicts are shared
    v = failed("fast", Reason.OUT_OF_TIME, "the notebook's code used up its time budget")
    assert v.graded and not v.shared


def test_out_of_time_verdicts_are_never_put_in_a_verdict_store():
    ran_out = {"correct": passed("correct", "ok"),
               "vectorized": failed("vectorized", Reason.OUT_OF_TIME, "used up its time budget"),
               "fast": failed("fast", Reason.OUT_OF_TIME, "used up its time budget")}
    assert not settled(ran_out)
    store = VerdictStore()
    assert not store.put("k1", ran_out) and "k1" not in store
    assert not store.put("k2", all_parts(failed, Reason.OUT_OF_TIME, "used up its time budget"))
    assert VerdictStore({"k3": ran_out}).get("k3") is None  # nor taken from a ledger
    wrong = {**all_parts(failed, Reason.GATED, "gated"), "correct": failed("correct", Reason.WRONG_VALUE, "wrong")}
    assert store.put("k4", wrong) and "k4" in store  # control: a failure of the program alone is kept


def test_a_verdict_round_trips_with_its_new_reason():
    v = failed("correct", Reason.OUT_OF_TIME, "used up its time budget")
    assert Verdict.from_json(v.to_json()) == v
