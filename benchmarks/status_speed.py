"""``vecgrade status`` for a class: seconds from the command's start to its answer, as a teacher waits for it.

A fresh course with ``--students`` students of ``broadcasting``: each one's
submission in ``submitted/`` (the kit's notebook, read for its content as status reads it), a graded copy in
``autograded/``, a gradebook submission and a feedback page of nbgrader's size (all but a tenth), a row of
``ungraded.csv`` for that tenth, times of record (20 of them
disagreeing with ``timestamp.txt``), and a service's ledger holding a graded
entry per student, two queued entries for a few of them, one collected after
the due date and one refused. Then ``vecgrade status`` runs ``--runs`` times as
its own process (imports and all), and the best and worst wall times are
printed with the load average, then the tables' own time in this process
(imports done). The goal: under 2 s for a class of 100 on the 2-core machine.

    python benchmarks/status_speed.py [--students 100] [--runs 3]
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

from nbgrader.api import Gradebook

from graders import KIT_ROOT
from graders.course.demo import make_course
from graders.course.grade import UNGRADED
from graders.course.status import status_table
from graders.coursedir.course import _put_scripts_on_path
from graders.model.csvsafe import write_rows
from graders.pipeline.arrivals import STAMP_FORMAT, Arrival, save
from graders.serve.ledger import GRADED, LATE, REFUSED, Ledger, ledger_url
from graders.serve.queue import queue_table

A = "broadcasting"
BIN = Path(sys.executable).parent


def class_course(directory: Path, n: int):
    """A course whose ``A`` has ``n`` students in every state ``vecgrade status`` tells apart."""
    course = make_course(directory)
    _put_scripts_on_path()  # a new gradebook runs `alembic`
    students = [f"s{i:03d}" for i in range(n)]
    now = time.time()
    with Gradebook(course.db_url) as gb:
        gb.add_assignment(A)
        for i, s in enumerate(students):
            gb.add_student(s)
            if i % 10:
                gb.add_submission(A, s, timestamp="2025-01-01 10:00:00 UTC")  # graded: autograde sets the time
    notebook = (KIT_ROOT / "source" / A / f"{A}.ipynb").read_text()
    page = "<html><head><style>" + "x" * 300_000 + f"</style></head><body><h4>{A} (Score: 0.0 / 16.0)</h4></body>"
    for i, s in enumerate(students):
        folder = course.root / "submitted" / s / A
        folder.mkdir(parents=True)
        (folder / f"{A}.ipynb").write_text(notebook)
        if i % 10:
            graded = course.root / "autograded" / s / A
            graded.mkdir(parents=True)
            (graded / f"{A}.ipynb").write_text(notebook)
            html = course.root / "feedback" / s / A / f"{A}.html"
            html.parent.mkdir(parents=True)
            html.write_text(page)
    write_rows(course.root / UNGRADED, ["student", "assignment", "reason"],
               [{"student": s, "assignment": A, "reason": "NotANotebookError: not JSON"} for s in students[::10]])
    for s in students[:20]:
        save(course.root, Arrival(s, A, datetime.datetime.utcnow(), "collected",
                                  time.strftime(STAMP_FORMAT.replace("%f", "0"), time.gmtime(now - 3600))))
    ledger = Ledger(ledger_url(course))
    try:
        for i, s in enumerate(students):
            ledger.add(f"{s}+{A}+g", s, A, "2025-01-01 10:00:00 UTC", s, seen_at=now - 60)
            ledger.start(f"{s}+{A}+g")
            ledger.finish(f"{s}+{A}+g", GRADED, score=3, max_score=4)
            if i % 25 == 0:
                for k in range(2):
                    ledger.add(f"{s}+{A}+q{k}", s, A, f"2025-01-01 11:0{k}:00 UTC", s)
        ledger.add(f"{students[1]}+{A}+late", students[1], A, "2025-02-01 10:00:00 UTC", students[1], LATE,
                   "submitted after the due date")
        ledger.add(f"{students[2]}+{A}+bad", students[2], A, "2025-01-01 10:00:00 UTC", students[2], REFUSED,
                   "a symlink")
    finally:
        ledger.close()
    return course


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-status-speed"))
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    course = class_course(args.dir / "course", args.students)
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        proc = subprocess.run([BIN / "vecgrade", "status", "-c", str(course.root)], capture_output=True, text=True,
                              env=dict(os.environ, COLUMNS="200"))
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"error: vecgrade status failed ({proc.returncode}): {proc.stderr.strip()}")
    print(proc.stdout)
    print(f"vecgrade status, {args.students} students, {args.runs} runs: best {min(times):.2f} s, worst "
          f"{max(times):.2f} s (goal: under 2 s); load average {os.getloadavg()[0]:.2f} "
          f"(cores: {os.cpu_count()})")
    names = list(course.assignments)  # imports done: what is left is the work that grows with the class
    start = time.perf_counter()
    status_table(course, names)
    queue_table(course, names)
    print(f"of which the tables themselves (in this process, imports done): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
