"""Is "fast" calibrated both ways under load? Each answer's ratio to the reference in process, against the grader's.

Issue 40, item 2. The answers are tests/fast_calibration_set.py's (``--scope default``: 56 answers over the six
assignments, one of reference / alternative / half loop / loop version per exercise, one calibration control per
exercise, and broadcasting's novice loops; ``--scope all``: every kind on every exercise). For each ``--load`` level
N (default 0 and 4), N busy processes (``while True: pass``, as benchmarks/stability.py starts them) run beside
both measurements, and for each answer:

First each control (tests/fast_calibration_set.py) is tuned in process, with no busy process beside it: the copies
it makes of its result are set so that it lands at about its target times the bar (``tune``); the same tuned set is
then measured at every level.

(a) **in process**: the answer (its cell executed after the assignment's preamble in this process) and the
    reference (the definitions' function), one thread, on the same inputs, drawn as graders.checks.timing draws
    them (``timing.inputs``: the benchmark size, a new shape of equal work for a shape-only exercise), k of them
    per request with k grown as ``timing.calibrate`` grows it (the reference's request at least ``timing.TARGET``
    CPU seconds; ``INPUT_SETS`` such requests drawn per answer, its pairs taking them in turn). Requests
    alternate (reference, answer; the order swapped every pair), each timed on this process's CPU clock
    (``time.process_time``), ``--pairs`` pairs (an answer whose first pair reads over ``SLOW`` times its bar: 3
    pairs, on as few calls as keep its request near ``LOOP_REQUEST`` s). The ratio is the **median of the per-pair
    ratios** (answer's seconds per call over the reference's, within one pair); min/min is printed beside it.
(b) **through the grader**: each assignment's answers, one program per slot (one answer per exercise), graded by
    graders.checks.submission.grade_submission in a fresh GradingRun per assignment and level (what grading a
    notebook runs: "correct", then "vectorized" and "fast", the reference measured by the run). The ratio is the
    "fast" verdict's estimate: ``figures["estimate"]`` (the sequential rule's) or, before it,
    ``figures["ref_factor"]``; its rounds ``figures["rounds"]`` or ``figures["repetitions"]``. An answer stopped
    early as far too slow carries no ratio ("-").

Per answer it prints: assignment, exercise, kind, the bar (``ref_factor``), in-process ratio / bar (median; min/min),
grader ratio / bar, the rounds, the verdict ("pass", "FAIL", "not graded"; "close" where the figures say so).
Per level, the summary item 2 asks for: answers whose in-process ratio is at least ``HIGH`` (1.3) times the bar
that passed, those at most ``LOW`` (0.77) times it that failed, and the median gap |grader / in-process - 1| over
answers with both ratios. The in-process ratios are measured at the first level (``--in-process first``, the
default: no busy process beside them with the default levels) and taken as each answer's own cost at every level;
``--in-process each`` measures them again at each level, beside its busy processes (the ratio of alternating
pairs on the CPU clock moves little with load, and measuring it again under load 4 costs minutes). The exit status
is 0 (it reports; the lead reads).

    python benchmarks/fast_calibration.py [--load 0 4] [--scope default|all] [--pairs 9] [--seed 0]
                                          [--in-process first|each] [--assignments broadcasting ...]

On two quiet cores, ``--scope default`` at both levels takes about 8-10 minutes.
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from graders import KIT_ROOT
from graders.checks import timing
from graders.checks.submission import GradingRun, grade_submission
from graders.checks.vocabulary import Verdict, clone_args
from graders.model.exercise import Assignment, Exercise, load_course

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from fast_calibration_set import Answer, answers, tuned  # noqa: E402  (the calibration set, one module for tests too)

BUSY = "while True: pass"
HIGH, LOW = 1.3, 0.77  # item 2: none at or over HIGH times the bar passes, none at or under LOW times it fails
SLOW = 5.0  # an answer whose first pair reads this many times its bar is timed on 3 pairs only
INPUT_SETS = 3  # requests of inputs drawn per answer in process, taken in turn by its pairs
LOOP_REQUEST = 0.1  # CPU seconds an answer's request is cut to (fewer calls), for answers far slower than the bar


@dataclass
class Row:
    answer: Answer
    bar: float
    median: float  # in process: the median of per-pair ratios
    minmin: float  # in process: the answer's best over the reference's best
    pairs: int
    verdict: Verdict | None = None

    @property
    def grader(self) -> float | None:
        """The grader's ratio to the reference: the sequential rule's estimate, or today's ref_factor."""
        if self.verdict is None:
            return None
        figures = self.verdict.figures
        value = figures.get("estimate", figures.get("ref_factor"))
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def rounds(self) -> str:
        figures = self.verdict.figures if self.verdict is not None else {}
        value = figures.get("rounds", figures.get("repetitions"))
        return "-" if value is None else str(value)

    @property
    def outcome(self) -> str:
        v = self.verdict
        if v is None:
            return "-"
        word = "pass" if v.passed else ("FAIL" if v.graded else "not graded")
        return word + (" (close)" if v.figures.get("close") else "")


