"""Shared fixtures: the course's definitions, and small programs to grade."""
from pathlib import Path

import pytest

from graders.model.exercise import load_assignment

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def broadcasting():
    return load_assignment(ROOT / "assignments" / "broadcasting.py")


def program(assignment, **answers):
    """A submission: the preamble, then one cell per answer source."""
    return [("preamble", assignment.preamble)] + [(f"your `{name}` cell", src) for name, src in answers.items()]
