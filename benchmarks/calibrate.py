"""Per exercise, over several seeds: the reference's speedup, the half loop's and the list version's factors.

Runs ``validate`` for each seed (one grading run each) and prints one line per
exercise and seed, then the lowest reference speedup and the lowest factors
of the half loop and the Python-list version, next to the thresholds. Use it
to set ``speedup=`` (at most a third of the lowest speedup) and ``bench_size``
(the half loop and the list version should stay >= 5x the reference's time).
Figures are ratios measured in one run; they mean something only side by side.

    python benchmarks/calibrate.py [assignments...] [-e EXERCISE ...] [--seeds 0 1 2 3]
"""
from __future__ import annotations

import argparse
from collections import defaultdict

from graders import KIT_ROOT
from graders.course.validate import validate_assignment
from graders.model.exercise import load_course


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("-e", "--exercise", action="append")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    args = parser.parse_args()
    course = load_course(KIT_ROOT / "assignments")
    names = args.assignments or list(course)
    seen: dict[str, list] = defaultdict(list)
    thresholds = {}
    print(f"{'exercise':<26}{'seed':>5}{'ref. speedup':>14}{'half loop':>11}{'list':>8}  alternatives  problems")
    for seed in args.seeds:
        for name in names:
            for row in validate_assignment(course[name], seed=seed, only=args.exercise):
                ex = row.exercise
                thresholds[ex.name] = (ex.speedup, ex.ref_factor)
                half, lst = row.half_loop_factor, row.python_list_factor
                seen[ex.name].append((row.speedup, half, lst))
                alternatives = " ".join(_fmt(a["fast"].figures.get("ref_factor")) for a in row.alternatives)
                print(f"{ex.name:<26}{seed:>5}{_fmt(row.speedup):>14}{_fmt(half):>11}{_fmt(lst):>8}  "
                      f"{alternatives:<12}  {'; '.join(row.problems) or 'none'}", flush=True)
    print(f"\n{'exercise':<26}{'min speedup':>12}{'threshold':>10}{'min half':>10}{'min list':>10}{'ref_factor':>11}")
    for name, rows in seen.items():
        speedups = [r[0] for r in rows if r[0] is not None]
        halves = [r[1] for r in rows if r[1] is not None]
        lists = [r[2] for r in rows if r[2] is not None]
        speedup, factor = thresholds[name]
        print(f"{name:<26}{_fmt(min(speedups, default=None)):>12}{speedup:>9g}x{_fmt(min(halves, default=None)):>10}"
              f"{_fmt(min(lists, default=None)):>10}{factor:>10g}x")


if __name__ == "__main__":
    main()