def compiled(assignment: Assignment, ex: Exercise, source: str):
    """The answer's function, its cell executed after the assignment's preamble in a namespace of its own."""
    namespace: dict = {}
    exec(compile(assignment.preamble + "\n\n" + source, f"<{ex.name} answer>", "exec"), namespace)
    return namespace[ex.name]


def _request(fn, calls: list, fresh: bool) -> float:
    """CPU seconds per call of ``fn`` over ``calls`` (copies made before the clock starts when ``fresh``: an
    exercise that works in place must not see its own output as the next input)."""
    if fresh:
        calls = [clone_args(args) for args in calls]
    start = time.process_time()
    for args in calls:
        fn(*args)
    return (time.process_time() - start) / len(calls)


def calls_per_request(ex: Exercise, gen: torch.Generator) -> int:
    """k as timing.calibrate grows it: until the reference's request takes timing.TARGET CPU seconds."""
    k = 1
    while True:
        calls = [timing.inputs(ex, gen) for _ in range(k)]
        one = min(_request(ex.reference, calls, ex.in_place) for _ in range(2))
        if one * k >= timing.TARGET or k >= timing.MAX_K:
            return k
        k = min(timing.MAX_K, k * max(2, math.ceil(timing.TARGET / max(one * k, 1e-7))))


def in_process(assignment: Assignment, ex: Exercise, answer: Answer, k: int, pairs: int,
               gen: torch.Generator) -> tuple[float, float, int]:
    """(median of per-pair ratios, min/min, pairs timed) of ``answer`` against the reference."""
    fn = compiled(assignment, ex, answer.source)
    warm = [timing.inputs(ex, gen)]
    _request(ex.reference, warm, ex.in_place)
    start = time.process_time()
    _request(fn, warm, ex.in_place)  # warm-up, and a first guess of its cost per call
    guess = time.process_time() - start
    answer_k = max(1, min(k, int(LOOP_REQUEST / max(guess, 1e-9))))
    ratios, ref_best, ans_best = [], math.inf, math.inf
    n = pairs
    drawn: list[list] = []  # INPUT_SETS requests of inputs, drawn once and taken in turn (drawing costs more than
    for p in range(n):      # timing the reference does)
        if len(drawn) < INPUT_SETS:
            drawn.append([timing.inputs(ex, gen) for _ in range(k)])
        calls = drawn[p % INPUT_SETS]
        order = [(ex.reference, calls), (fn, calls[:answer_k])]
        times = {}
        for f, chosen in (order if p % 2 == 0 else order[::-1]):
            times[f is fn] = _request(f, chosen, ex.in_place)
        ref_best, ans_best = min(ref_best, times[False]), min(ans_best, times[True])
        ratios.append(times[True] / max(times[False], 1e-12))
        if p == 0 and ratios[0] > SLOW * ex.ref_factor:
            n = min(n, 3)
        if p + 1 >= n:
            break
    return statistics.median(ratios), ans_best / max(ref_best, 1e-12), len(ratios)


PROBE_CLONES = 20  # copies in the control that measures what one copy costs
MAX_CLONES, CORRECTIONS = 2000, 3  # at most this many copies; the tuned control measured and corrected this often


def _median_of(fn, calls: list, fresh: bool) -> float:
    """The median of 5 requests of ``fn`` over ``calls``, after one call to warm it."""
    _request(fn, calls[:1], fresh)
    return statistics.median(_request(fn, calls, fresh) for _ in range(5))


