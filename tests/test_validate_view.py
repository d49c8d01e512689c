"""`vecgrade validate`'s display (issue 19, point 4): the table fits 100 columns with every exercise name whole and
`-` explained; markdown and CSV hold the same rows. Rows are built from verdicts here: nothing is graded."""
import csv
import io

from rich.console import Console

from graders.course import validate_view
from graders.course.validate import Row
from graders.model.exercise import load_course
from graders.model.verdict import Reason, Verdict, failed, passed

from tests.testkit import ROOT

COURSE = load_course(ROOT / "assignments")
LONGEST = max((ex for a in COURSE.values() for ex in a.exercises), key=lambda ex: len(ex.name))


def verdicts(passes: str, **figures) -> dict[str, Verdict]:
    """{part: Verdict} from "ppf" (pass, pass, fail), figures on "fast"."""
    return {part: passed(part, "", figures if part == "fast" else {}) if flag == "p"
            else failed(part, Reason.WRONG_VALUE, f"fails {part}", figures if part == "fast" else {})
            for part, flag in zip(("correct", "vectorized", "fast"), passes, strict=True)}


def row(ex, *, reference="ppp", half_loop: str | None = "pff", speedup=24097.0, half=14.8, listed=None) -> Row:
    return Row("strides", ex, verdicts(reference, speedup=speedup), verdicts("pff"), verdicts("fff"),
               [verdicts("ppp"), verdicts("ppp")],
               [verdicts(half_loop or "ppp", ref_factor=half) for _ in ex.half_loops],
               verdicts("pff", ref_factor=listed) if listed else verdicts("pff"))


def rendered(table, width: int) -> list[str]:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(table)
    return console.export_text().splitlines()


def test_the_table_fits_100_columns_with_names_whole():
    good, bad = row(LONGEST), row(LONGEST, reference="ppf", half_loop=None, speedup=None)
    assert not good.problems and bad.problems  # control: one row of each kind
    lines = rendered(validate_view.table("strides", [good, bad]), 100)
    assert max(map(len, lines)) <= 100, "\n".join(lines)
    assert sum(LONGEST.name in line for line in lines) == 2  # both rows, name whole, no "…"
    assert not any("…" in line for line in lines)
    text = "\n".join(lines)
    assert "✓✓✓" in text and "✓✓✗" in text and "24097x" in text and "14.8x" in text
    assert " ok" in text and f"{len(bad.problems)} problem" in text


def test_the_old_table_did_not_fit():
    """Control for the width test: the same cells with the old long headers and assignment/exercise names."""
    from rich.table import Table
    old = Table(title="vecgrade validate")
    for col in ("exercise", "reference", "alternatives", "loop: vec", "half loop: vec/fast", "list: vec/fast",
                "stub: correct", "ref. speedup", "threshold", "half loop", "list", "result"):
        old.add_column(col)
    old.add_row(f"strides/{LONGEST.name}", "pass/pass/pass", "2/2 pass", "fail", "fail/fail", "fail/fail", "fail",
                "24097x", "20x", "14.8x", "41.8x", "ok")
    assert any("…" in line for line in rendered(old, 100))


def test_dash_is_explained_and_used_for_what_was_not_measured():
    lines = rendered(validate_view.table("strides", [row(LONGEST, half_loop=None, speedup=None)]), 100)
    assert any(" - " in f" {line} " for line in lines)
    assert "- : not measured" in validate_view.LEGEND


def test_markdown_and_csv_hold_the_same_rows():
    good, bad = row(LONGEST), row(LONGEST, reference="ppf")
    md = validate_view.markdown("strides", [good, bad])
    table_lines = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table_lines) == 3 and all(line.count("|") == len(validate_view.COLUMNS) + 1 for line in table_lines)
    assert f"- {LONGEST.name}: reference fails fast" in md and validate_view.LEGEND in md
    parsed = list(csv.DictReader(io.StringIO(validate_view.csv_header() + validate_view.csv_rows("strides",
                                                                                                  [good, bad]))))
    assert [r["exercise"] for r in parsed] == [LONGEST.name] * 2
    assert parsed[0]["reference passes correct/vectorized/fast"] == "pass/pass/pass"
    assert parsed[1]["reference passes correct/vectorized/fast"] == "pass/pass/fail"
    assert parsed[0]["problems"] == "ok" and "reference fails fast" in parsed[1]["problems"]
    assert float(parsed[0]["reference speedup over the loop version"]) == 24097
