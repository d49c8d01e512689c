"""Every name outside the checked subset, as the checker's own tables say: the list in docs/grading-reference.md.

``docs/hooks.py`` puts ``markdown()`` into the page where it says ``<!-- generated: names outside the subset -->``,
so the list is the code's, whatever torch version builds the docs:

- attributes that are findings on any object (``.manual_seed``, ``.jit``, ``.register_hook`` ...,
  ``graders.checks.subset.TORCH_REACH`` and ``boundary.OUTSIDE_ATTRIBUTES``);
- builtins that are reflection (``getattr``, ``eval`` ...);
- every public callable and class of the allowed modules that ``boundary.classify`` puts outside the subset (or
  counts as iteration), grouped by the reason a student reads;
- the modules outside the subset that the allowed modules hand out as attributes (``torch.sys`` ...).

    python -m graders.checks.outside_list     # print it
"""
from __future__ import annotations

from collections import defaultdict

from graders.checks import boundary
from graders.checks.finding import ITERATION
from graders.checks.library import foreign_module_names
from graders.checks.subset import ITERATING, REFLECTION, TORCH_REACH


def library_rules() -> dict[tuple[str, str], list[str]]:
    """{(kind, why): sorted qualified names} of the allowed modules' public names outside the subset."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for module, name, obj in boundary._public_names():
        rule = boundary.classify(f"{module}.{name}", obj) if obj is not None else None
        if rule:
            found[rule].add(f"{module}.{name}")
    return {rule: sorted(names) for rule, names in sorted(found.items())}


def _names(names) -> str:
    return ", ".join(f"`{n}`" for n in sorted(names))


def markdown() -> str:
    """The generated section: one bullet per table, each name in backticks."""
    torch_reach = [f"torch.{n}" for n in sorted(TORCH_REACH)]
    attributes = {**boundary.OUTSIDE_ATTRIBUTES}
    lines = [
        "Generated from the checker's tables (`graders/checks/outside_list.py`) with the torch installed where "
        "the docs were built. Each is a finding of kind `outside` (it costs \"vectorized\" and \"fast\") unless "
        "marked iteration.",
        "",
        f"- **torch's dispatcher, JIT, threads and random state** (`TORCH_REACH`): {_names(torch_reach)}; "
        "each name is a finding read as an attribute of any object but `self`/`cls` (`m.manual_seed` with "
        "`m = torch` too), and as a name imported from any module.",
        f"- **Attributes of any object**: {_names('.' + n for n in attributes)}, and every "
        "`.register_*hook*` (`register_hook`, `register_forward_pre_hook` ...).",
        f"- **Builtins (reflection)**: {_names(REFLECTION)}; iterating builtins (kind iteration, free over a "
        f"fixed-size iterable): {_names(ITERATING)}.",
    ]
    for (kind, why), names in library_rules().items():
        label = "iteration" if kind == ITERATION else "outside"
        lines.append(f"- **{why[0].upper() + why[1:]}** ({label}, {len(names)}): {_names(names)}.")
    public = [n for n in foreign_module_names() if not n.startswith("_")]  # private attributes are findings anyway
    lines.append(f"- **Modules outside the subset that the allowed modules hand out** (as `.name` on any "
                 f"object; every private or dunder attribute is a finding too): {_names(public)}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown())
