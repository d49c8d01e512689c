"""The one reader of a cell's code, as IPython runs it: every place that reads a notebook cell as Python (the
program slice, the student's own modules, the checks' line numbers, answer groups, the self-check) reads it here.

IPython turns a cell into Python with its own input transformers
(``IPython.core.inputtransformer2.TransformerManager``), and so does this reader, with the same code:

- the clean-up (leading empty lines, the first line's indentation, pasted prompts) and the cell magic
  (graders.checks.magics): a cell magic that runs its body in the kernel (``%%time``, ``%%timeit``,
  ``%%capture``, ``%%prun``) has that body read as a cell again (``%%timeit`` runs it inside a function:
  ``CellCode.binds_nothing``); any other (``%%python3``, ``%%script``,
  ``%%bash``, ``%%html``, ``%%writefile``, one IPython does not know ...) runs its body elsewhere, so the cell
  holds no notebook code (``CellCode.foreign``);
- the token transformers, in IPython's order: a line IPython runs as a magic, a shell command or a help request
  (``%timeit f(x)``, ``x = %time f(x)``, ``!pip list``, ``files = !ls``, ``?torch.take_along_dim``,
  ``torch.take_along_dim?``) becomes ``pass`` at its indentation, and nothing else does: a continuation line of
  an expression that starts with ``%`` or ``!=`` is Python, as IPython reads it. The autocall escapes
  (``/f x``, ``,f a b``) are Python calls, kept as IPython writes them.

Every line keeps its number: a replaced line that spanned several lines is followed by empty ones, and the
lines IPython dropped (the leading empty lines, the cell magic's line) are empty, so a finding or a traceback
points at the student's own line. What IPython or Python rejects is the student's syntax error
(``ParsedCell.error``): that cell does not run in the kernel either. A cell nested past
``graders.checks.nesting.MAX_NESTING`` levels is refused (``TooDeep``) before any recursive walk reads it.
"""
from __future__ import annotations

import ast
import tokenize
from dataclasses import dataclass
from typing import Mapping, Sequence

from IPython.core.inputtransformer2 import (
    ESC_PAREN,
    ESC_QUOTE,
    ESC_QUOTE2,
    TRANSFORM_LOOP_LIMIT,
    EscapedCommand,
    TokenTransformBase,
    TransformerManager,
    make_tokens_by_line,
)

from graders.checks.magics import CellMagic, clean_up, first_line_magic, newlines
from graders.checks.nesting import TooDeep, refuse_deep

__all__ = ["CellCode", "ParsedCell", "SyntaxProblem", "TooDeep", "module_label", "parse_cell", "read_cell",
           "too_deep"]

_AUTOCALL = (ESC_PAREN, ESC_QUOTE, ESC_QUOTE2)  # ``/f x``, ``,f a b``, ``;f a b``: Python calls, not magics


@dataclass(frozen=True)
class CellCode:
    """The Python the kernel runs for one cell, one entry per line of the cell (Python's count of lines)."""

    lines: tuple[str, ...]
    magic: CellMagic | None = None  # the cell magic that decides what the cell does (innermost), if any
    rejected: str | None = None     # why IPython's transformers could not read the cell (it does not run)
    binds_nothing: bool = False     # its code runs inside a function (``%%timeit``): no name of the notebook

    @property
    def foreign(self) -> bool:
        """The cell's body runs elsewhere (a subprocess, the browser, a file), not as notebook code."""
        return self.magic is not None and not self.magic.runs_body_here

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class SyntaxProblem:
    line: int     # the cell's own line number (0 when Python does not say)
    message: str  # Python's (or IPython's) words


@dataclass(frozen=True)
class ParsedCell:
    label: str
    code: CellCode
    tree: ast.Module | None         # None exactly when ``error`` says why
    error: SyntaxProblem | None = None

    def describe_error(self) -> str:
        """``cell 7 has a syntax error at line 3: invalid syntax``, for a cell that does not run."""
        assert self.error is not None, "only a cell that does not parse has a syntax error"
        at = f" at line {self.error.line}" if self.error.line else ""
        return f"{self.label} has a syntax error{at}: {self.error.message}"


