"""Seconds per notebook for `nbgrader autograde` of the demo class: plain, with the checks, confined.

The three runs grade the same submitted notebooks, one after the other, in
one process: plain nbgrader (its default pipeline), the course's pipeline
with the sandbox off, and the course's pipeline as configured (checks and
sandbox). Prints one line per run and the ratios to the plain run.

    python benchmarks/autograde_overhead.py [--dir /tmp/vecgrade-bench]
"""
from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import torch

from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.grade import grade_class


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
    runs = (("plain nbgrader", True, False), ("checks, unconfined", False, False), ("checks, confined", False, True))
    for label, plain, confined in runs:
        shutil.rmtree(course.root / "autograded", ignore_errors=True)
        start = time.perf_counter()
        results = grade_class(course, args.assignment, students, plain=plain, confined=confined)
        elapsed = time.perf_counter() - start
        per_notebook[label] = elapsed / len(students)
        ok = sum(r.success for r in results)
        print(f"{label:20s} {per_notebook[label]:6.2f} s per notebook ({len(students)} notebooks, {ok} graded, "
              f"torch threads {torch.get_num_threads()})")
    for label, *_ in runs[1:]:
        print(f"{label} / plain nbgrader: {per_notebook[label] / per_notebook['plain nbgrader']:.2f}x")
    added = per_notebook['checks, confined'] - per_notebook['checks, unconfined']
    print(f"confinement adds {added:+.2f} s per notebook")


if __name__ == "__main__":
    main()
