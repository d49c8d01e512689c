"""Seconds per notebook for a class: plain nbgrader, `vecgrade grade` serially, `--jobs 2`, and two Dask workers.

Two classes are graded, each in a fresh course, from the demo class's notebooks replicated to N students:

- **distinct**: every student's reached program is distinct (each answer's function starts with a line
  `_unique = <student number>`, which changes nothing it computes), so the run's verdict cache never hits:
  the figure the speed targets refer to;
- **duplicated**: half the students keep their persona's notebook as it is (a class where many write the
  same answer), the other half are made distinct as above: reported separately.

Each class is graded by plain nbgrader (kernel execution only, no checks), by vecgrade serially, with
`--jobs 2`, and on a Dask cluster of two single-threaded workers that this script starts. Prints seconds per
notebook and the ratios; figures are comparable only within one run of this script.

    python benchmarks/throughput.py [--sizes 40 120] [--classes distinct duplicated] [--dir DIR]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat

from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.grade import grade_class
from graders.model.notebook import answer_id, grade_id_of


def make_distinct(path: Path, assignment, number: int) -> None:
    """Make every answer's reached program this student's own: a first line that computes nothing."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for ex in assignment.exercises:
            if grade_id_of(cell) == answer_id(ex.name):
                cell.source = re.sub(rf"^(def {ex.name}\(.*\):[^\n]*\n)", rf"\g<1>    _unique = {number}\n",
                                     cell.source, count=1, flags=re.M)
    nbformat.write(nb, path)


def replicate(course, assignment: str, size: int, duplicated: bool) -> list[str]:
    """``size`` submissions: copies of the demo class's notebooks under new student names."""
    definitions = course.assignments[assignment]
    base = submit_class(course, assignment)
    students = []
    for i in range(size):
        src, name = base[i % len(base)], f"{base[i % len(base)]}-{i:03d}"
        dest = course.root / "submitted" / name / assignment
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(course.root / "submitted" / src / assignment / f"{assignment}.ipynb", dest)
        if not duplicated or i % 2:
            make_distinct(dest / f"{assignment}.ipynb", definitions, i)
        students.append(name)
    for src in base:
        shutil.rmtree(course.root / "submitted" / src)
    return students


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_cluster() -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and two single-threaded workers on localhost, as docs/deploying.md starts them (preloaded)."""
    from distributed import Client
    dask = str(Path(sys.executable).with_name("dask"))
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    commands = [[dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"]]
    commands += [[dask, "worker", address, "--nthreads", "1", "--no-dashboard",
                  "--preload", "graders.engine.dask_worker"]] * 2
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
    with Client(address, timeout="60s") as client:
        client.wait_for_workers(2, timeout=120)
    return address, procs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-throughput"))
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--sizes", type=int, nargs="+", default=[40])
    parser.add_argument("--classes", nargs="+", default=["distinct", "duplicated"],
                        choices=["distinct", "duplicated"])
    parser.add_argument("--no-dask", action="store_true", help="leave out the Dask cluster")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}")
    address, cluster = (None, []) if args.no_dask else dask_cluster()
    runs: list[tuple[str, dict]] = [("plain nbgrader", {"plain": True}), ("vecgrade serial", {"jobs": 1}),
                                    ("vecgrade --jobs 2", {"jobs": 2})]
    if address is not None:
        runs.append(("vecgrade on Dask (2 workers)", {"scheduler": address}))
    try:
        for kind in args.classes:
            for size in args.sizes:
                course = make_course(args.dir)
                write_source(course.root, course.assignments[args.assignment])
                with course.api() as api:
                    assert api.generate_assignment(args.assignment)["success"]
                students = replicate(course, args.assignment, size, duplicated=kind == "duplicated")
                per = {}
                for label, options in runs:
                    shutil.rmtree(course.root / "autograded", ignore_errors=True)
                    start = time.perf_counter()
                    results = grade_class(course, args.assignment, students, **options)
                    per[label] = (time.perf_counter() - start) / size
                    print(f"{kind:10s} {size:4d} notebooks  {label:28s} {per[label]:6.2f} s per notebook "
                          f"({sum(r.success for r in results)} graded)", flush=True)
                plain, head = per["plain nbgrader"], f"{kind:10s} {size:4d} notebooks "
                for label, _ in runs[1:]:
                    print(f"{head} {label} is {plain / per[label]:.2f}x plain nbgrader's speed")
                if address is not None:
                    dask = per[runs[3][0]] / per["vecgrade --jobs 2"]
                    print(f"{head} Dask costs {dask:.2f}x the --jobs 2 time per notebook")
    finally:
        for p in cluster:
            p.terminate()
        for p in cluster:  # the workers give back their grading processes first: wait, or the next run meets them
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