def _normalized(source: str) -> str:
    return source.replace("\r\n", "\n").replace("\r", "\n")


def read_cell(source: str, python_only: bool = False) -> CellCode:
    """``source`` as the kernel runs it (``python_only``: a ``.py`` module, read as Python imports it)."""
    text = _normalized(source)
    count = text.count("\n") + 1  # the entries of ``source.split("\\n")``
    if python_only:
        return CellCode(tuple(text.split("\n")))
    read = _read(text)
    lines = (read.lines + [""] * count)[:count]
    return CellCode(tuple(lines), read.magic, read.rejected, read.binds_nothing)


@dataclass
class _Read:
    lines: list[str]  # one Python line per line of the text read
    magic: CellMagic | None = None
    rejected: str | None = None
    binds_nothing: bool = False


def _read(text: str) -> _Read:
    """``text`` read as IPython runs it; a cell magic's body that the kernel runs as a cell is read again."""
    if not text:
        return _Read([])
    lines, dropped = clean_up(text)
    total = dropped + newlines("".join(lines))
    magic = first_line_magic(lines)
    if magic is not None:
        if not magic.runs_body_here:
            return _Read([""] * total, magic)
        body = _read(magic.body)
        header = total - newlines(magic.body)
        return _Read([""] * header + body.lines, body.magic or magic, body.rejected,
                     body.binds_nothing or magic.binds_nothing)
    try:
        lines = _token_transforms(lines)
    except Exception as exc:  # noqa: BLE001 - IPython refuses the cell (its kernel shows this and runs nothing)
        return _Read([""] * total, rejected=f"{type(exc).__name__}: {exc}")
    return _Read([""] * dropped + "".join(lines).split("\n")[:-1])


def _token_transforms(lines: list[str]) -> list[str]:
    """IPython's ``TransformerManager.do_token_transforms``, with IPython's own transformers, except that the
    magic, shell and help lines become ``pass`` and every line keeps its number.

    IPython tokenizes the whole cell again after each transform; since every line keeps its number here and a
    transform replaces whole logical lines, one tokenization serves every logical line after it, and the cell is
    tokenized again only where a transform did not replace exactly the logical line it was found on (a magic
    inside brackets, a string that swallowed the next lines). The result is IPython's (``_exact_transforms``:
    tests/test_reader.py compares them); the cost is one tokenization, not one per magic line."""
    transformers = TransformerManager().token_transformers
    done = 0
    tokens_by_line = make_tokens_by_line(lines)
    index = 0
    while index < len(tokens_by_line):
        tokens = tokens_by_line[index]
        found = [t for t in (cls.find([tokens]) for cls in transformers) if t] if tokens else []
        if not found:
            index += 1
            continue
        for transformer in sorted(found, key=TokenTransformBase.sortby):
            try:
                out = transformer.transform(lines)
            except SyntaxError:
                continue
            break
        else:  # IPython tries the other lines' candidates, or stops: its own loop decides
            return _exact_transforms(lines, done)
        done += 1
        if done >= TRANSFORM_LOOP_LIMIT:
            raise RuntimeError(f"Input transformation still changing after {TRANSFORM_LOOP_LIMIT} iterations. "
                               "Aborting.")
        last_row = len(out) - transformer.start_line - 1  # the unchanged tail, in lines
        last_row = len(lines) - last_row                   # the last replaced line, 1-based
        lines = _same_lines(lines, out, transformer)
        if _self_contained(tokens) and tokens[-1].end[0] == last_row:
            index += 1  # a complete logical line, replaced whole: the other lines tokenize as before
        else:
            tokens_by_line = make_tokens_by_line(lines)
            index = 0
    return lines


