"""A notebook cell's cell magic, read as IPython reads it, so the grader takes for Python, and for a written
module, exactly what the kernel does.

IPython (``IPython.core.inputtransformer2.TransformerManager``) first cleans a cell up: it drops leading empty
lines, removes the first line's indentation from every line and strips pasted prompts. Then a first line
starting with ``%%`` is a cell magic: its name runs to the first space, the rest of the line is its arguments,
every other line its body. ``%%time``, ``%%timeit``, ``%%capture`` and ``%%prun`` run their body as a cell
again, cell magics included, so ``innermost`` follows them to the magic that decides what the cell does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager

RUNS_BODY_AS_CELL = frozenset({"time", "timeit", "capture", "prun"})
_HELP = re.compile(r"%%\w+\?")  # ``%%time?``: help on the magic, not the magic


@dataclass(frozen=True)
class CellMagic:
    name: str  # ``writefile`` for ``%%writefile -a helpers.py``
    args: str  # ``-a helpers.py``
    body: str  # the cell's other lines, each ending with a newline


def cell_magic(source: str) -> CellMagic | None:
    """The cell magic ``source`` starts with, after IPython's clean-up; None for a cell of Python."""
    lines = (source if source.endswith("\n") else source + "\n").splitlines(keepends=True)
    for clean_up in TransformerManager().cleanup_transforms:
        lines = clean_up(lines)
    if not lines or not lines[0].startswith("%%") or _HELP.match(lines[0]):
        return None
    name, _, args = lines[0][2:].rstrip().partition(" ")
    return CellMagic(name, args, "".join(lines[1:]))


def innermost(source: str) -> CellMagic | None:
    """The magic that decides what a cell does: its own, or through magics that run their body as a cell again
    (``%%capture`` then ``%%writefile``: the write), the innermost one; None for a cell of Python."""
    magic = cell_magic(source)
    while magic is not None and magic.name in RUNS_BODY_AS_CELL:
        inner = cell_magic(magic.body)
        if inner is None:
            break
        magic = inner
    return magic
