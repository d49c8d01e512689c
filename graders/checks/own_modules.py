"""A student's own Python modules beside the notebook (``helpers.py``): which files the grader takes.

The kernel imports such a module from the notebook's folder, so "correct" and "fast" are judged on the code
as the kernel sees it: the grading child loads the module (checked with the same rules as a cell, by
graders.checks.static) before the cells. Importing it costs "vectorized" (only the notebook's code can be
graded as vectorized: paste the module's code into a cell); its loops count like a cell's, and code of it
outside the checked subset costs "fast" too.

Taken: regular files ``<name>.py`` at the top of the submission folder, at most ``MAX_MODULE_BYTES`` each
(``MAX_MODULES`` at most, by name), UTF-8, whose name is an identifier that is not a keyword, not a standard
or built-in module and not a module installed for the grader (so ``torch.py`` or ``numpy.py`` never stands
in for the library). Anything else beside the notebook is ignored.

A notebook may also write such a module itself, in a ``%%writefile helpers.py`` cell (``-a`` appends): under
Restart & Run All the kernel imports what that cell wrote, whether or not the file was submitted, so
``written_modules`` applies the notebook's own writes, in cell order and up to the cell that imports the module,
over the files found beside it.
"""
from __future__ import annotations

import ast
import importlib.machinery
import keyword
import os
import shlex
import sys
from pathlib import Path
from typing import Iterable, Mapping

from graders.checks.magics import CellMagic, innermost
from graders.checks.nesting import TooDeep
from graders.checks.reach import parse_cell

MAX_MODULE_BYTES = 64 * 1024
MAX_MODULES = 16


def own_module_name(name: str) -> bool:
    """Whether a file ``<name>.py`` beside the notebook can be a module of the student's own."""
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        return False
    if name in sys.stdlib_module_names or name in sys.builtin_module_names or name in sys.modules:
        return False
    here = os.getcwd()
    paths = [p for p in sys.path if p and os.path.abspath(p) != here]
    return importlib.machinery.PathFinder.find_spec(name, paths) is None


def read_modules(folder: str | os.PathLike | None) -> dict[str, str]:
    """The student's own modules in ``folder`` (name -> source); {} when there is no such folder."""
    if not folder or not Path(folder).is_dir():
        return {}
    found: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.py")):
        if len(found) == MAX_MODULES:
            break
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_MODULE_BYTES:
            continue
        if not own_module_name(path.stem):
            continue
        try:
            found[path.stem] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return found


def write_modules(folder: str | os.PathLike, modules: Mapping[str, str]) -> None:
    """Put the modules back beside a notebook (a scratch folder), so its kernel can import them too."""
    for name, source in modules.items():
        if own_module_name(name):
            (Path(folder) / f"{name}.py").write_text(source, encoding="utf-8")


WRITES_FILE = frozenset({"writefile", "file"})


def _written_target(magic: CellMagic) -> tuple[str, bool] | None:
    """(module name, append) of a ``%%writefile [-a] <name>.py`` cell; None for any other cell, or for a file that
    cannot be a module of the student's own (another folder, another suffix, a library's name)."""
    if magic.name not in WRITES_FILE:
        return None
    try:
        words = shlex.split(magic.args)
    except ValueError:
        return None
    append = any(w in ("-a", "--append") for w in words)
    paths = [w for w in words if not w.startswith("-")]
    if len(paths) != 1:
        return None
    path = paths[0].removeprefix("./")
    if "/" in path or not path.endswith(".py") or not own_module_name(path[:-3]):
        return None
    return path[:-3], append


def _imported(source: str) -> set[str]:
    """The top-level names of the modules a code cell imports, anywhere in it, as the kernel runs the cell
    (graders.checks.reader: not in a magic, shell or help line, nor in a foreign cell magic's body)."""
    try:
        tree = parse_cell("cell", source).tree
    except TooDeep:  # such a notebook is refused (graders.checks.reader.too_deep); its imports count for nothing
        tree = None
    names: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def written_modules(cell_sources: Iterable[str], found: Mapping[str, str]) -> dict[str, str]:
    """The student's own modules as the kernel imports them when it runs the notebook's code cells
    (``cell_sources``, in order): ``found`` (``read_modules``), with each ``%%writefile <name>.py`` cell's body
    (the cell read as IPython reads it: graders.checks.magics) written over, or with ``-a`` appended to, the module
    of that name, until the first cell that imports it: the kernel keeps the module it imported, so a later write
    changes nothing it runs. The limits of ``read_modules`` hold: a module over ``MAX_MODULE_BYTES`` is left out
    (an append to it too, until a write replaces it whole), and a new one is taken only while there are fewer than
    ``MAX_MODULES``."""
    modules = dict(found)
    imported: set[str] = set()
    oversized: set[str] = set()
    for source in cell_sources:
        magic = innermost(source)
        target = None if magic is None else _written_target(magic)
        if magic is None or target is None:
            imported |= _imported(source)
            continue
        name, append = target
        if name in imported or (name not in modules and name not in oversized and len(modules) >= MAX_MODULES):
            continue
        text = (modules.get(name, "") + magic.body) if append else magic.body
        if len(text.encode("utf-8")) > MAX_MODULE_BYTES or (append and name in oversized):
            modules.pop(name, None)
            oversized.add(name)
            continue
        oversized.discard(name)
        modules[name] = text
    return modules


def notebook_modules(nb, found: Mapping[str, str]) -> dict[str, str]:
    """``written_modules`` over a notebook's code cells (an nbformat v4 notebook)."""
    return written_modules((cell.source for cell in nb.cells if cell.cell_type == "code"), found)

