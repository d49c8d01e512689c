"""The coordinator's gradebooks share one engine per database, and never write through a replaced file."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbgrader.api
import pytest
from nbgrader.api import Gradebook
from sqlalchemy import create_engine

from graders.engine import gradebooks


@pytest.fixture(autouse=True)
def alembic_on_path(monkeypatch):
    """nbgrader runs the ``alembic`` program of this environment when it makes a new gradebook."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def test_gradebooks_share_one_engine_while_shared_and_not_after(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    Gradebook(url).close()  # the gradebook exists, as when a class is graded
    gradebooks.share()
    try:
        with Gradebook(url) as one, Gradebook(url) as two:
            assert one.engine is two.engine
    finally:
        gradebooks.unshare()
    assert nbgrader.api.create_engine is create_engine
    with Gradebook(url) as one, Gradebook(url) as two:
        assert one.engine is not two.engine


def test_shares_nest():
    gradebooks.share()
    gradebooks.share()
    gradebooks.unshare()
    try:
        assert nbgrader.api.create_engine is gradebooks.shared_engine
    finally:
        gradebooks.unshare()
    assert nbgrader.api.create_engine is create_engine


def test_a_gradebook_deleted_and_made_again_is_written_in_the_new_file(tmp_path):
    path, empty = tmp_path / "gradebook.db", tmp_path / "empty.db"
    url = f"sqlite:///{path}"
    Gradebook(url).close()
    Gradebook(f"sqlite:///{empty}").close()
    gradebooks.share()
    try:
        with Gradebook(url) as gb:
            gb.add_student("ada")
            first = gb.engine
        path.unlink()  # the teacher starts over: a new gradebook file under the same name
        shutil.copy(empty, path)
        with Gradebook(url) as gb:
            assert gb.engine is not first
            gb.add_student("bob")
    finally:
        gradebooks.unshare()
    with Gradebook(url) as gb:
        assert [s.id for s in gb.students] == ["bob"]
