"""Seconds per notebook for `nbgrader autograde` of the demo class, with vecgrade's checks and without.

Both runs grade the same submitted notebooks, one after the other, in one
process: first plain nbgrader (its default pipeline), then the course's
pipeline with ``TrustedVerdicts``. Prints one line per run and their ratio.

    python benchmarks/autograde_overhead.py [--dir /tmp/vecgrade-bench]
"""
from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import torch

from graders.build import write_source
from graders.classgrade import grade_class
from graders.demo import make_course, submit_class


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-bench"))
    parser.add_argument("--assignment", default="broadcasting")
    args = parser.parse_args()
    course = make_course(args.dir)
    write_source(course.root, course.assignments[args.assignment])
    with course.api() as api:
        assert api.generate_assignment(args.assignment)["success"]
    students = submit_class(course, args.assignment)
    per_notebook = {}
    for label, plain in (("plain nbgrader", True), ("with vecgrade checks", False)):
        shutil.rmtree(course.root / "autograded", ignore_errors=True)
        start = time.perf_counter()
        results = grade_class(course, args.assignment, students, plain=plain)
        elapsed = time.perf_counter() - start
        per_notebook[label] = elapsed / len(students)
        ok = sum(r.success for r in results)
        print(f"{label:22s} {per_notebook[label]:6.2f} s per notebook ({len(students)} notebooks, {ok} graded, "
              f"torch threads {torch.get_num_threads()})")
    print(f"ratio: {per_notebook['with vecgrade checks'] / per_notebook['plain nbgrader']:.2f}x")


if __name__ == "__main__":
    main()
