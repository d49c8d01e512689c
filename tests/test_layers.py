"""The package's layering: no subpackage imports from a layer above its own (so no import circle between them),
read from the source by ``graders.docs_imports``, the module that also draws the graph for the docs."""
from pathlib import Path

from graders.docs_imports import LAYERS, ROOT, TOP, drawing, edges, imported_layers, upward


def test_no_import_goes_back_up_a_layer():
    assert upward(edges()) == []


def test_every_subpackage_has_a_layer():
    package = Path(__file__).resolve().parent.parent / "graders"
    subpackages = {p.parent.name for p in package.glob("*/__init__.py")}
    assert subpackages == set(LAYERS)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "graders"
    for name, source in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


def test_an_import_back_up_is_found_even_inside_a_function(tmp_path):
    root = _package(tmp_path, {
        "model/__init__.py": "", "model/a.py": "def f():\n    from graders.cli.app import main\n",
        "cli/__init__.py": "", "cli/app.py": "from graders.model.a import f\nmain = f\n",
    })
    graph = edges(root)
    assert graph[("model", "cli")] == 1 and graph[("cli", "model")] == 1
    assert upward(graph) == [("model", "cli")]


def test_imports_down_or_within_a_layer_are_not_findings(tmp_path):
    root = _package(tmp_path, {
        "model/__init__.py": "", "model/a.py": "import os\nfrom graders import __version__\n",
        "sandbox/__init__.py": "", "sandbox/b.py": "import graders.model.a\nfrom graders.sandbox import c\n",
        "sandbox/c.py": "",
    })
    graph = edges(root)
    assert set(graph) == {("model", ROOT), ("sandbox", "model")}
    assert upward(graph) == []


def test_each_import_statement_counts_once():
    assert imported_layers("from graders.model.exercise import Exercise, Assignment\nimport torch\n") == ["model"]
    assert imported_layers("import graders.cli, graders.model.errors\n") == ["cli"]


def test_the_drawing_names_every_layer():
    svg = drawing(edges()).decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for name in (ROOT, *LAYERS, TOP):
        assert name in svg, name