def _self_contained(tokens: list[tokenize.TokenInfo]) -> bool:
    """Whether a logical line ends as lines end and leaves no bracket or string open or closes one it did not
    open: replacing it whole changes how no other line tokenizes."""
    if tokens[-1].type not in (tokenize.NEWLINE, tokenize.NL):
        return False
    depth = 0
    for token in tokens:
        if token.type == tokenize.ERRORTOKEN and token.string[:1] in "'\"":
            return False
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _exact_transforms(lines: list[str], done: int = 0) -> list[str]:
    """IPython's own loop (``do_token_transforms``, tokenizing the cell again after each transform), with the
    lines kept as ``_same_lines`` keeps them; ``done``: the transforms already made."""
    transformers = TransformerManager().token_transformers
    for _ in range(TRANSFORM_LOOP_LIMIT - done):
        tokens_by_line = make_tokens_by_line(lines)
        found = [t for t in (cls.find(tokens_by_line) for cls in transformers) if t]
        for transformer in sorted(found, key=TokenTransformBase.sortby):
            try:
                out = transformer.transform(lines)
            except SyntaxError:
                continue
            lines = _same_lines(lines, out, transformer)
            break
        else:
            return lines
    raise RuntimeError(f"Input transformation still changing after {TRANSFORM_LOOP_LIMIT} iterations. Aborting.")


def _same_lines(before: list[str], after: list[str], transformer: TokenTransformBase) -> list[str]:
    """``after`` (IPython's transform of ``before``: the lines from ``start_line`` on, up to an unchanged tail,
    replaced by one new line) with that new line replaced by ``pass``, unless it is an autocall, and followed by
    an empty line for each other line it replaced, so every line keeps its place."""
    start = transformer.start_line
    tail = len(after) - start - 1
    replaced = len(before) - tail - start
    first = before[start]
    escape = first[transformer.start_col:transformer.start_col + 1]
    if isinstance(transformer, EscapedCommand) and escape in _AUTOCALL:
        new = after[start].rstrip("\n")
    else:
        new = first[:len(first) - len(first.lstrip())] + "pass"
    return before[:start] + [new + "\n"] + ["\n"] * (replaced - 1) + after[start + 1:]


def module_label(name: str) -> str:
    """How a finding names the student's own module ``name`` (its file)."""
    return f"{name}.py"


def parse_cell(label: str, source: str, python_only: bool = False) -> ParsedCell:
    """A cell read (``read_cell``) and parsed: its tree, or the syntax error that keeps it from running. Raises
    ``TooDeep`` for a cell nested past ``MAX_NESTING`` levels (or one Python's parser gives up on)."""
    code = read_cell(source, python_only)
    if code.foreign:
        return ParsedCell(label, code, ast.Module(body=[], type_ignores=[]))
    if code.rejected is not None:
        return ParsedCell(label, code, None, SyntaxProblem(0, f"IPython cannot read it ({code.rejected})"))
    try:
        tree = ast.parse(code.text)
    except SyntaxError as e:
        return ParsedCell(label, code, None, SyntaxProblem(e.lineno or 0, e.msg))
    except ValueError as e:  # a null byte in the source: Python refuses it
        return ParsedCell(label, code, None, SyntaxProblem(0, str(e)))
    except (RecursionError, MemoryError):
        raise TooDeep(label, None) from None
    refuse_deep(label, tree)
    return ParsedCell(label, code, tree)


def too_deep(cells: Sequence[tuple[str, str]], modules: Mapping[str, str] | None = None) -> str | None:
    """Why the submission is refused, worded for the student, when one of its cells (label, source) or its own
    modules (name -> source) nests past ``MAX_NESTING`` levels; None when every one can be read."""
    try:
        for label, source in cells:
            parse_cell(label, source)
        for name, source in (modules or {}).items():
            parse_cell(module_label(name), source, python_only=True)
    except TooDeep as exc:
        return str(exc)
    return None