def tune(course: dict[str, Assignment], chosen: list[Answer], seed: int) -> list[Answer]:
    """Each control with the copies that land it at about its target times the bar, measured in process (before
    any busy process starts; the same set is then graded at every level): the reference's, the control's without
    copies and with ``PROBE_CLONES`` of them, each the median of 5 requests of k calls; then the tuned control is
    measured and its copies corrected in proportion, up to ``CORRECTIONS`` times, while it is more than 10% off (one
    noisy difference once gave a copy almost no cost, and 5000 copies)."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed + 1)
    out = []
    for a in chosen:
        if a.target is None:
            out.append(a)
            continue
        assignment = course[a.assignment]
        ex = next(e for e in assignment.exercises if e.name == a.exercise)
        k = calls_per_request(ex, gen)
        calls = [timing.inputs(ex, gen) for _ in range(k)]
        try:
            ref = _median_of(ex.reference, calls, ex.in_place)
            bare = _median_of(compiled(assignment, ex, a.source), calls, ex.in_place)
            probe = compiled(assignment, ex, tuned(a, ex, PROBE_CLONES).source)
            per_copy = max(1e-9, (_median_of(probe, calls, ex.in_place) - bare) / PROBE_CLONES)
        except Exception as exc:  # a control whose copies cannot run (no tensor to copy): left as it is
            print(f"  {a.exercise} {a.kind}: not tuned ({type(exc).__name__}: {exc})")
            out.append(a)
            continue
        goal = a.target * ex.ref_factor * ref
        clones = max(0, min(MAX_CLONES, round((goal - bare) / max(per_copy, ref / 200))))
        for _ in range(CORRECTIONS):  # measured, and corrected in proportion while it is off by over 10%
            if not clones:
                break
            now = _median_of(compiled(assignment, ex, tuned(a, ex, clones).source), calls, ex.in_place)
            if abs(now / goal - 1) <= 0.1:
                break
            scale = (goal - bare) / (now - bare) if now > bare else 2.0
            clones = max(0, min(MAX_CLONES, round(clones * scale)))
        out.append(tuned(a, ex, clones) if clones else a)
    return out


def graded(assignment: Assignment, chosen: list[Answer], seed: int) -> dict[tuple[str, int], Verdict]:
    """The "fast" verdict of each answer, one program per slot, in one grading run of ``assignment``."""
    out = {}
    with GradingRun(seed) as run:
        for slot in sorted({a.slot for a in chosen}):
            mine = [a for a in chosen if a.slot == slot]
            program = [("preamble", assignment.preamble)] + [(f"your `{a.exercise}` cell", a.source) for a in mine]
            verdicts = grade_submission(assignment, program, only=[a.exercise for a in mine], run=run)
            for a in mine:
                out[(a.exercise, slot)] = verdicts[a.exercise]["fast"]
    return out


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def in_process_rows(course: dict[str, Assignment], chosen: list[Answer], pairs: int, seed: int) -> list[Row]:
    """Every answer measured in process (its ``Row`` without a verdict yet)."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed)
    ks: dict[tuple[str, str], int] = {}
    rows = []
    for a in chosen:
        assignment = course[a.assignment]
        ex = next(e for e in assignment.exercises if e.name == a.exercise)
        if (a.assignment, ex.name) not in ks:
            ks[(a.assignment, ex.name)] = calls_per_request(ex, gen)
        median, minmin, n = in_process(assignment, ex, a, ks[(a.assignment, ex.name)], pairs, gen)
        rows.append(Row(a, ex.ref_factor, median, minmin, n))
    return rows


