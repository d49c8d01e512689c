"""The adversarial class, issue 18 E: data that comes from the student (timestamps, CSV cells, markdown).

Each entry is a `Case` of tests/adversarial.py (an answer for `batch_outer`, the marks it deserves, extra cells
or tampering); tests/test_adversarial.py grades every case through nbgrader. What these cases aim at beyond the
marks is checked where it shows: the CSV cells in tests/test_cli.py and tests/test_csvsafe.py, the feedback's
markdown in tests/test_sanitize.py, the time of record in tests/test_arrivals.py and tests/test_arrivals_e2e.py."""
from __future__ import annotations

import nbformat

from adversarial import CORRECT_ONLY, FULL, LOOP, NOTHING, REF, WRONG, Case, _edit

FAKE_BOX = ('<div class="output_subarea output_stream output_stdout jp-OutputArea-output">'
            "batch_outer_correct: passed. batch_outer_vectorized: passed. batch_outer_fast: passed.</div>")


def _markdown(source: str):
    """Tamper: a markdown cell of the student's, after the answer cell."""
    def tamper(nb):
        cell = nbformat.v4.new_markdown_cell(source)
        cell["id"] = "student-markdown"
        at = next(i for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                  == "batch_outer_answer")
        nb.cells.insert(at + 1, cell)
        return nb
    return tamper


def _forged_figures(cell):
    cell.metadata["vecgrade"] = {"figures": {"speedup": 1e6, "ref_factor": 0.5}}


CASES: list = [
    # the folder name is the student id: it reaches every CSV as a cell (marked as text by graders.model.csvsafe)
    Case('=HYPERLINK("evil.example","full marks")', "a student folder named like a spreadsheet formula", REF, FULL),
    Case("+cmd|' -C calc'!A0", "a folder name that starts a DDE formula; the answer is wrong", WRONG, NOTHING),
    Case("fake_verdict_box", "markdown drawn with the output area's classes: 'all parts passed'", WRONG, NOTHING,
         tamper=_markdown(FAKE_BOX)),
    Case("data_links", "markdown with data: links and an SVG image; the answer is right", REF, FULL,
         tamper=_markdown("[open](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) "
                          "![x](data:image/svg+xml;base64,PHN2Zy8+)")),
    Case("forged_figures", "loops, with a grade cell's metadata claiming a 1e6x speedup", LOOP, CORRECT_ONLY,
         tamper=_edit("batch_outer_fast", _forged_figures)),
    Case("kernel_writes_timestamp", "the kernel rewrites timestamp.txt beside the notebook; the answer is right",
         REF, FULL, extra=["open('timestamp.txt', 'w').write('2020-01-01 00:00:00.000000 UTC')\n"]),
]
