"""A notebook cell's cell magic, read as IPython reads it, so the grader takes for Python, and for a written
module, exactly what the kernel does.

IPython (``IPython.core.inputtransformer2.TransformerManager``) first cleans a cell up: it drops leading empty
lines, removes the first line's indentation from every line and strips pasted prompts. Then a first line
starting with ``%%`` is a cell magic: its name runs to the first space, the rest of the line is its arguments,
every other line its body. ``%%time``, ``%%timeit``, ``%%capture`` and ``%%prun`` run their body in
the kernel as a cell again (``RUNS_BODY_AS_CELL``), cell magics included, so ``innermost`` follows them to the
magic that decides what the cell does; ``%%timeit`` runs it inside a function, so it binds no name of the
notebook. Every other cell magic (``%%python3``, ``%%script``, ``%%bash``,
``%%html``, ``%%writefile``, one IPython does not know ...) runs its body elsewhere, or not at all: that body
is not notebook code (graders.checks.reader).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager

RUNS_BODY_AS_CELL = frozenset({"time", "timeit", "capture", "prun"})
RUNS_BODY_IN_A_FUNCTION = frozenset({"timeit"})  # ``%%timeit`` times the body inside a function: it binds nothing
_HELP = re.compile(r"%%\w+\?")  # ``%%time?``: help on the magic, not the magic


@dataclass(frozen=True)
class CellMagic:
    name: str  # ``writefile`` for ``%%writefile -a helpers.py``
    args: str  # ``-a helpers.py``
    body: str  # the cell's other lines, each ending with a newline

    @property
    def binds_nothing(self) -> bool:
        """Whether the kernel runs the body inside a function of its own (``%%timeit``): the names it assigns or
        defines are that function's, not the notebook's (a value it changes in place is still changed)."""
        return self.name in RUNS_BODY_IN_A_FUNCTION

    @property
    def runs_body_here(self) -> bool:
        """Whether the kernel runs the body as a cell of the notebook (``%%time``), not elsewhere."""
        return self.name in RUNS_BODY_AS_CELL


def newlines(text: str) -> int:
    """How many lines Python counts in ``text`` (its newlines: ``\\n``, ``\\r\\n`` or ``\\r``)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def clean_up(source: str) -> tuple[list[str], int]:
    """IPython's clean-up of a cell (``TransformerManager.cleanup_transforms``): its lines (each ending with a
    newline) and how many of the cell's lines (Python's count) it dropped from the top."""
    lines = (source if source.endswith("\n") else source + "\n").splitlines(keepends=True)
    before = newlines("".join(lines))
    for transform in TransformerManager().cleanup_transforms:
        lines = transform(lines)
    return lines, before - newlines("".join(lines))


def first_line_magic(lines: list[str]) -> CellMagic | None:
    """The cell magic of cleaned-up ``lines`` (``clean_up``), as IPython's ``cell_magic`` transform reads it."""
    if not lines or not lines[0].startswith("%%") or _HELP.match(lines[0]):
        return None
    name, _, args = lines[0][2:].rstrip().partition(" ")
    return CellMagic(name, args, "".join(lines[1:]))


def cell_magic(source: str) -> CellMagic | None:
    """The cell magic ``source`` starts with, after IPython's clean-up; None for a cell of Python."""
    return first_line_magic(clean_up(source)[0])


def innermost(source: str) -> CellMagic | None:
    """The magic that decides what a cell does: its own, or through magics that run their body as a cell again
    (``%%capture`` then ``%%writefile``: the write), the innermost one; None for a cell of Python."""
    magic = cell_magic(source)
    while magic is not None and magic.runs_body_here:
        inner = cell_magic(magic.body)
        if inner is None:
            break
        magic = inner
    return magic
