"""The configuration reference of the docs site, generated from the traits themselves (one source for every fact).

Every ``Configurable`` the ``graders`` package defines is found by importing the
package's modules and walking traitlets' subclasses, so a new one appears by itself.
Each of its own configurable traits is listed with its type, its default, the value the
course's ``nbgrader_config.py`` sets (read from that file's assignments, never executed)
and its ``help=``. nbgrader's own settings that the file makes are listed too, with
nbgrader's help. ``docs/hooks.py`` puts the result into ``docs/configuration.md``.

    python -m graders.docs_reference [nbgrader_config.py]   # print the reference
"""
from __future__ import annotations

import ast
import html
import importlib
import pkgutil
import sys
from pathlib import Path

from traitlets import TraitType
from traitlets.config import Configurable

import graders
from graders import KIT_ROOT

CONFIG = KIT_ROOT / "nbgrader_config.py"


def _subclasses(cls: type[Configurable]) -> list[type[Configurable]]:
    found: list[type[Configurable]] = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def vecgrade_configurables() -> list[type[Configurable]]:
    """Every Configurable defined in ``graders``, after importing all its modules (sorted by name)."""
    for module in pkgutil.walk_packages(graders.__path__, "graders."):
        importlib.import_module(module.name)
    ours = {c for c in _subclasses(Configurable) if c.__module__.split(".")[0] == "graders"}
    return sorted(ours, key=lambda c: (c.__name__, c.__module__))


def own_traits(cls: type[Configurable]) -> dict[str, TraitType]:
    """The configurable traits ``cls`` defines itself (inherited ones are documented where they are defined)."""
    return dict(sorted(cls.class_own_traits(config=True).items()))


def missing_help(classes: list[type[Configurable]]) -> list[str]:
    """``Class.trait`` of each configurable trait without a ``help=`` text."""
    return [f"{cls.__name__}.{name}" for cls in classes for name, trait in own_traits(cls).items()
            if not (trait.help or "").strip()]


def config_settings(path: Path = CONFIG) -> dict[tuple[str, str], str]:
    """{(class, trait): source of the value} for every ``c.Class.trait = value`` in a config file."""
    settings = {}
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute)
                    and isinstance(target.value.value, ast.Name) and target.value.value.id == "c"):
                settings[target.value.attr, target.attr] = " ".join(ast.unparse(node.value).split())
    return settings


def _one_line(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _cell(text: str) -> str:
    """Prose for a table cell: one line, ``<name>`` shown as written rather than read as HTML."""
    return html.escape(_one_line(text), quote=False)


def _code(text: str) -> str:
    return f"`{_one_line(text)}`" if text else ""


def _first_line(cls: type) -> str:
    """The first paragraph of the class's docstring, else of its module's."""
    doc = cls.__doc__ or getattr(sys.modules.get(cls.__module__), "__doc__", None) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def _help_elsewhere(cls_name: str, trait_name: str) -> str:
    """The help of ``Class.trait`` among nbgrader's and nbconvert's Configurables (config matches classes by
    name, so every class of that name counts)."""
    for module in ("nbgrader.apps", "nbgrader.preprocessors", "nbgrader.exchange", "nbconvert.exporters"):
        importlib.import_module(module)
    for cls in _subclasses(Configurable):
        trait = cls.class_traits().get(trait_name) if cls.__name__ == cls_name else None
        if trait is not None and (trait.help or "").strip():
            return trait.help
    return ""


def class_section(cls: type[Configurable], settings: dict[tuple[str, str], str]) -> str:
    lines = [f"### `{cls.__name__}`", "", f"`{cls.__module__}.{cls.__name__}`: {_cell(_first_line(cls))}", ""]
    traits = own_traits(cls)
    if not traits:
        return "\n".join(lines + ["No settings of its own.", ""])
    lines += ["| trait | type | default | `nbgrader_config.py` sets | help |", "|---|---|---|---|---|"]
    for name, trait in traits.items():
        lines.append(f"| `{cls.__name__}.{name}` | {type(trait).__name__} | {_code(trait.default_value_repr())} "
                     f"| {_code(settings.get((cls.__name__, name), ''))} | {_cell(trait.help)} |")
    return "\n".join(lines + [""])


def nbgrader_section(settings: dict[tuple[str, str], str], ours: set[str]) -> str:
    lines = ["| setting | `nbgrader_config.py` sets | help |", "|---|---|---|"]
    for (cls_name, name), value in sorted(settings.items()):
        if cls_name not in ours:
            lines.append(f"| `{cls_name}.{name}` | {_code(value)} | {_cell(_help_elsewhere(cls_name, name))} |")
    return "\n".join(lines + [""])


def reference(path: Path = CONFIG) -> str:
    """The markdown of the configuration reference; a trait without a ``help=`` is an error (so is the build)."""
    classes = vecgrade_configurables()
    undocumented = missing_help(classes)
    if undocumented:
        raise ValueError(f"traits without help=: {', '.join(undocumented)}")
    settings = config_settings(path)
    parts = ["## vecgrade's settings", "",
             "Generated from each trait's `help=` and default; the fourth column is what the course's "
             "`nbgrader_config.py` sets (empty: the default holds).", ""]
    parts += [class_section(cls, settings) for cls in classes]
    parts += ["## nbgrader's settings that `nbgrader_config.py` makes", "",
              "Any other nbgrader setting works as in plain nbgrader.", "",
              nbgrader_section(settings, {cls.__name__ for cls in classes})]
    return "\n".join(parts)


if __name__ == "__main__":
    print(reference(Path(sys.argv[1]) if len(sys.argv) > 1 else CONFIG))
