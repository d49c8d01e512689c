"""The adversarial class, issue 18 A, F: code the checker never checked, and honest work that lost marks.

Each entry is a `Case` of tests/adversarial.py (an answer for `batch_outer`, the marks it deserves, extra cells
or tampering); tests/test_adversarial.py grades every case through nbgrader."""
from __future__ import annotations

CASES: list = []
