"""The docs site: a configuration reference generated from the traits, every page reachable, README links that lead somewhere.

The reference (``graders.docs_reference``) must find every vecgrade Configurable by
itself, list each trait, and refuse one without a ``help=``; shown both ways with a
Configurable planted in a ``graders`` module.
"""
import gc
import importlib.util
import re

import pytest
import yaml
from traitlets import Integer
from traitlets.config import Configurable

from graders import docs_reference
from graders.docs_reference import config_settings, missing_help, own_traits, reference, vecgrade_configurables

from tests.testkit import ROOT

KNOWN = ("TrustedVerdicts", "ResilientExecute", "LimitOutputBytes", "Sandbox")


@pytest.fixture(scope="module")
def page() -> str:
    return reference(ROOT / "nbgrader_config.py")


def test_every_vecgrade_configurable_is_found_and_every_trait_has_help():
    classes = vecgrade_configurables()
    assert set(KNOWN) <= {c.__name__ for c in classes}
    assert all(c.__module__.startswith("graders.") for c in classes)
    assert missing_help(classes) == []


def test_the_page_lists_every_trait_with_its_default_and_the_configs_value(page):
    for cls in vecgrade_configurables():
        assert f"### `{cls.__name__}`" in page
        for name in own_traits(cls):
            assert f"| `{cls.__name__}.{name}` |" in page, f"{cls.__name__}.{name}"
    row = next(line for line in page.splitlines() if line.startswith("| `Sandbox.memory_mb` |"))
    assert row.split(" | ")[2:4] == ["`6144`", "`6144`"]  # default, and what nbgrader_config.py sets
    row = next(line for line in page.splitlines() if line.startswith("| `TrustedVerdicts.call_timeout` |"))
    assert row.split(" | ")[2:4] == ["`10.0`", "`5.0`"]
    assert "| `OverwriteCells.add_missing_cells` | `True` | Whether or not missing grade_cells" in page  # nbgrader's own
    assert "| `ResilientExecute.timeout` | Int | `20` | `20` | Seconds one cell may run" in page


def test_config_settings_reads_chained_assignments_without_running_the_file(tmp_path):
    config = tmp_path / "nbgrader_config.py"
    config.write_text("c = get_config()\nraise SystemExit('never run')\nc.A.x = c.B.x = 64 * 1024\nc.C.y = [1,\n 2]\n")
    assert config_settings(config) == {("A", "x"): "64 * 1024", ("B", "x"): "64 * 1024", ("C", "y"): "[1, 2]"}


def test_a_new_configurable_appears_by_itself_and_a_trait_without_help_is_refused(page):
    class Planted(Configurable):
        documented = Integer(1, help="A planted setting").tag(config=True)
        undocumented = Integer(2).tag(config=True)

    Planted.__module__ = "graders.planted_for_this_test"
    try:
        assert Planted in vecgrade_configurables()
        assert missing_help([Planted]) == ["Planted.undocumented"]
        with pytest.raises(ValueError, match="Planted.undocumented"):
            reference(ROOT / "nbgrader_config.py")
        Planted.undocumented.help = "Now documented"
        assert "| `Planted.undocumented` | Int | `2` |  | Now documented |" in reference(ROOT / "nbgrader_config.py")
    finally:
        del Planted
        gc.collect()
    assert "Planted" not in {c.__name__ for c in vecgrade_configurables()}


def _hooks():
    spec = importlib.util.spec_from_file_location("vecgrade_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_fills_in_the_generated_page_and_the_contributing_guide(monkeypatch):
    hooks = _hooks()
    monkeypatch.setattr(hooks, "reference", lambda path: f"REFERENCE OF {path.name}")
    configuration = (ROOT / "docs" / "configuration.md").read_text()
    filled = hooks.on_page_markdown(configuration, None, None, None)
    assert hooks.GENERATED in configuration and "REFERENCE OF nbgrader_config.py" in filled
    contributing = hooks.on_page_markdown((ROOT / "docs" / "contributing.md").read_text(), None, None, None)
    assert contributing.strip() == (ROOT / "CONTRIBUTING.md").read_text().strip()
    assert hooks.on_page_markdown("# plain page", None, None, None) == "# plain page"
    assert docs_reference.reference is not hooks.reference  # the patch stayed in the hook module


def test_the_grading_page_lists_every_name_outside_the_subset_from_the_checkers_tables():
    from graders.checks import boundary
    from graders.checks.outside_list import library_rules
    from graders.checks.subset import REFLECTION, TORCH_REACH
    page = (ROOT / "docs" / "grading-reference.md").read_text()
    hooks = _hooks()
    assert hooks.OUTSIDE in page
    filled = hooks.on_page_markdown(page, None, None, None)
    assert hooks.OUTSIDE not in filled and "`torch.manual_seed`" in filled
    listed = [f"torch.{n}" for n in TORCH_REACH] + list(REFLECTION) + [f".{n}" for n in boundary.OUTSIDE_ATTRIBUTES]
    listed += [name for names in library_rules().values() for name in names]
    assert len(listed) > 150
    missing = [name for name in listed if f"`{name}`" not in filled]
    assert not missing, missing
    for seed_name in ("manual_seed", "seed", "set_rng_state"):  # named in the rule text too, not only generated
        assert f"`torch.{seed_name}`" in page


def nav_pages() -> list[str]:
    """Every page the navigation names, sections included (``design/engine.md``), as paths under docs/."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def walk(entries) -> list[str]:
        out: list[str] = []
        for entry in entries:
            value = next(iter(entry.values()))
            out += walk(value) if isinstance(value, list) else [value]
        return out
    return walk(config["nav"])


def test_every_page_is_in_the_navigation_and_every_entry_exists():
    pages = nav_pages()
    assert sorted(pages) == sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    for name in ("index.md", "instructor.md", "student.md", "grading.md", "grading-reference.md", "calibration.md",
                 "security.md", "deploying.md", "on-submit.md", "configuration.md", "contributing.md", "development.md"):
        assert name in pages


def test_the_readme_stays_a_front_page_whose_links_lead_to_pages_that_exist():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not link.startswith("http")]
    assert {"docs/grading.md", "docs/security.md", "docs/configuration.md", "CONTRIBUTING.md"} <= set(local)
    assert [link for link in local if not (ROOT / link).is_file()] == []


def _build_with_exclusions(tmp_path, exclude_docs: str):
    """A tiny site built by MkDocs with ``exclude_docs`` as given, from a docs folder holding what building this
    site leaves there: the hooks module and the bytecode its import writes."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    docs, site = tmp_path / "docs", tmp_path / "site"
    (docs / "__pycache__").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n")
    (docs / "hooks.py").write_text("")
    (docs / "__pycache__" / "hooks.cpython-311.pyc").write_bytes(b"\x00")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    build(load_config(str(tmp_path / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(site), exclude_docs=exclude_docs))
    return sorted(str(p.relative_to(site)) for p in site.rglob("*") if "pycache" in str(p) or p.suffix == ".py")


def test_the_site_publishes_neither_the_hooks_nor_their_bytecode(tmp_path):
    exclude = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["exclude_docs"]
    assert _build_with_exclusions(tmp_path / "ours", exclude) == []
    without = "\n".join(line for line in exclude.splitlines() if "pycache" not in line)
    assert "__pycache__/hooks.cpython-311.pyc" in _build_with_exclusions(tmp_path / "theirs", without)  # control