def level(course: dict[str, Assignment], chosen: list[Answer], load: int, pairs: int, seed: int,
          measured: list[Row] | None = None) -> list[Row]:
    """Both measurements of every answer, with ``load`` busy processes beside them; ``measured``: the in-process
    rows of an earlier level, taken as they are rather than measured again."""
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(load)]
    try:
        start = time.perf_counter()
        if measured is None:
            rows = in_process_rows(course, chosen, pairs, seed)
            print(f"load {load}: in process, {len(rows)} answers in {time.perf_counter() - start:.0f} s", flush=True)
        else:
            rows = [replace(r, verdict=None) for r in measured]
            print(f"load {load}: in process, the first level's ratios (--in-process first)", flush=True)
        start = time.perf_counter()
        for name in dict.fromkeys(a.assignment for a in chosen):
            verdicts = graded(course[name], [a for a in chosen if a.assignment == name], seed)
            for row in rows:
                if row.answer.assignment == name:
                    row.verdict = verdicts[(row.answer.exercise, row.answer.slot)]
            print(f"load {load}: {name} graded ({time.perf_counter() - start:.0f} s)", flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    return rows


def report(rows: list[Row], load: int) -> None:
    print(f"\nload {load}: {'assignment':13s} {'exercise':24s} {'kind':14s} {'bar':>4s} {'in-proc/bar':>11s} "
          f"{'(min/min)':>9s} {'grader/bar':>10s} {'rounds':>6s}  verdict")
    for r in rows:
        g = r.grader
        print(f"load {load}: {r.answer.assignment:13s} {r.answer.exercise:24s} {r.answer.kind:14s} {r.bar:4g} "
              f"{r.median / r.bar:11.2f} {r.minmin / r.bar:9.2f} {_x(g / r.bar if g else None):>10s} "
              f"{r.rounds:>6s}  {r.outcome}")
    decided = [r for r in rows if r.verdict is not None and r.verdict.graded]
    high = [r for r in decided if r.median >= HIGH * r.bar and r.verdict is not None and r.verdict.passed]
    low = [r for r in decided if r.median <= LOW * r.bar and r.verdict is not None and not r.verdict.passed]
    gaps = [abs(r.grader / r.median - 1) for r in rows if r.grader]
    undecided = len(rows) - len(decided)
    print(f"\nload {load} summary over {len(rows)} answers ({undecided} not graded):")
    print(f"  in process >= {HIGH}x the bar and passed: {len(high)} "
          + ", ".join(f"{r.answer.exercise} {r.answer.kind} ({r.median / r.bar:.2f}x)" for r in high))
    print(f"  in process <= {LOW}x the bar and failed: {len(low)} "
          + ", ".join(f"{r.answer.exercise} {r.answer.kind} ({r.median / r.bar:.2f}x: {r.verdict.message[:60]})"
                      for r in low if r.verdict is not None))
    if gaps:
        print(f"  median gap |grader / in process - 1|: {statistics.median(gaps):.1%} over {len(gaps)} answers "
              f"with both ratios (max {max(gaps):.1%})")
    print(flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, nargs="+", default=[0, 4], help="busy processes beside both measurements")
    parser.add_argument("--scope", choices=["default", "all"], default="default")
    parser.add_argument("--pairs", type=int, default=9, help="alternating pairs per answer in process")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--in-process", choices=["first", "each"], default="first",
                        help="measure the in-process ratios at the first level only (the answers' own cost, taken "
                        "as the truth at every level) or again at each level, beside its busy processes")
    parser.add_argument("--assignments", nargs="+", help="only these assignments (default: all six)")
    args = parser.parse_args()
    # a SIGTERM (``timeout``) ends it through SystemExit, so that ``level`` stops its busy processes
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.pairs < 1:
        raise SystemExit("error: --pairs must be at least 1")
    course = load_course(KIT_ROOT / "assignments")
    unknown = sorted(set(args.assignments or ()) - set(course))
    if unknown:
        raise SystemExit(f"error: no assignment {', '.join(unknown)}; choose from {', '.join(course)}")
    chosen = [a for a in answers(course, args.scope) if not args.assignments or a.assignment in args.assignments]
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}; {len(chosen)} answers", flush=True)
    start = time.perf_counter()
    chosen = tune(course, chosen, args.seed)
    print(f"controls tuned in {time.perf_counter() - start:.0f} s: " + ", ".join(
        f"{a.exercise} {a.kind} +{a.clones} copies" for a in chosen if a.target is not None), flush=True)
    first: list[Row] | None = None
    for load in args.load:
        start = time.perf_counter()
        rows = level(course, chosen, load, args.pairs, args.seed, first if args.in_process == "first" else None)
        first = first or rows
        report(rows, load)
        print(f"load {load}: {time.perf_counter() - start:.0f} s in all; load average now "
              f"{os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
