"""When two answers are the same program: the key of the code an exercise's function reaches.

The key is what grading depends on and nothing else: the statements
``Submission.program_for`` chooses, normalized by ``ast.unparse`` (so
comments, blank lines and formatting don't count) with docstrings dropped,
the labels of the cells they come from, the source of each of the
submission's own modules it imports (whole, as it is checked), and a salt naming the grading run's
conditions (seed, definitions, timeouts). Names and constants count: `a * 2`
and `a * 3` are different programs. ``near_key`` also renames the local
variables and parameters of every function in order of appearance, for
answers that are the same program up to renaming (a teacher checking
collaboration, not a grading shortcut).
"""
from __future__ import annotations

import ast
import copy
import hashlib
import json

from graders.checks.static import Submission

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _without_docstrings(node: ast.stmt) -> ast.stmt:
    node = copy.deepcopy(node)
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if isinstance(sub, _SCOPES) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            sub.body = body[1:] or [ast.Pass()]
    return node


class _RenameLocals(ast.NodeTransformer):
    """Each function's parameters and local names become ``_0``, ``_1`` ... in order of appearance."""

    def visit_FunctionDef(self, node):
        names: dict[str, str] = {}
        outer = {n for sub in ast.walk(node) if isinstance(sub, (ast.Global, ast.Nonlocal)) for n in sub.names}
        for sub in ast.walk(node.args):
            if isinstance(sub, ast.arg):
                names.setdefault(sub.arg, f"_{len(names)}")
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id not in outer:
                names.setdefault(sub.id, f"_{len(names)}")
        for sub in ast.walk(node):
            if isinstance(sub, ast.arg) and sub.arg in names:
                sub.arg = names[sub.arg]
            elif isinstance(sub, ast.Name) and sub.id in names:
                sub.id = names[sub.id]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def program_text(submission: Submission, name: str, rename_locals: bool = False) -> str:
    """The reached statements as one normalized text, each headed by its cell's label."""
    parts = []
    for label, node in submission.statements_for(name):
        node = _without_docstrings(node)
        if rename_locals:
            node = _RenameLocals().visit(node)
        parts.append(f"# {label}\n{ast.unparse(node)}")
    modules = [f"# module {label}\n{source}" for _, label, source in submission.modules_for(name)]  # checked whole
    problems = sorted({f"{f.what}: {f.why}" for f in submission.problems_for(name)})
    return "\n".join(parts + modules + [f"# problem: {p}" for p in problems])


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def program_key(submission: Submission, name: str, salt: str = "") -> str:
    """Equal for two answers that are the same program (see the module's docstring), under the same ``salt``."""
    return _digest(name, salt, program_text(submission, name))


def near_key(submission: Submission, name: str) -> str:
    """Equal for two answers that are the same program up to renaming the local variables of its functions."""
    return _digest(name, program_text(submission, name, rename_locals=True))
