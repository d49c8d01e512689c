"""One SQLAlchemy engine per gradebook in the coordinator, instead of one per ``nbgrader.api.Gradebook``.

nbgrader opens a ``Gradebook`` about ten times to record one student (autograde's bookkeeping, each of its
preprocessors), and each ``Gradebook`` calls ``create_engine``: a new connection pool and a new cache of
compiled statements, so every query was compiled again (a fifth of the coordinator's CPU time per notebook
in a ``--jobs 2`` run). Between ``share()`` and ``unshare()`` (a ``Engine``'s life), nbgrader's ``create_engine``
returns the same engine for the same gradebook; ``Gradebook.close`` only removes its session, so the engine
lives on. It is a new engine in a forked process (connections must not cross a fork) and for a SQLite file
that was replaced (a gradebook deleted and made again must not be written through the old file's
connection). When the last user leaves, nbgrader's own ``create_engine`` is back and the engines' pooled
connections are closed (a PostgreSQL database can then be dropped).
"""
from __future__ import annotations

import os
from typing import Any

import nbgrader.api
from sqlalchemy import create_engine
from sqlalchemy.engine import Engine, make_url

from graders.pipeline.nbgrader_seam import patch

_engines: dict[tuple, Engine] = {}
_held: list[int] = []  # the kept SQLite files, open
_users = 0


def _sqlite_file(url: Any) -> str | None:
    parsed = make_url(str(url))
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return parsed.database


def shared_engine(url: Any, **options: Any) -> Engine:
    """``create_engine(url, **options)``, made once per process, gradebook and options. A SQLite file is told by
    its device and inode, and held open while its engine is kept, so that no later file can reuse the inode."""
    path, held, identity = _sqlite_file(url), None, None
    if path is not None:
        try:
            held = os.open(path, os.O_RDONLY)
        except OSError:
            return create_engine(url, **options)  # no file yet: which file it will be is not known, so it is not kept
        found = os.fstat(held)
        identity = (found.st_dev, found.st_ino)
    key = (os.getpid(), str(url), identity, tuple(sorted((k, repr(v)) for k, v in options.items())))
    engine = _engines.get(key)
    if engine is None:
        engine = _engines[key] = create_engine(url, **options)
        if held is not None:
            _held.append(held)
    elif held is not None:
        os.close(held)
    return engine


def share() -> None:
    """From now until the matching ``unshare``, nbgrader's gradebooks share one engine per database (it nests)."""
    global _users
    _users += 1
    patch("nbgrader.api.create_engine", shared_engine)


def unshare() -> None:
    """The end of one ``share``: after the last, nbgrader makes its own engines again and ours are closed."""
    global _users
    _users -= 1
    if _users == 0:
        nbgrader.api.create_engine = create_engine  # type: ignore[attr-defined]
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()
        for fd in _held:
            os.close(fd)
        _held.clear()
