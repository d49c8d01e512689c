"""Every CSV cell vecgrade writes opens in a spreadsheet as data: formulas are marked as text, numbers stay numbers."""
import csv

import pytest

from graders.model.csvsafe import read_rows, safe_cell, write_rows

FORMULAS = ['=HYPERLINK("https://evil.example","full marks")', "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1",
            "=cmd|' /C calc'!A0"]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_is_marked_as_text(text):
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["-1.5", "16", "+2", "0.25", "-3e-2", -1.5, 16, 0.0])
def test_a_number_stays_a_number(value):
    assert safe_cell(value) == str(value)
    assert float(safe_cell(value)) == float(value)


@pytest.mark.parametrize("text", ["ada", "graded, late 2.0 h", "ungraded: JSONDecodeError", "", "a=b", "x-1"])
def test_plain_text_is_unchanged(text):
    assert safe_cell(text) == text


def test_rows_come_back_as_written(tmp_path):
    rows = [{"student": s, "reason": f"why {s}"} for s in [*FORMULAS, "'quoted", "''twice", "ada"]]
    dest = tmp_path / "out.csv"
    write_rows(dest, ["student", "reason"], rows)
    raw = list(csv.reader(open(dest, newline="")))
    assert raw[0] == ["student", "reason"]
    for cells in raw[1:]:  # what a spreadsheet reads: nothing starts a formula
        assert not cells[0].startswith(("=", "+", "-", "@", "\t", "\r")), cells
    assert read_rows(dest) == rows


def test_missing_file_reads_as_no_rows(tmp_path):
    assert read_rows(tmp_path / "none.csv") == []
