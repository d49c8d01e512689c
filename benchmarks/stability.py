"""How many verdicts change when the demo class is graded again and again under load.

Grades the demo class N times (default 10), ``--jobs`` notebooks at once
(default 2, as `vecgrade grade --jobs 2`), while ``--busy`` other processes
keep cores busy (default 0), and prints, per run, how many (student, grade
cell) scores differ from the first run. The goal is 0: thresholds leave room
for noise.

    python benchmarks/stability.py [--runs 10] [--jobs 2] [--busy 0] [--dir /tmp/vecgrade-stability]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.grade import grade_class

BUSY = "while True: pass"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-stability"))
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--busy", type=int, default=0, help="processes that keep a core busy meanwhile")
    args = parser.parse_args()
    course = make_course(args.dir)
    assignment = course.assignments[args.assignment]
    write_source(course.root, assignment)
    with course.api() as api:
        assert api.generate_assignment(args.assignment)["success"]
    students = submit_class(course, args.assignment)
    load = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.busy)]
    try:
        first, changed_total = None, 0
        for run in range(1, args.runs + 1):
            start = time.perf_counter()
            grade_class(course, args.assignment, students, jobs=args.jobs)
            scores = course.part_scores(assignment)
            if first is None:
                first = scores
            changed = [(s, g) for s in scores for g in scores[s] if scores[s][g] != first.get(s, {}).get(g)]
            changed_total += len(changed)
            print(f"run {run:2d}: {len(changed)} verdicts differ from run 1 "
                  f"({time.perf_counter() - start:.0f} s) {changed[:5]}", flush=True)
    finally:
        for p in load:
            p.kill()
    if first is None:
        raise SystemExit("--runs must be at least 1: no run was graded")
    cells = sum(len(v) for v in first.values())
    print(f"{changed_total} changed verdicts in {args.runs - 1} reruns of {cells} grade cells "
          f"(--jobs {args.jobs}, {args.busy} busy processes)")


if __name__ == "__main__":
    main()
