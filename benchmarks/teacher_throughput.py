"""What a teacher waits for: the ``vecgrade grade`` command, start-up included, against plain ``nbgrader autograde``.

A fresh course (graders.course.demo.make_course, the assignment built and generated) and a mixed class of N
(default 40) distinct notebooks: a quarter the reference's answers (``ex.reference_source()``), a quarter other
correct formulations (``ALTERNATIVE`` of demo/<assignment>.py; broadcasting's softmax uses a forbidden call, a
realistic formulation), a quarter loops, a quarter untouched stubs. The loops (``--loops``) are by default novice
loops, element by element as real first submissions are (tests/novice_loops.py: nested ``for`` over every element,
``.item()``, Python lists; written for broadcasting, each in the student's own local names), or with
``--loops version`` the notebook's own loop versions renamed (graders.course.personas.loop_answer: what this
benchmark graded before), or with ``--loops half`` each exercise's first half loop (``Exercise.half_loops``: a
loop over one axis with vectorized slices, nearer the bar, so "fast" times it longer). Each notebook is made
distinct (throughput.make_distinct: every answer's first line ``_unique = <n>``), so no verdict is shared between
students. Students are named ``<kind>-<n>`` (``novice-<n>``, ``loop-<n>`` or ``half-<n>`` for the loops).

Each run grades a fresh copy of that course (no gradebook rows, no autograded/), as a fresh process, timed by
wall clock:

- ``plain``: ``nbgrader autograde ASSIGNMENT --force`` with nbgrader's own pipeline: the copy's nbgrader_config.py
  drops vecgrade's ``autograde_preprocessors`` and ``sanitize_preprocessors`` (what ``Course.config(plain=True)``,
  and so throughput.py's "plain nbgrader", does): nbgrader executes each notebook's kernel, without vecgrade's
  checks;
- ``jobs2``, ``jobs1``: ``vecgrade grade ASSIGNMENT --jobs 2`` / ``--jobs 1``;
- ``one``: ``vecgrade grade ASSIGNMENT -s <a reference student>`` (default jobs): the fixed cost.

Per kind of answer (``--per-kind``, default ``plain jobs2``): each kind's N/4 notebooks graded again as a class of
their own, in a fresh copy of the course that holds only them, by each of those runs, timed as a whole like the
others (start-up included: each run's fixed cost is spread over N/4 notebooks, not N, so a kind's seconds per
notebook are higher than within the mixed class, and its ratio moves towards the ratio of the two start-ups).
Printed as a table per kind: seconds, seconds per notebook, the ratio of plain's time to ``--jobs 2``'s.
``--per-kind none`` leaves it out.

Every fresh process gets ``PYTHONPATH`` = this checkout, so it grades with this checkout's ``graders``. Prints a
table (seconds, seconds per notebook, ratio of plain's time to this run's) and the load average before and after
each run. ``--demo`` also grades the demo's personas replicated to N distinct notebooks (plain and ``--jobs 2``),
for comparison with throughput.py.

Breakdown (``--breakdown``): ``vecgrade grade -s <student>`` and the class's ``--jobs 2`` run again under
``benchmarks/phases.py`` (timers around each phase, one JSON line per call, every process on one clock; see its
docstring), and their summaries are printed: per phase count, total and mean seconds, by kind of answer for
notebooks and exercises, and the coordinator's timeline. Imports are measured with
``python -X importtime -c 'import graders.course.grade'``; the coordinator's own CPU (recording, sanitizing) with
``python -m cProfile -o coord.prof -m graders.cli grade ...`` in a copy of ``--keep``'s course; for a sampling
profile of every process, py-spy (``py-spy record --subprocesses -o prof.svg -- python -m graders.cli grade ...``).
``--base DIR`` runs every vecgrade run (and the breakdown) also with the checkout DIR (the code before a change),
just before this checkout's, so a before/after pair shares the machine's state.

    python benchmarks/teacher_throughput.py [--size 40] [--runs plain jobs2 jobs1 one] [--loops novice|version|half]
                                            [--per-kind plain jobs2] [--demo] [--breakdown]
                                            [--base DIR] [--keep] [--dir /tmp/vecgrade-teacher]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from throughput import make_distinct, replicate  # benchmarks/ is the script's folder, first on sys.path

from graders import KIT_ROOT
from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.personas import Persona, demo_module, loop_answer

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(HERE.parent / "tests"))
import novice_loops  # noqa: E402  (the tests' novice loops: one source for the benchmarks and their test)

KINDS = ("reference", "alternative", "loop", "stub")
PLAIN_CONFIG = """
# teacher_throughput.py: plain nbgrader (nbgrader's own autograde steps, none of vecgrade's)
c.Autograde.pop("autograde_preprocessors", None)
c.Autograde.pop("sanitize_preprocessors", None)
"""


def novice_answer(i: int):
    """Student ``i``'s novice loops, in its own local names (novice_loops.distinct)."""
    return lambda ex: novice_loops.distinct(novice_loops.answer(ex.name), i)


