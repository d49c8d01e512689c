"""Seconds per notebook for a class: plain nbgrader, `vecgrade grade` serially, and `--jobs 2`.

The demo class (9 personas) is replicated to N notebooks (student ``ada-007``
and so on) in one fresh course; each run regrades the same N submissions, one
after the other, in one process, through ``grade_class`` (what `vecgrade grade`
calls). Prints seconds per notebook for each run and the ratios. Figures are
only comparable within one run of this script, on an otherwise idle machine.

    python benchmarks/throughput.py [--sizes 40 120] [--dir /tmp/vecgrade-throughput]
"""
from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.grade import grade_class


def replicate(course, assignment: str, size: int) -> list[str]:
    """``size`` submissions: copies of the demo class's notebooks under new student names."""
    base = submit_class(course, assignment)
    students = []
    for i in range(size):
        src, name = base[i % len(base)], f"{base[i % len(base)]}-{i:03d}"
        dest = course.root / "submitted" / name / assignment
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(course.root / "submitted" / src / assignment / f"{assignment}.ipynb", dest)
        students.append(name)
    for src in base:
        shutil.rmtree(course.root / "submitted" / src)
    return students


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-throughput"))
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--sizes", type=int, nargs="+", default=[40, 120])
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}")
    runs = (("plain nbgrader", dict(plain=True)), ("vecgrade serial", dict(jobs=1)),
            ("vecgrade --jobs 2", dict(jobs=2)))
    for size in args.sizes:
        course = make_course(args.dir)
        write_source(course.root, course.assignments[args.assignment])
        with course.api() as api:
            assert api.generate_assignment(args.assignment)["success"]
        students = replicate(course, args.assignment, size)
        per = {}
        for label, options in runs:
            shutil.rmtree(course.root / "autograded", ignore_errors=True)
            start = time.perf_counter()
            results = grade_class(course, args.assignment, students, **options)
            per[label] = (time.perf_counter() - start) / size
            print(f"{size:4d} notebooks  {label:18s} {per[label]:6.2f} s per notebook "
                  f"({sum(r.success for r in results)} graded)", flush=True)
        for label, _ in runs[1:]:
            print(f"{size:4d} notebooks  {label} is {per['plain nbgrader'] / per[label]:.2f}x plain nbgrader's speed")
        print(f"{size:4d} notebooks  --jobs 2 is {per['vecgrade serial'] / per['vecgrade --jobs 2']:.2f}x serial")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
