"""The nbgrader seam: every attribute of nbgrader that vecgrade replaces, in one table, patched only on a tested
nbgrader.

vecgrade works around nine behaviours of nbgrader 0.9.6 by replacing attributes
of its modules and classes (docs/development.md, "The nbgrader seam", says
which bug each one works around). A replacement assumes the code it replaces or
wraps: an nbgrader whose code differs could make it wrong without a word. So
``patch`` replaces only what ``PATCHES`` lists, and only when the installed
nbgrader is in ``TESTED`` (pyproject's range); outside it, it patches nothing and
stops the process with one ``error:`` line (``NbgraderUntestedError``; a
``SystemExit``, so that traitlets, which logs and ignores an exception in a
config file, cannot swallow it and grade unpatched). Each entry records a
fingerprint of the nbgrader code it relies on; tests/test_nbgrader_seam.py
fails when the installed nbgrader's code differs from it.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

TESTED = SpecifierSet(">=0.9.6,<0.10")  # pyproject.toml allows the same (tests/test_nbgrader_seam.py)
TESTED_ON = ("0.9.6",)  # the releases in that range the table's fingerprints were taken on


@dataclass(frozen=True)
class Patch:
    """One replaced attribute: ``target`` (its dotted name), the vecgrade function that replaces it (``by``), the
    nbgrader code the replacement assumes (``relies_on``, dotted names) and that code's ``fingerprint`` on the
    tested nbgrader."""
    target: str
    by: str
    relies_on: tuple[str, ...]
    fingerprint: str


_AUTOGRADE = ("nbgrader.converters.autograde.Autograde.init_assignment",
              "nbgrader.converters.base.BaseConverter.init_notebooks",
              "nbgrader.converters.base.BaseConverter._format_source")
PATCHES = {p.target: p for p in (
    Patch("nbgrader.apps.api.Autograde", "graders.pipeline.intake.install",
          ("nbgrader.apps.api.NbGraderAPI.autograde", *_AUTOGRADE), "e468a76cecfa4c1f"),
    Patch("nbgrader.apps.autogradeapp.Autograde", "graders.pipeline.intake.install",
          ("nbgrader.apps.autogradeapp.AutogradeApp.start", *_AUTOGRADE), "259f838a891cbe50"),
    Patch("nbgrader.coursedir.CourseDirectory.get_existing_timestamp", "graders.pipeline.arrivals.install",
          ("nbgrader.coursedir.CourseDirectory.get_existing_timestamp",), "187a451f7b844155"),
    Patch("nbgrader.exchange.ExchangeFactory.collect.default_value", "graders.pipeline.arrivals.install",
          ("nbgrader.exchange.exchange_factory.ExchangeFactory.Collect",
           "nbgrader.exchange.default.collect.ExchangeCollect.copy_files",
           "nbgrader.exchange.default.collect.ExchangeCollect.do_copy"), "91679828070a635a"),
    Patch("nbgrader.nbgraderformat.common.jsonschema", "graders.pipeline.metadata.install",
          ("nbgrader.nbgraderformat.common.BaseMetadataValidator.validate_cell",), "e5f97f45a9aba510"),
    Patch("nbgrader.apps.api.NbGraderAPI.get_submission", "graders.course.formgrader.install",
          ("nbgrader.apps.api.NbGraderAPI.get_submission",), "b04e875b925f3b8e"),
    Patch("nbgrader.apps.api.NbGraderAPI.get_submissions", "graders.course.formgrader.install",
          ("nbgrader.apps.api.NbGraderAPI.get_submissions",), "d8f6bf5442c612a9"),
    Patch("nbgrader.apps.api.NbGraderAPI.get_submitted_timestamp", "graders.course.formgrader.install",
          ("nbgrader.apps.api.NbGraderAPI.get_submitted_timestamp",), "c949d22f67889929"),
    Patch("nbgrader.api.create_engine", "graders.engine.gradebooks.share",
          ("nbgrader.api.Gradebook.__init__", "nbgrader.api.Gradebook.close"), "2be970e2311c52d1"),
)}


class NbgraderUntestedError(SystemExit):
    """The installed nbgrader is outside ``TESTED``: nothing was patched (the message is one ``error:`` line)."""


def installed_version() -> str:
    return importlib.metadata.version("nbgrader")


def check_version() -> None:
    """``NbgraderUntestedError`` unless the installed nbgrader is in ``TESTED``."""
    found = installed_version()
    if Version(found) not in TESTED:
        raise NbgraderUntestedError(
            f"error: nbgrader {found} is installed, but vecgrade's patches of nbgrader were tested on nbgrader"
            f"{TESTED} only (docs/development.md, \"The nbgrader seam\"): install it with "
            f"pip install 'nbgrader{TESTED}'")


_originals: dict[str, object] = {}  # target -> nbgrader's own value, kept at the first patch


def patch(target: str, value: object) -> None:
    """Set the attribute ``target`` names (one of ``PATCHES``) to ``value``, on a tested nbgrader only."""
    if target not in PATCHES:
        raise KeyError(f"{target} is not in graders.pipeline.nbgrader_seam.PATCHES: add it, with what it relies on")
    check_version()
    owner_name, attribute = target.rsplit(".", 1)
    owner = resolve(owner_name)
    _originals.setdefault(target, getattr(owner, attribute))
    setattr(owner, attribute, value)


def original(dotted: str) -> object:
    """What ``dotted`` named in nbgrader before any ``patch`` (through ``functools.wraps`` too)."""
    return inspect.unwrap(_originals[dotted] if dotted in _originals else resolve(dotted))  # type: ignore[arg-type]


def resolve(dotted: str) -> object:
    """The object a dotted name names: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(f"no module in {dotted}")


def fingerprint(relies_on: tuple[str, ...]) -> str:
    """16 hex digits of the named functions' source (signature and body) in the installed nbgrader."""
    sources = [inspect.getsource(original(name)) for name in relies_on]  # type: ignore[arg-type]
    return hashlib.sha256("\0".join(sources).encode()).hexdigest()[:16]
