"""Start-up of ``vecgrade --help``, ``vecgrade status``, ``vecgrade export`` and ``vecgrade grade -s`` as a teacher
runs them: the installed ``vecgrade`` command in its own process, for a class of ``--students`` (the course of
``status_speed.py``, its gradebook holding the assignment's grade cells and every graded student's marks, so the export
has marks to write); ``grade -s`` grades one notebook of reference answers (the demo class's ada, every part reached,
"fast" included) in a course of its own, built and released as the README's workflow does, start-up and all.

Each command runs once to warm up (the first ``status`` after a change of the definitions imports them, torch and
all, and writes the catalogue), then ``--runs`` times; the best and the median CPU seconds (user + system of the
command's process, what a loaded machine does not inflate as it does the wall time) and wall seconds are printed,
with the load average. ``--against DIR`` runs each command with another checkout's ``graders`` too (``PYTHONPATH``),
interleaved, for a before/after comparison on the same load. The goals (issues 28, 30 and 40): ``--help``, ``status``
and ``export`` start in at most 1 s idle, ``status`` answers in under 2 s for a class of 100, ``grade -s`` takes at
most 3 s idle, start-up included.

    python benchmarks/startup.py [--students 100] [--runs 5] [--against /path/to/an/older/checkout]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning
from status_speed import A, class_course

from graders import KIT_ROOT
from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.personas import load_roster
from graders.course.results import max_points

VECGRADE = Path(sys.executable).parent / "vecgrade"
HERE = Path(__file__).resolve().parent.parent  # this checkout


def graded_course(directory: Path, n: int):
    """``status_speed``'s class, its gradebook holding ``A``'s grade cells and full marks for each graded student."""
    warnings.filterwarnings("ignore", category=SAWarning)  # nbgrader's own session bookkeeping on add_submission
    course = class_course(directory, n)
    points = max_points(course.assignments[A])
    with Gradebook(course.db_url) as gb:
        gb.add_notebook(A, A)
        for gid, p in points.items():
            gb.add_grade_cell(gid, A, A, max_score=p, cell_type="code")
        graded = [sub.student.id for sub in gb.find_assignment(A).submissions]
        for student in graded:  # a submission made before the grade cells has no grades: made again after them
            gb.remove_submission(A, student)
            gb.add_submission(A, student)
            for gid, p in points.items():
                gb.find_grade(gid, A, A, student).auto_score = p
        gb.db.commit()
    return course


def one_submission(directory: Path, student: str = "ada"):
    """A course with ``A`` built, generated and released, and the demo class's ``student`` submitted."""
    course = make_course(directory, KIT_ROOT)
    write_source(course.root, course.assignments[A])
    with course.api() as api:
        for step in (api.generate_assignment, api.release_assignment):
            if not step(A)["success"]:
                raise SystemExit(f"error: nbgrader could not prepare {A} in {directory}")
    people = [p for p in load_roster(KIT_ROOT, course.assignments[A]) if p.student == student]
    submit_class(course, A, people)
    return course


def timed(args: list[str], code: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``args`` in its own process; ``code``: the checkout whose ``graders``
    it runs."""
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(code))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = os.times().elapsed
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    wall = os.times().elapsed - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-startup"))
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None, help="another checkout, run interleaved")
    args = parser.parse_args()
    codes = {"this checkout": HERE}
    if args.against is not None:
        codes[f"{args.against}"] = args.against.resolve()
    # one course per checkout: each keeps the definitions' catalogue stamped with its own code's digest, and two
    # checkouts sharing a course would rewrite it in turn, importing torch on every run
    commands: dict[str, dict[str, list[str]]] = {}
    for i, label in enumerate(codes):
        root = str(graded_course(args.dir / f"course-{i}", args.students).root)
        commands.setdefault("--help", {})[label] = [str(VECGRADE), "--help"]
        commands.setdefault(f"status ({args.students} students)", {})[label] = [str(VECGRADE), "status", "-c", root]
        commands.setdefault(f"export ({args.students} students)", {})[label] = [
            str(VECGRADE), "export", "-c", root, "--to", str(args.dir / f"grades-{i}.csv")]
        graded = str(one_submission(args.dir / f"grade-{i}").root)
        commands.setdefault("grade -s (one notebook)", {})[label] = [str(VECGRADE), "grade", A, "-s", "ada", "-c",
                                                                     graded]
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for name, by_code in commands.items():
        for label, code in codes.items():
            cpu, wall = timed(by_code[label], code)
            print(f"warm-up {name} [{label}]: {cpu:.2f} s CPU, {wall:.2f} s wall", flush=True)
    for _ in range(args.runs):
        for name, by_code in commands.items():
            for label, code in codes.items():
                figures.setdefault((name, label), []).append(timed(by_code[label], code))
    for (name, label), runs in figures.items():
        cpus, walls = [r[0] for r in runs], [r[1] for r in runs]
        print(f"vecgrade {name} [{label}], {args.runs} runs: CPU best {min(cpus):.2f} s, median "
              f"{statistics.median(cpus):.2f} s; wall best {min(walls):.2f} s, median {statistics.median(walls):.2f} s")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
