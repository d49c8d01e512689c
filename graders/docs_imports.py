"""The package's imports between its subpackages, as a layered graph: read from the source, checked and drawn.

Each subpackage of ``graders`` sits on one layer of ``LAYERS`` (lowest first) and may import only from its own
layer or below; the package's top-level modules (the entry point, the docs' helpers) and the ``python -m``
launchers (``__main__.py``) sit above every layer.
``edges`` reads every ``import graders.…`` of the source with ``ast`` (imports inside functions and under
``TYPE_CHECKING`` too), ``upward`` lists the ones that break the layering (none may: ``tests/test_layers.py``),
and ``drawing`` renders the graph as an SVG with matplotlib (the docs site's ``design/imports.svg``, made by
``docs/hooks.py`` on every build, so the drawing is always of the code as it is).
"""
from __future__ import annotations

import ast
import io
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
# lowest first: a subpackage imports only from its own layer or a lower one
LAYERS = ("model", "sandbox", "checks", "student", "coursedir", "pipeline", "engine", "course", "serve", "cli")
ROOT = "(package root)"  # graders/__init__.py: the version and the checkout's folder, below every layer
TOP = "(top-level modules)"  # graders/*.py: the entry point and the docs' helpers, above every layer
Edge = tuple[str, str]  # (importer, imported), each a name of LAYERS or TOP


def layer_of(path: Path, package: Path = PACKAGE) -> str:
    """The layer of a source file: its subpackage, or ``TOP`` for a module of the package itself."""
    parts = path.relative_to(package).parts
    if parts == ("__init__.py",):
        return ROOT
    if len(parts) == 1 or parts[-1] == "__main__.py":  # a ``python -m`` launcher is a program: nothing imports it
        return TOP
    return parts[0]


def imported_layers(source: str, package: Path = PACKAGE) -> list[str]:
    """The subpackages of ``graders`` that ``source`` imports, once per import statement (relative imports are
    not used in this package)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module + "." + alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "graders":
                found.append(_layer_named(parts[1] if len(parts) > 1 else "", package))
                break  # one per statement: ``from graders.x import a, b`` is one edge
    return found


def _layer_named(name: str, package: Path) -> str:
    """The layer of ``graders.<name>``: a subpackage, a top-level module, or a name the package root defines."""
    if name in LAYERS:
        return name
    return TOP if (package / f"{name}.py").is_file() else ROOT


def edges(package: Path = PACKAGE) -> Counter[Edge]:
    """Every import between two different layers, counted by statement."""
    counted: Counter[Edge] = Counter()
    for path in sorted(package.rglob("*.py")):
        here = layer_of(path, package)
        for there in imported_layers(path.read_text(encoding="utf-8"), package):
            if there != here:
                counted[(here, there)] += 1
    return counted


def rank(layer: str) -> int:
    """Height of a layer: the package root lowest, then ``LAYERS`` in order, the top-level modules highest."""
    if layer == ROOT:
        return -1
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def upward(graph: Counter[Edge] | dict[Edge, int]) -> list[Edge]:
    """The edges that import from a higher layer (an arrow back up), which also are the only way to a circle."""
    return sorted(edge for edge in graph if rank(edge[1]) > rank(edge[0]))


def drawing(graph: Counter[Edge] | dict[Edge, int], fmt: str = "svg") -> bytes:
    """The layers stacked bottom-up (the package root lowest), each import between two layers an arrow labelled
    with its count of statements; an arrow back up would be drawn in red. Returns the image in ``fmt``."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"  # the layers' names stay text in the SVG: searchable, and smaller

    names = [ROOT, *LAYERS, TOP]
    fig, ax = plt.subplots(figsize=(7.5, 0.75 * len(names) + 0.5))
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.7, len(names) - 0.3)
    ax.axis("off")
    for y, name in enumerate(names):
        ax.text(1.6, y, name, ha="center", va="center", fontsize=11,
                bbox={"boxstyle": "round,pad=0.35", "facecolor": "#eef3fb", "edgecolor": "#4a6fa5"})
    bad = set(upward(graph))
    for i, ((src, dst), count) in enumerate(sorted(graph.items(), key=lambda e: (rank(e[0][0]), rank(e[0][1])))):
        y0, y1 = rank(src) + 1, rank(dst) + 1
        x = 3.2 + 0.13 * i  # each edge in its own lane, right of the boxes, so none hides another
        colour = "#c0392b" if (src, dst) in bad else "#555555"
        ax.annotate("", xy=(x, y1 + 0.18), xytext=(x, y0 - 0.18),
                    arrowprops={"arrowstyle": "->", "color": colour, "lw": 0.6 + 0.08 * min(count, 20)})
        ax.plot([2.55, x], [y0, y0], color="#bbbbbb", lw=0.4)
        ax.text(x + 0.03, (y0 + y1) / 2, str(count), fontsize=6, color=colour, va="center")
    ax.set_title("imports between the layers of graders: each arrow points at the layer imported;"
                 " numbers: import statements", fontsize=8)
    out = io.BytesIO()
    fig.savefig(out, format=fmt, bbox_inches="tight", dpi=110)
    plt.close(fig)
    return out.getvalue()
