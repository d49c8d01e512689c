"""How many verdicts change when a class is graded again and again, on a quiet and on a loaded machine.

For each ``--load`` level N (default 0 and 4), N busy processes run beside the grading while the demo class
and the honest class (tests/honest_class.py) are graded ``--runs`` times each, ``--jobs`` notebooks at once;
every (student, grade cell) score is compared with the first run at the first level. The goal is 0 changed
verdicts. Then, per level, ``--ratios`` requests of the reference program timed as a student's answer (what
"fast" measures for an answer identical to the reference: a fresh child, the same warm-up, one request and
then the best of two, against the run's shared reference time) give the share within 0.8-1.25x of it.

    python benchmarks/stability.py [--runs 10] [--jobs 2] [--load 0 4] [--ratios 40] [--dir DIR]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from graders.checks.fast import warm_up_requests
from graders.checks.submission import GradingRun
from graders.checks.timing import timed
from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.grade import grade_class
from graders.sandbox.policy import Sandbox
from graders.sandbox.session import Template, WorkerSession

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from honest_class import roster  # noqa: E402  (the tests' honest class)

BUSY = "while True: pass"


def classes(root: Path, assignment: str):
    """A course with the demo class and, when the assignment is broadcasting, the honest class submitted."""
    course = make_course(root)
    write_source(course.root, course.assignments[assignment])
    with course.api() as api:
        assert api.generate_assignment(assignment)["success"]
    students = submit_class(course, assignment)
    if assignment == "broadcasting":
        students += submit_class(course, assignment, roster())
    return course, students


def ratios(assignment, n: int, sandbox) -> list[tuple[float, float]]:
    """Identical code's measured time over the reference's, request by request, as "fast" measures it: its first
    request, and its best of two (what decides when the first is not clear)."""
    out = []
    with GradingRun() as run:
        reference = run.reference(assignment, sandbox)
        template = Template(run.limits, sandbox, run.server)
        template.start()
        try:
            for i in range(n):
                ex = assignment.exercises[i % len(assignment.exercises)]
                k = reference.calibration(ex).k
                warm = warm_up_requests(run, ex, k)
                staged = run.bench_inputs(ex, "repetition 0", k)
                again = run.bench_inputs(ex, "repetition 0, again", k)
                cells = [("preamble", assignment.preamble), (f"your `{ex.name}` cell", ex.reference_source())]
                with WorkerSession(cells, template=template) as student:
                    for w in warm:
                        timed(student, w, 600)
                    t = timed(student, staged, 600)[0]
                    t2 = timed(student, again, 600)[0]
                shared = reference.shared_time(ex, "repetition 0", staged, warm)
                out.append((t / shared, min(t, t2) / shared))
        finally:
            template.__exit__()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-stability"))
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--load", type=int, nargs="+", default=[0, 4], help="busy processes beside the grading")
    parser.add_argument("--ratios", type=int, default=40, help="timed requests of identical code per level")
    args = parser.parse_args()
    if args.runs < 1:
        raise SystemExit("error: --runs must be at least 1")
    course, students = classes(args.dir, args.assignment)
    assignment = course.assignments[args.assignment]
    sandbox = Sandbox(course_root=str(course.root))
    first, cells = None, 0
    for level in args.load:
        load = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(level)]
        try:
            changed_total = 0
            for run in range(1, args.runs + 1):
                start = time.perf_counter()
                grade_class(course, args.assignment, students, jobs=args.jobs)
                scores = course.part_scores(assignment)
                if first is None:
                    first, cells = scores, sum(len(v) for v in scores.values())
                changed = [(s, g) for s in scores for g in scores[s] if scores[s][g] != first.get(s, {}).get(g)]
                changed_total += len(changed)
                print(f"load {level}, run {run:2d}: {len(changed)} verdicts differ from the first run "
                      f"({time.perf_counter() - start:.0f} s) {changed[:5]}", flush=True)
            found = ratios(assignment, args.ratios, sandbox) if args.ratios else []
        finally:
            for p in load:
                p.kill()
        print(f"load {level}: {changed_total} changed verdicts in {args.runs} gradings of {cells} grade cells "
              f"({len(students)} students, --jobs {args.jobs})")
        for label, measured in (("one request", [r[0] for r in found]), ("best of two", [r[1] for r in found])) \
                if found else ():
            inside = sum(0.8 <= r <= 1.25 for r in measured) / len(measured)
            print(f"load {level}: identical code, {label}, measured at {statistics.median(measured):.2f}x the "
                  f"reference (median of {len(measured)}; min {min(measured):.2f}x, max {max(measured):.2f}x); "
                  f"{inside:.0%} within 0.8-1.25x")


if __name__ == "__main__":
    main()
