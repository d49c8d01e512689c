"""The exercise model: what an instructor writes in ``assignments/<name>.py``.

An assignment module defines ``ASSIGNMENT = Assignment(...)``. Everything the
notebook, the grader and the validator need comes from here, so the
definitions are the single source of truth.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import io
import re
import sys
import textwrap
import tokenize
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import torch

from graders.model.catalogue import Points, grade_id
from graders.model.fingerprint import assignment_fingerprint, definitions_files, fingerprint
from graders.model.hints import LOOP_HINT
from graders.model.verdict import PARTS

# torch.testing.assert_close's default (rtol, atol) per dtype (its documented table): no result is held to less
ASSERT_CLOSE: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7), torch.complex32: (1e-3, 1e-5), torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7)}


@dataclass(frozen=True)
class Case:
    """One call of the function under test: a label for messages, and its arguments."""

    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Example:
    """A visible example: code that sets up the arguments, and the call to check.

    ``setup`` is shown verbatim in the notebook; ``call`` is an expression in
    the exercise's function. The expected output is computed from the
    reference at build time and written into the notebook as a literal.
    """

    setup: str
    call: str
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class Exercise:
    """One function to vectorize.

    - ``reference`` is the instructor's solution; ``name`` and ``signature`` (its ``def``
      line) are derived from it, so they cannot disagree.
    - ``loop`` is the loop version handed to students; it must be named ``<name>_loop``.
    - ``hidden(gen)`` yields ``Case``s: random inputs and edge cases, seeded per run.
    - ``sized(gen, n)`` returns the arguments at size ``n``: used to count ops at
      ``count_sizes`` and to time at ``bench_size``.
    - ``alternatives``: other correct vectorized formulations (any function names); each
      must pass all three parts, so the tolerances and speed bars admit them.
    - ``half_loops``: one per axis of the inputs that grows with ``sized``'s size argument, a loop
      over that axis with vectorized work inside; each must pass "correct" and fail "vectorized"
      and "fast", so "fast" means vectorized-class speed whichever growing axis a student loops over.
      ``half_loop`` is shorthand for one: it is put first in ``half_loops`` at construction (and
      reads None afterwards, so ``half_loops`` is the one list to consult).
    - ``rtol`` and ``atol``: the exercise's own tolerances, for every float dtype; a result is never held to
      less than ``torch.testing.assert_close``'s defaults for its dtype (``tolerance``). An answer that
      computes a float64 case in float32 is caught by "fast" (``graders.checks.precision``), not here.
    - ``terms(*args)``: the magnitude of the terms a float result is built from (default: of the
      inputs); rounding in proportion to it is allowed, so every sound formulation passes.
    - ``shape_params``: the parameters that are a shape, sizes, strides or a permutation of a tensor's dimensions
      with a fixed number of entries at every size (``("shape", "perm")``): a loop over one, ``math.prod``,
      ``map(int, ...)``, ``len``, or ``.tolist()`` of a tensor made from one is as free as over ``x.shape``
      (graders.checks.fixed); the task text says so (``shape_note``). A parameter whose length grows with
      ``sized``'s size is not one.
    - ``python_list``: a version that works on Python lists; it must fail "fast". When
      None, ``validate`` derives one (see ``graders.course.validate.python_list_source``).
    """

    task: str
    reference: Callable
    loop: Callable
    hidden: Callable[[torch.Generator], Iterable[Case]]
    sized: Callable[[torch.Generator, int], tuple]
    examples: Sequence[Example]
    hints: Sequence[str] = ()
    loop_hint: str = LOOP_HINT
    rtol: float = 1e-5
    atol: float = 1e-6
    forbidden: Sequence[str] = ()
    forbidden_ops: Sequence[str] = ()
    count_sizes: tuple[int, int] = (4, 16)
    bench_size: int = 64
    speedup: float = 10.0
    ref_factor: float = 3.0
    max_ops: int = 300  # absolute bounds on one counted call, next to the growth test
    max_lines: int = 200
    points: Points = Points()
    in_place: bool = False
    must_be_view: bool = False
    terms: Callable[..., torch.Tensor | float] | None = None
    alternatives: Sequence[Callable] = ()
    half_loop: Callable | None = None
    half_loops: Sequence[Callable] = ()
    python_list: Callable | None = None
    shape_params: Sequence[str] = ()
    name: str = ""
    signature: str = ""

    def __post_init__(self):
        derived_name = self.reference.__name__
        derived = _def_line(self.reference)
        if self.name and self.name != derived_name:
            raise ValueError(f"exercise {self.name!r}: its reference is named {derived_name!r}")
        if self.signature and self.signature != derived:
            raise ValueError(f"exercise {derived_name!r}: signature {self.signature!r} differs from the "
                             f"reference's {derived!r}")
        if self.loop.__name__ != f"{derived_name}_loop":
            raise ValueError(f"exercise {derived_name!r}: its loop version is named {self.loop.__name__!r}, "
                             f"expected {derived_name + '_loop'!r}")
        params = inspect.signature(self.reference).parameters
        unknown = [p for p in self.shape_params if p not in params]
        if unknown:
            raise ValueError(f"exercise {derived_name!r}: shape_params {unknown} are not parameters of {derived!r}")
        object.__setattr__(self, "shape_params", tuple(self.shape_params))
        object.__setattr__(self, "name", derived_name)
        object.__setattr__(self, "signature", derived)
        if self.half_loop is not None:
            object.__setattr__(self, "half_loops", (self.half_loop, *self.half_loops))
            object.__setattr__(self, "half_loop", None)

    @property
    def shape_note(self) -> str:
        """The task text's sentence on ``shape_params`` ("" without any)."""
        if not self.shape_params:
            return ""
        names = " and ".join(f"`{p}`" for p in self.shape_params)
        return (f"{names} {'has' if len(self.shape_params) == 1 else 'have'} a fixed number of entries, like "
                "`x.shape`: a loop over "
                f"{'it' if len(self.shape_params) == 1 else 'them'} (or `math.prod`, `map(int, ...)`, `len`, or "
                "`.tolist()` of a tensor made from "
                f"{'it' if len(self.shape_params) == 1 else 'them'}) is not a loop over the data.")

    @property
    def loop_name(self) -> str:
        return f"{self.name}_loop"

    def cases(self, gen: torch.Generator) -> list[Case]:
        """What "correct" checks: ``hidden(gen)``'s cases, then ``large_case`` drawn after them."""
        hidden = list(self.hidden(gen))
        return [*hidden, self.large_case(gen, hidden)]

    def large_case(self, gen: torch.Generator, hidden: Sequence[Case]) -> Case:
        """A case at ``bench_size`` (``sized``'s arguments), its float tensors in float64 when one of ``hidden``
        takes float64 (small float64 cases alone let an answer switch to float32 above the hidden sizes): the
        size "fast" times and "vectorized" counts at is checked for value in the dtype a student may be given."""
        args = self.sized(gen, self.bench_size)
        takes64 = any(isinstance(a, torch.Tensor) and a.dtype == torch.float64
                      for case in hidden for a in (*case.args, *case.kwargs.values()))
        if takes64:
            args = tuple(a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
        return Case(f"{'float64 ' if takes64 else ''}inputs at the benchmark size {self.bench_size}", args)

    def tolerance(self, dtype: torch.dtype) -> tuple[float, float]:
        """``(rtol, atol)`` for a result of ``dtype``, compared with the reference's: each the larger of
        ``torch.testing.assert_close``'s default for ``dtype`` (``ASSERT_CLOSE``) and the exercise's own. So code
        that PyTorch's own test helper accepts (an ``eps=1e-7`` in a denominator, in float64) passes, and an
        exercise may only loosen it; integers and booleans are compared exactly whatever it says."""
        base_rtol, base_atol = ASSERT_CLOSE.get(dtype, (0.0, 0.0))
        return max(base_rtol, self.rtol), max(base_atol, self.atol)

    def magnitude(self, args: tuple) -> torch.Tensor | float:
        """The size of the numbers a float result is computed from, for ``compare.mismatch``'s rounding
        allowance: ``terms(*args)`` where the exercise gives it (for a result built from products or
        sums of squares), else the largest absolute value among the float inputs."""
        if self.terms is not None:
            return self.terms(*args)
        floats = [a for a in args if isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel()]
        return max((float(a.abs().max()) for a in floats), default=0.0)

    def grade_id(self, part: str) -> str:
        return grade_id(self.name, part)

    def reference_source(self) -> str:
        return function_source(self.reference)

    def loop_source(self) -> str:
        return function_source(self.loop)

    def source_as(self, fn: Callable, name: str | None = None) -> str:
        """``fn``'s source with its ``def`` renamed to ``name`` (default: this exercise's name),
        so that a variant written under its own name can be submitted as the answer."""
        src = textwrap.dedent(inspect.getsource(fn))
        return re.sub(rf"^def {re.escape(fn.__name__)}\(", f"def {name or self.name}(", src, count=1, flags=re.M)

    def reference_body(self) -> str:
        """The reference's body (everything after its ``def`` line): what goes between the solution markers."""
        src = self.reference_source().splitlines()
        start = next(i for i, line in enumerate(src) if line.startswith("def "))
        return "\n".join(src[start + 1:])


_SOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def function_source(fn: Callable) -> str:
    """``fn``'s source, dedented, read once per function object: a grading run asks for the reference's and the
    loop version's source for every timed request (the program the reference's children run, and its key), and
    ``inspect.getsource`` scans the definitions file each time. Definitions imported again are new function
    objects, read afresh."""
    try:
        return _SOURCES[fn]
    except (KeyError, TypeError):
        pass
    src = textwrap.dedent(inspect.getsource(fn))
    try:
        _SOURCES[fn] = src
    except TypeError:  # not weakly referenceable: read each time
        pass
    return src


def _def_line(fn: Callable) -> str:
    """``fn``'s ``def`` line as written (``eps=1e-5`` stays ``1e-5``, which ``inspect.signature`` would
    print as ``1e-05``), checked against ``inspect.signature``: what students' stubs begin with."""
    src = textwrap.dedent(inspect.getsource(fn))
    lines = src.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(src).readline):   # drop comments
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    start = next(i for i, text in enumerate(lines) if text.startswith("def "))
    line = ""
    for text in lines[start:]:  # a def line may span several lines: take lines until they parse as one
        line = f"{line} {text.strip()}".strip()
        try:
            ast.parse(f"{line}\n    pass\n")
            break
        except SyntaxError:
            continue
    compiled: dict = {}
    exec(compile(f"{line}\n    pass\n", "<def line>", "exec"), dict(vars(inspect.getmodule(fn) or object())), compiled)
    if inspect.signature(compiled[fn.__name__]) != inspect.signature(fn):
        raise ValueError(f"could not read the def line of {fn.__name__!r}: got {line!r}")
    return line


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    lesson: str
    exercises: Sequence[Exercise]
    preamble: str = "import torch"
    order: int = 0
    # its own ``graders.model.fingerprint.assignment_fingerprint`` when loaded from a folder (``load_assignment``),
    # else "": the files it is defined by, and the shared ones
    fingerprint: str = field(default="", compare=False, repr=False)
    # the whole folder's fingerprint ("" when built in code): only to compare notebooks graded before fingerprints
    # were per assignment (``fingerprint.graded_under_other``)
    folder_print: str = field(default="", compare=False, repr=False)

    def exercise(self, name: str) -> Exercise:
        for ex in self.exercises:
            if ex.name == name:
                return ex
        raise KeyError(f"assignment {self.name!r} has no exercise {name!r}")

    def part_of(self, grade_id: str) -> tuple[Exercise, str] | None:
        """Map an nbgrader grade_id back to (exercise, part), or None."""
        for ex in self.exercises:
            for part in PARTS:
                if grade_id == ex.grade_id(part):
                    return ex, part
        return None


