"""Per exercise, over several seeds: the reference's speedup, the half loops' and the list version's factors.

Runs ``validate`` for each seed (one grading run each) and prints one line per
exercise and seed, then the lowest reference speedup and, as the min over seeds,
the factor of each half loop (one per growing axis, in the order of ``half_loops``),
of the Python-list version and of each alternative, next to the thresholds. Use it
to set ``speedup=`` (a third of the lowest speedup, rounded down) and ``bench_size``/``sized``
(``validate``'s rule: every half loop and the list version fail "fast", i.e. take more than
``ref_factor`` times the reference's time or fall below ``speedup=``; every alternative at no more
than half of ``ref_factor``). Then the regression answers of ``regressions.py`` on the same exercises and
seeds: each must keep its verdict (pass all three parts, or lose one) on every seed, else the exit status is 1.
Figures are ratios measured in one run; they mean something only side by side.

    python benchmarks/calibrate.py [assignments...] [-e EXERCISE ...] [--seeds 0 1 2 3] [--regressions-only]
"""
from __future__ import annotations

import argparse
import sys
from collections import defaultdict

from regressions import check

from graders import KIT_ROOT
from graders.course.validate import validate_assignment
from graders.model.exercise import load_course


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def _mins(rows: list[list[float | None]]) -> str:
    """Position by position, the lowest figure over the seeds ("-" where none was measured)."""
    columns = zip(*rows, strict=True) if rows else ()
    return " ".join(_fmt(min((x for x in col if x is not None), default=None)) for col in columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("-e", "--exercise", action="append")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--regressions-only", action="store_true", help="only the regression answers")
    args = parser.parse_args()
    course = load_course(KIT_ROOT / "assignments")
    names = args.assignments or list(course)
    seen: dict[str, list] = defaultdict(list)
    thresholds = {}
    print(f"{'exercise':<26}{'seed':>5}{'ref. speedup':>14}{'half loops':>22}{'list':>8}  alternatives  problems")
    for seed in [] if args.regressions_only else args.seeds:
        for name in names:
            for row in validate_assignment(course[name], seed=seed, only=args.exercise):
                ex = row.exercise
                thresholds[ex.name] = (ex.speedup, ex.ref_factor)
                halves, lst = row.half_loop_factors, row.python_list_factor
                alternatives = [a["fast"].figures.get("ref_factor") for a in row.alternatives]
                seen[ex.name].append((row.speedup, halves, lst, alternatives))
                print(f"{ex.name:<26}{seed:>5}{_fmt(row.speedup):>14}{' '.join(map(_fmt, halves)):>22}"
                      f"{_fmt(lst):>8}  {' '.join(map(_fmt, alternatives)):<12}  "
                      f"{'; '.join(row.problems) or 'none'}", flush=True)
    print(f"\n{'exercise':<26}{'min speedup':>12}{'threshold':>10}{'min half loops':>22}{'min list':>10}"
          f"{'ref_factor':>11}  min alternatives")
    for name, rows in seen.items():
        speedups = [r[0] for r in rows if r[0] is not None]
        lists = [r[2] for r in rows if r[2] is not None]
        speedup, factor = thresholds[name]
        print(f"{name:<26}{_fmt(min(speedups, default=None)):>12}{speedup:>9g}x{_mins([r[1] for r in rows]):>22}"
              f"{_fmt(min(lists, default=None)):>10}{factor:>10g}x  {_mins([r[3] for r in rows])}")
    broken = 0
    print(f"\n{'regression':<26}{'seed':>5}{'expected':>10}{'failed':>12}{'factor':>8}  holds  about")
    for seed in args.seeds:
        for name in names:
            for o in check(course[name], args.exercise, seed):
                broken += not o.holds
                print(f"{o.regression.exercise:<26}{seed:>5}{'pass' if o.regression.passes else 'fail':>10}"
                      f"{o.failed or '-':>12}{_fmt(o.factor):>8}  {'yes' if o.holds else 'NO':<5}  "
                      f"{o.regression.about}", flush=True)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