def mixed_class(assignment, size: int, loops: str = "novice") -> list[Persona]:
    """The class: a quarter each of ``KINDS``; ``loops``: "novice" (tests/novice_loops.py), "version" (the
    notebook's loop versions) or "half" (each exercise's first half loop: a loop over one axis, vectorized
    inside)."""
    if loops == "novice" and assignment.name != novice_loops.ASSIGNMENT:
        raise SystemExit(f"error: novice loops are written for {novice_loops.ASSIGNMENT} only "
                         f"(tests/novice_loops.py); for {assignment.name} use --loops version")
    alternative = demo_module(KIT_ROOT, assignment.name).ALTERNATIVE
    answers = {"reference": lambda ex: ex.reference_source(), "alternative": lambda ex: alternative[ex.name],
               "stub": lambda ex: None}
    people = []
    for i in range(size):
        kind = KINDS[i * len(KINDS) // size]
        answer = answers.get(kind) or {"novice": novice_answer(i), "version": loop_answer,
                                        "half": lambda ex: ex.source_as(ex.half_loops[0])}[loops]
        kind = {"novice": "novice", "half": "half"}.get(loops, "loop") if kind == "loop" else kind
        people.append(Persona(f"{kind}-{i:03d}", kind, answer, lambda name: (0.0, 0.0, 0.0)))
    return people


def pristine(directory: Path, assignment: str, size: int, demo: bool,
             loops: str = "novice") -> tuple[Path, list[str]]:
    """A course with the class submitted and nothing graded; the students."""
    course = make_course(directory)
    definitions = course.assignments[assignment]
    write_source(course.root, definitions)
    with course.api() as api:
        assert api.generate_assignment(assignment)["success"]
    if demo:
        students = replicate(course, assignment, size, duplicated=False)
    else:
        students = submit_class(course, assignment, mixed_class(definitions, size, loops))
        for i, student in enumerate(students):
            make_distinct(course.root / "submitted" / student / assignment / f"{assignment}.ipynb", definitions, i)
    return course.root, students


def env(checkout: str = str(HERE.parent)) -> dict[str, str]:
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": checkout + (os.pathsep + path if path else ""),
            "PATH": str(BIN) + os.pathsep + os.environ.get("PATH", "")}


def vecgrade(*args: str, log: Path | None = None) -> list[str]:
    if log is not None:
        return [sys.executable, str(HERE / "phases.py"), str(log), *args]
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'vecgrade'; from graders.entry import main; "
            "main()", *args]