def load_lesson(assignment_file: str) -> str:
    """The text of ``lessons/<assignment>.md`` beside an assignment file: prose lives in markdown."""
    path = Path(assignment_file).parent / "lessons" / f"{Path(assignment_file).stem}.md"
    return path.read_text(encoding="utf-8")


def load_variants(assignment_file: str, folder: str = "variants"):
    """The module ``<folder>/<assignment>.py`` beside an assignment file (``assignments`` is not an
    installed package): ``variants`` holds the alternatives and half loops that ``vecgrade validate``
    grades, ``cases`` the input generators of a long assignment."""
    path = Path(assignment_file).parent / folder / Path(assignment_file).name
    return _import_path(path, f"vecgrade_assignments.{folder}.{path.stem}")


def _import_path(path: Path, mod_name: str):
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:  # a path without a Python source suffix
        raise ImportError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


def load_assignment(path: Path, files: Mapping[str, str] | None = None) -> Assignment:
    """Import one definition module by path (``assignments`` is not an installed package), with its fingerprints
    (its own and the folder's, from the folder's ``files`` when the caller has read them already)."""
    path = Path(path)
    module = _import_path(path, f"vecgrade_assignments.{path.stem}")
    assignment = getattr(module, "ASSIGNMENT", None)
    if not isinstance(assignment, Assignment):
        raise ValueError(f"{path} defines no ASSIGNMENT = Assignment(...)")
    if assignment.name != path.stem:
        raise ValueError(f"{path}: ASSIGNMENT.name is {assignment.name!r}, expected {path.stem!r}")
    files = definitions_files(path.parent) if files is None else files
    return dataclasses.replace(assignment, fingerprint=assignment_fingerprint(files, path.stem),
                               folder_print=fingerprint(files))


_LOADED: dict[tuple[str, str], Assignment] = {}


def load_assignment_once(path: Path) -> Assignment:
    """``load_assignment``, imported once per process while the definitions folder's files stay the same:
    a grading process keeps the same exercise objects from one notebook to the next (and what the
    grading run caches for them)."""
    path = Path(path).resolve()
    files = definitions_files(path.parent)
    key = (str(path), fingerprint(files))
    if key not in _LOADED:
        _LOADED[key] = load_assignment(path, files)
    return _LOADED[key]


def load_course(assignments_dir: Path) -> dict[str, Assignment]:
    """All assignments of a course, by name, in file order."""
    files = sorted(p for p in Path(assignments_dir).glob("*.py") if not p.name.startswith("_"))
    texts = definitions_files(Path(assignments_dir))
    loaded = sorted((load_assignment(f, texts) for f in files), key=lambda a: (a.order, a.name))
    return {a.name: a for a in loaded}
