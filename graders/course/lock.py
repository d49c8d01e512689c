"""One writer of the gradebook at a time: an advisory lock shared by ``vecgrade grade`` and ``vecgrade serve``.

Both record results through nbgrader's autograde, and both write ``submitted/``,
``autograded/``, ``feedback/`` and ``ungraded.csv``. The batch holds the lock for
its whole run; the service holds it for each submission it records, and waits
(saying so) while the batch runs. It is ``fcntl.flock`` on a file beside the
gradebook (the course folder for a PostgreSQL gradebook): the kernel releases it
when its holder dies, even by SIGKILL, so a crash never leaves a stale lock.
"""
from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from graders.coursedir.course import Course

LOCK_NAME = ".vecgrade-gradebook.lock"


def lock_path(course: Course) -> Path:
    """Beside a SQLite gradebook; in the course folder for any other database."""
    url = course.db_url
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):]).with_name(LOCK_NAME)
    return course.root / LOCK_NAME


def holder(path: Path) -> str:
    """Who holds (or last held) the lock, as its holder wrote it: ``vecgrade grade (pid 123)``."""
    try:
        return path.read_text().strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def gradebook_lock(course: Course, who: str = "vecgrade grade", poll: float = 0.2,
                   waiting: Callable[[str], None] | None = None,
                   stop: Callable[[], bool] | None = None) -> Iterator[None]:
    """Hold the course's gradebook lock; block until it is free (``waiting`` is told once who holds it).

    ``stop`` returning True while waiting raises ``InterruptedError`` (a service asked to stop)."""
    path = lock_path(course)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if waiting is not None and not told:
                    waiting(holder(path))
                    told = True
                if stop is not None and stop():
                    raise InterruptedError("stopped while waiting for the gradebook lock") from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{who} (pid {os.getpid()})\n".encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
