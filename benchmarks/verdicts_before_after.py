"""Seconds per notebook for the trusted verdicts of the demo class: this tree against an older revision.

Both trees grade the same submitted notebooks (built once, with this tree),
each in its own process, in one grading run per tree (one reference worker,
as in ``vecgrade grade``), confined as configured by default. The rounds
alternate (old, new, old, new) so both see the same machine load. Prints
seconds per notebook for each round and the ratio new / old.

    python benchmarks/verdicts_before_after.py [--before 2524219] [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from graders import KIT_ROOT
from graders.course.build import write_source
from graders.course.demo import make_course, submit_class

GRADE = r'''
import json, sys, time
from pathlib import Path
import nbformat, torch
from graders.model.exercise import load_assignment
from graders.model.notebook import submission_cells
from graders.checks import submission as sub
from graders.sandbox.policy import Sandbox
assignment = load_assignment(Path(sys.argv[1]))
paths = json.loads(sys.argv[2])
sandbox = Sandbox(course_root=sys.argv[3])
run = sub.GradingRun(7) if hasattr(sub, "GradingRun") else None
kwargs = {"run": run} if run else {"seed": 7}
sub.grade_submission(assignment, [("preamble", assignment.preamble)], only=[], sandbox=sandbox, **kwargs)  # warm run
start = time.perf_counter()
for p in paths:
    nb = nbformat.read(p, as_version=4)
    sub.grade_submission(assignment, submission_cells(nb, assignment), sandbox=sandbox, **kwargs)
print(json.dumps({"per_notebook": (time.perf_counter() - start) / len(paths), "status": sandbox.status()[1]}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="2524219")
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="vecgrade-before-after-"))
    old_tree = work / "before"
    old_tree.mkdir()
    archive = subprocess.run(["git", "-C", str(KIT_ROOT), "archive", args.before], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
    course = make_course(work / "course")
    write_source(course.root, course.assignments[args.assignment])
    with course.api() as api:
        assert api.generate_assignment(args.assignment)["success"]
    students = submit_class(course, args.assignment)
    paths = [str(course.root / "submitted" / s / args.assignment / f"{args.assignment}.ipynb") for s in students]
    for p in paths:
        nbformat.read(p, as_version=4)
    results: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.rounds):
        for label, tree in (("before", old_tree), ("after", KIT_ROOT)):
            definitions = tree / "assignments" / f"{args.assignment}.py"
            out = subprocess.run([sys.executable, "-c", GRADE, str(definitions), json.dumps(paths), str(course.root)],
                                 cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
                                 capture_output=True, text=True, check=True)
            figures = json.loads(out.stdout.strip().splitlines()[-1])
            results[label].append(figures["per_notebook"])
            print(f"{label:6s} {figures['per_notebook']:6.2f} s per notebook "
                  f"({len(paths)} notebooks; {figures['status']})",
                  flush=True)
    best = {k: min(v) for k, v in results.items()}
    print(f"after / before (best round each): {best['after'] / best['before']:.2f}x")


if __name__ == "__main__":
    main()
