"""Cap a notebook's outputs by BYTES, not lines: the step that replaces nbgrader's ``LimitOutput``.

``LimitOutput`` counts lines, so 200 lines of 1 MB each made a 210 MB
notebook (and a grader process of 1.15 GB). Here each output keeps at most
``max_output_bytes`` and the whole notebook at most ``max_notebook_bytes``;
what is cut is replaced by one line saying so. ``ResilientExecute`` applies
the same caps while the kernel runs, so a flood never piles up in the
grader's memory; this step runs again after the verdicts.
"""
from __future__ import annotations

import json

from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer

TRUNCATED = "[output cut: it went past the grader's limit of {limit} bytes]\n"


def output_bytes(output: dict) -> int:
    """The size an output takes in the saved notebook (its text or data, as JSON)."""
    body = {k: output.get(k) for k in ("text", "data", "traceback", "evalue") if k in output}
    return len(json.dumps(body, ensure_ascii=False).encode())


def cut_notice(limit: int) -> NotebookNode:
    return new_output("stream", name="stdout", text=TRUNCATED.format(limit=limit))


def shorten(output: NotebookNode, limit: int) -> NotebookNode:
    """``output`` within ``limit`` bytes: text keeps its start, anything else becomes the notice."""
    if output_bytes(output) <= limit:
        return output
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        text = "".join(text) if isinstance(text, list) else text
        kept = text.encode()[: max(0, limit - 200)].decode(errors="ignore")
        return new_output("stream", name=output.get("name", "stdout"), text=kept + "\n" + TRUNCATED.format(limit=limit))
    if output.get("output_type") == "error":
        return new_output("error", ename=str(output.get("ename", "Error"))[:100], evalue="(cut)",
                          traceback=[TRUNCATED.format(limit=limit).strip()])
    return cut_notice(limit)


def cap_outputs(outputs: list, max_output: int, budget: int) -> tuple[list, int]:
    """``outputs`` with each one shortened to ``max_output`` and all of them within ``budget`` bytes;
    returns (kept outputs, bytes used)."""
    kept, used = [], 0
    for output in outputs:
        output = shorten(output, max_output)
        size = output_bytes(output)
        if used + size > budget:
            kept.append(cut_notice(budget))
            break
        kept.append(output)
        used += size
    return kept, used


class LimitOutputBytes(NbGraderPreprocessor):
    """Every output at most ``max_output_bytes``, the notebook's outputs at most ``max_notebook_bytes``."""

    max_output_bytes = Integer(64 * 1024, help="Largest output a cell keeps, in bytes").tag(config=True)
    max_notebook_bytes = Integer(1024 * 1024, help="Largest total of a notebook's outputs, in bytes").tag(config=True)

    def preprocess(self, nb, resources):
        left = self.max_notebook_bytes
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, used = cap_outputs(cell.get("outputs", []), self.max_output_bytes, max(left, 0))
                left -= used
        return nb, resources
