"""The adversarial class, issue 18 B, C, G: student objects and untimed inputs at the clock and the counter.

Each entry is a `Case` of tests/adversarial.py (an answer for `batch_outer`, the marks it deserves, extra cells
or tampering); tests/test_adversarial.py grades every case through nbgrader."""
from __future__ import annotations

import test_boundary as runtime  # the same attacks, run there against the runtime half alone

from adversarial import CORRECT_ONLY, FULL, NOTHING, Case

CASES: list = [
    # B1: a hook on the worker's decoding would do the work before the clock starts; the statement that installs
    # it is not reached by the function, so it never runs in the child: what runs is the vectorized fallback
    Case("work_in_decoding", "precomputes every timed answer while the worker decodes the inputs",
         runtime.IN_DECODING, FULL),
    # B2: an output that is not a plain tensor is refused before anything reads it
    Case("subclass_when_measured", "returns a Tensor subclass only at the timed and counted sizes",
         runtime.SUBCLASS_WHEN_MEASURED, NOTHING),
    Case("subclass_runs_code_when_read", "a Tensor subclass whose __torch_function__ runs while it is encoded",
         runtime.RUNS_WHEN_READ, NOTHING),
    # C1: a memo keyed on the inputs' content: the counted call has inputs of its own, and the loop is seen
    Case("memo_by_content", "a slow loop memoized by the inputs' shape and sum", runtime.MEMO_BY_CONTENT,
         CORRECT_ONLY),
]
