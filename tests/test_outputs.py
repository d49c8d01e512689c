"""The byte caps on a notebook's outputs (nbgrader's LimitOutput counted lines)."""
import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from graders.pipeline.outputs import LimitOutputBytes, output_bytes


def _nb(*outputs_per_cell):
    nb = new_notebook()
    for outputs in outputs_per_cell:
        cell = new_code_cell("x")
        cell.outputs = list(outputs)
        nb.cells.append(cell)
    return nb


def _stream(text):
    return new_output("stream", name="stdout", text=text)


def test_long_lines_are_cut_by_bytes_and_small_outputs_are_kept():
    flood = [_stream("x" * 1_000_000 + "\n") for _ in range(200)]  # 200 lines of 1 MB: 200 lines passed LimitOutput
    small = [_stream("loss 0.1\n"), new_output("execute_result", data={"text/plain": "tensor([1.])"})]
    nb, _ = LimitOutputBytes(max_output_bytes=4096, max_notebook_bytes=64 * 1024).preprocess(_nb(small, flood), {})
    assert nb.cells[0].outputs == small  # control: an ordinary cell is left as it was
    assert sum(output_bytes(o) for c in nb.cells for o in c.outputs) <= 64 * 1024 + 4096
    assert "output cut" in nb.cells[1].outputs[-1]["text"]
    assert len(nbformat.writes(nb)) < 100 * 1024


def test_an_image_past_the_cap_becomes_a_note():
    image = new_output("display_data", data={"image/png": "A" * 100_000})
    nb, _ = LimitOutputBytes(max_output_bytes=4096).preprocess(_nb([image]), {})
    assert nb.cells[0].outputs[0]["output_type"] == "stream" and "output cut" in nb.cells[0].outputs[0]["text"]
    nb, _ = LimitOutputBytes(max_output_bytes=200_000).preprocess(_nb([image]), {})
    assert nb.cells[0].outputs[0]["data"]["image/png"] == "A" * 100_000  # control: under the cap it stays