def timed_run(source: Path, where: Path, command: list[str], plain: bool = False,
              checkout: str = str(HERE.parent), only: list[str] | None = None) -> tuple[float, str, tuple]:
    """Grade a fresh copy of ``source`` at ``where`` with ``command``: (wall seconds, output, load before/after);
    ``only``: the students the copy keeps (the others' submissions are removed before the clock starts)."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(source, where, symlinks=True)
    if only is not None:
        for student in (where / "submitted").iterdir():
            if student.name not in only:
                shutil.rmtree(student)
    if plain:
        with open(where / "nbgrader_config.py", "a") as f:
            f.write(PLAIN_CONFIG)
    before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=where, env=env(checkout), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    seconds = time.perf_counter() - start
    return seconds, done.stdout, (before, os.getloadavg()[0])


def graded(output: str, where: Path, assignment: str, plain: bool) -> str:
    if plain:
        return f"{len(list((where / 'autograded').glob(f'*/{assignment}/{assignment}.ipynb')))} autograded"
    found = re.search(r"graded (\d+) of (\d+)", output)
    return f"{found.group(1)} of {found.group(2)} graded" if found else "(no summary line)"


def per_kind(args, source: Path, students: list[str], label: str, commands: dict[str, list[str]]) -> None:
    """``--per-kind``: each kind's notebooks graded as a class of their own by each run; a table per kind."""
    runs = [r for r in args.per_kind if r != "none"]
    if not runs:
        return
    a, rows = args.assignment, []
    for kind in dict.fromkeys(s.split("-")[0] for s in students):
        mine = [s for s in students if s.startswith(f"{kind}-")]
        times = {}
        for run in runs:
            where = args.dir / f"{label}-{kind}-{run}"
            seconds, output, load = timed_run(source, where, commands[run], plain=run == "plain", only=mine)
            times[run] = seconds
            print(f"{label:6s} {kind:11s} {run:6s} {seconds:7.1f} s  {len(mine):3d} notebook(s)  "
                  f"{graded(output, where, a, run == 'plain')}  load {load[0]:.2f} -> {load[1]:.2f}", flush=True)
            if not args.keep:
                shutil.rmtree(where, ignore_errors=True)
        rows.append((kind, len(mine), times))
    print(f"\n{label} class by kind of answer, each kind graded as a class of its own (start-up included):")
    print(f"{'kind':11s} {'notebooks':>9s} " + " ".join(f"{r + ' s':>9s} {r + ' s/nb':>11s}" for r in runs)
          + ("  jobs2 vs plain" if {"plain", "jobs2"} <= set(runs) else ""))
    for kind, n, times in rows:
        ratio = f"  {times['plain'] / times['jobs2']:14.2f}x" if {"plain", "jobs2"} <= set(times) else ""
        print(f"{kind:11s} {n:9d} " + " ".join(f"{times[r]:9.1f} {times[r] / n:11.2f}" for r in runs) + ratio)
    print(flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-teacher"))
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--runs", nargs="+", default=["plain", "jobs2", "jobs1", "one"],
                        choices=["plain", "jobs2", "jobs1", "one", "none"])
    parser.add_argument("--demo", action="store_true", help="also the demo's personas, replicated (plain, jobs2)")
    parser.add_argument("--breakdown", action="store_true", help="also -s and --jobs 2 under benchmarks/phases.py")
    parser.add_argument("--breakdown-runs", nargs="+", default=["one", "jobs2"], choices=["one", "jobs2"])
    parser.add_argument("--base", type=Path, help="another checkout (the code before a change): each vecgrade run "
                        "is also run with it, just before, labelled <run>@base")
    parser.add_argument("--keep", action="store_true", help="keep the run folders")
    parser.add_argument("--loops", choices=["novice", "version", "half"], default="novice",
                        help="the class's loops: novices' element-by-element answers, the notebook's loop versions, "
                        "or half loops (one axis looped over, vectorized inside)")
    parser.add_argument("--per-kind", nargs="+", default=["plain", "jobs2"], choices=["plain", "jobs2", "none"],
                        help="runs repeated on each kind's notebooks alone, a class of their own")
    args = parser.parse_args()
    a = args.assignment
    args.dir.mkdir(parents=True, exist_ok=True)
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}", flush=True)
    classes = [("mixed", False)] + ([("demo", True)] if args.demo else [])
    for label, demo in classes:
        source, students = pristine(args.dir / f"{label}-course", a, args.size, demo, args.loops)
        one = next((s for s in students if s.startswith("reference")), students[0])
        commands = {"plain": ["nbgrader", "autograde", a, "--force"],
                    "jobs2": vecgrade("grade", a, "--jobs", "2"), "jobs1": vecgrade("grade", a, "--jobs", "1"),
                    "one": vecgrade("grade", a, "-s", one)}
        runs = [r for r in args.runs if r != "none" and (not demo or r in ("plain", "jobs2"))]
        if args.base:
            runs = [x for r in runs for x in ([f"{r}@base", r] if r != "plain" else [r])]
        table = []
        for run in runs:
            where = args.dir / f"{label}-{run}"
            checkout = str(args.base.resolve()) if run.endswith("@base") else str(HERE.parent)
            seconds, output, load = timed_run(source, where, commands[run.split("@")[0]], plain=run == "plain",
                                              checkout=checkout)
            n = 1 if run.startswith("one") else len(students)
            table.append((run, seconds, n, graded(output, where, a, run == "plain"), load))
            print(f"{label:6s} {run:11s} {seconds:7.1f} s  {n:3d} notebook(s)  "
                  f"{table[-1][3]}  load {load[0]:.2f} -> {load[1]:.2f}", flush=True)
            if "graded" not in table[-1][3] and run != "plain":
                print(output[-3000:])
            if not args.keep:
                shutil.rmtree(where, ignore_errors=True)
        plain = next((s / n for r, s, n, *_ in table if r == "plain"), None)
        print(f"\n{label} class, {len(students)} distinct notebooks of {a}:")
        print(f"{'run':11s} {'seconds':>8s} {'s/notebook':>11s} {'vs plain':>9s}  graded            load before->after")
        for run, seconds, n, what, load in table:
            ratio = f"{plain * n / seconds:8.2f}x" if plain else "       -"
            print(f"{run:11s} {seconds:8.1f} {seconds / n:11.2f} {ratio}  {what:17s} {load[0]:.2f} -> {load[1]:.2f}")
        print(flush=True)
        if not demo:
            per_kind(args, source, students, label, commands)
        if args.breakdown and not demo:
            checkouts = [("", str(HERE.parent))] + ([("@base", str(args.base.resolve()))] if args.base else [])
            for (run, command), (tag, checkout) in [(r, c) for r in (("one", ["grade", a, "-s", one]),
                                                                     ("jobs2", ["grade", a, "--jobs", "2"]))
                                                    for c in checkouts[::-1]]:
                if run not in args.breakdown_runs:
                    continue
                log = args.dir / f"phases-{run}{tag}.jsonl"
                log.unlink(missing_ok=True)
                where = args.dir / f"{label}-phases-{run}"
                seconds, output, load = timed_run(source, where, vecgrade(*command, log=log), checkout=checkout)
                print(f"breakdown of `vecgrade {' '.join(command)}`{tag}: {seconds:.1f} s wall, "
                      f"{graded(output, where, a, False)}, load {load[0]:.2f} -> {load[1]:.2f}")
                subprocess.run([sys.executable, str(HERE / "phases.py"), "--summary", str(log), "--kinds"],
                               env=env())
                if not args.keep:
                    shutil.rmtree(where, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
