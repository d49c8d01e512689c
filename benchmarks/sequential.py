"""The noise of "fast"'s rounds on this machine, and the sequential rule's error rates from it.

    python benchmarks/sequential.py [--load 0 4] [--sequences 12] [--rounds 8] [--sandbox]

For each ``--load`` level N, N busy processes (``python -c 'while True: pass'``) run beside it while, for each
exercise of the assignment, ``--sequences`` sequences of ``--rounds`` rounds time the reference's program *as an
answer* exactly as graders.checks.fast does: a fresh child for the answer and one for the reference, both after
the same warm-up (one call, the probe, a request of k calls), then per round one request of k calls each, on the
same inputs. Round 0 is held against the run's shared reference time (the best of three, or the calibration's
when faster), the later rounds against the fresh reference child, as in "fast".

Printed per level: the standard deviation of one round's log ratio (the floor ``NOISE`` of
graders.checks.sequential must be at least it), the largest single round's ratio (``STALL`` must cover it), the
probe's CPU time per call over the reference's (``PROBE_FAR`` of graders.checks.fast must be above it for
identical code), and the rule's error rates, replayed on the measured sequences
(graders.checks.sequential.decide, as "fast" calls it):

- identical code (1.0x) against a bar of 1.3x: the share that fails, and the mean rounds taken;
- the same times multiplied by 1.3 (an answer at 1.3x a bar of 1.0x, with identical code's noise): the share
  that passes, and the mean rounds taken.

``--notebooks`` instead measures what the rule buys a teacher: a course with two notebooks of the assignment, one
of novice loops (``NOVICE``: the loop versions, element by element, and a row loop for ``softmax_rows``) and one of
the reference's answers, graded with ``vecgrade grade ASSIGNMENT --jobs 1`` under benchmarks/phases.py, with this
checkout and (``--base DIR``, e.g. ``git archive main | tar -x -C DIR``) the checkout before the change, in turn,
``--repeat`` times; printed per checkout and notebook: the seconds of "fast", "correct" and all the verdicts,
without what is measured once per grading process (``once``: the calibration of each exercise, the loop version's
time and k, and the reference's shared time, paid by the first notebook that needs them), printed on its own.

    python benchmarks/sequential.py --notebooks [--base DIR] [--repeat 2]

``--save FILE`` keeps the measured sequences (JSON, per level); ``--replay FILE`` prints the figures again from
them, with the rule as it is now (after a change of its constants), measuring nothing.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from graders.checks.fast import FIRST, PROBE, repetition, warm_up_requests
from graders.checks.sequential import NOISE, Round, decide
from graders.checks.submission import GradingRun
from graders.checks.timing import timed
from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.personas import Persona
from graders.sandbox.policy import Sandbox
from graders.sandbox.session import Template, WorkerSession

BUSY = "while True: pass"
HERE = Path(__file__).resolve().parent
ROW_LOOP = ("def softmax_rows(x):\n    out = torch.empty_like(x)\n    for i in range(x.shape[0]):\n"
            "        e = (x[i] - x[i].max()).exp()\n        out[i] = e / e.sum()\n    return out\n")


def novice(ex) -> str:
    """A novice's loop: the exercise's loop version renamed (element by element), a row loop for softmax_rows."""
    if ex.name == "softmax_rows":
        return ROW_LOOP
    return re.sub(rf"\bdef {ex.loop_name}\(", f"def {ex.name}(", ex.loop_source())


# benchmarks/phases.py with two more timers: the run's calibration of an exercise (the loop version's time, k) and
# the reference's shared time, each measured once per grading process, inside "fast", by the first notebook that
# needs it, whatever its answers (a loop decided on its probe needs no shared time): reported on their own
PHASES = f"""import sys
sys.path.insert(0, {str(HERE)!r})
import phases
_install = phases.install
def install():
    _install()
    from graders.checks import reference
    phases.timer(reference.Reference, "calibration", "calibration")
    phases.timer(reference.Reference, "shared_time", "shared")
phases.install = install
phases.main()
"""


def notebooks(directory: Path, assignment: str, checkouts: list[tuple[str, str]], repeat: int) -> None:
    """Grade a novice-loop notebook and a reference notebook under benchmarks/phases.py with each checkout."""
    course = make_course(directory / "course")
    write_source(course.root, course.assignments[assignment])
    with course.api() as api:
        assert api.generate_assignment(assignment)["success"]
    people = [Persona("loop-0", "novice loops", novice, lambda name: (0.0, 0.0, 0.0)),
              Persona("reference-0", "the reference", lambda ex: ex.reference_source(), lambda name: (0.0, 0.0, 0.0))]
    submit_class(course, assignment, people)
    print(f"{'checkout':10s} {'notebook':12s} {'fast s':>7s} {'correct s':>10s} {'verdicts s':>11s} "
          f"{'once s':>8s}  load")
    for attempt in range(repeat):
        for tag, checkout in checkouts:
            where, log = directory / f"grade-{tag}", directory / f"phases-{tag}-{attempt}.jsonl"
            shutil.rmtree(where, ignore_errors=True)
            shutil.copytree(course.root, where, symlinks=True)
            log.unlink(missing_ok=True)
            env = {**os.environ, "PYTHONPATH": checkout}
            load = os.getloadavg()[0]
            subprocess.run([sys.executable, "-c", PHASES, str(log), "grade", assignment, "--jobs", "1"],
                           cwd=where, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            lines = [json.loads(x) for x in open(log)]
            for student in ("loop-0", "reference-0"):
                total = {phase: sum(x["end"] - x["start"] for x in lines
                                    if x["phase"] == phase and x.get("student") == student)
                         for phase in ("fast", "correct", "verdicts", "calibration", "shared")}
                c = total["calibration"] + total["shared"]
                print(f"{tag:10s} {student:12s} {total['fast'] - c:7.2f} {total['correct']:10.2f} "
                      f"{total['verdicts'] - c:11.2f} {c:8.2f}  {load:.2f}", flush=True)


def sequences(assignment, n: int, rounds: int, sandbox) -> list[dict]:
    """``n`` sequences per exercise: the probe's ratio, and ``rounds`` (answer, reference) pairs (round 0's
    reference: the run's shared time)."""
    out = []
    with GradingRun() as run:
        reference = run.reference(assignment, sandbox)
        template = Template(run.limits, sandbox, run.server)
        template.start()
        try:
            for i in range(n * len(assignment.exercises)):
                ex = assignment.exercises[i % len(assignment.exercises)]
                calibration = reference.calibration(ex)
                k, one = calibration.k, calibration.one
                warm = warm_up_requests(run, ex, k)
                cells = [("preamble", assignment.preamble), (f"your `{ex.name}` cell", ex.reference_source())]
                pairs = []
                with WorkerSession(cells, template=template) as student:
                    timed(student, warm[0], 600)
                    probe = timed(student, warm[1], 600)[0]
                    timed(student, warm[2], 600)
                    first = run.bench_inputs(ex, FIRST, k)
                    pairs.append((timed(student, first, 600)[0],
                                  min(reference.shared_time(ex, FIRST, first, warm), one)))
                    with reference.warmed(ex, warm) as fresh:
                        for r in range(1, rounds):
                            staged = run.bench_inputs(ex, repetition(r), k)
                            pairs.append((timed(student, staged, 600)[0], timed(fresh, staged, 600)[0]))
                out.append({"exercise": ex.name, "probe": probe / one, "pairs": pairs,
                            "probe_calls": max(1, k // PROBE), "one": one})
        finally:
            template.__exit__()
    return out


def replay(pairs: list[tuple[float, float]], bar: float, scale: float, cap: int):
    """The rule's decision on the measured pairs, the answer's times multiplied by ``scale``."""
    rounds = []
    for a, r in pairs[:cap]:
        rounds.append(Round(a * scale, r))
        decision = decide(rounds, bar, cap=cap)
        if decision.decided:
            return decision
    raise AssertionError("decided at the cap")


def report(level: int, found: list[dict], cap: int) -> None:
    logs = [math.log(a / r) for s in found for a, r in s["pairs"][1:]]
    firsts = [math.log(a / r) for s in found for a, r in s["pairs"][:1]]
    print(f"load {level}: {len(found)} sequences; one round of identical code against a fresh reference: "
          f"log ratio mean {statistics.mean(logs):+.3f}, sd {statistics.stdev(logs):.3f} (NOISE = {NOISE}), "
          f"ratio min {math.exp(min(logs)):.2f}x, max {math.exp(max(logs)):.2f}x; round 0 against the shared "
          f"reference: median {math.exp(statistics.median(firsts)):.2f}x, max {math.exp(max(firsts)):.2f}x; "
          f"probe per call over the reference's: median {statistics.median(s['probe'] for s in found):.2f}x, "
          f"max {max(s['probe'] for s in found):.2f}x", flush=True)
    for label, bar, scale, bad in (("identical code (1.0x) against a bar of 1.3x", 1.3, 1.0, False),
                                   ("an answer at 1.3x a bar of 1.0x", 1.0, 1.3, True)):
        decisions = [replay(s["pairs"], bar, scale, cap) for s in found]
        wrong = sum(d.passed == bad for d in decisions)
        close = sum(d.close for d in decisions)
        print(f"load {level}: {label}: {wrong} of {len(decisions)} decided wrongly "
              f"({'passed' if bad else 'failed'}), {close} close, mean rounds "
              f"{statistics.mean(d.rounds for d in decisions):.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-sequential"))
    parser.add_argument("--assignment", default="broadcasting")
    parser.add_argument("--load", type=int, nargs="+", default=[0, 4], help="busy processes beside it")
    parser.add_argument("--sequences", type=int, default=12, help="sequences per exercise and level")
    parser.add_argument("--rounds", type=int, default=8, help="rounds per sequence (the rule's cap)")
    parser.add_argument("--sandbox", action="store_true", help="in jails, as a course grades")
    parser.add_argument("--save", type=Path, help="keep the measured sequences here (JSON)")
    parser.add_argument("--replay", type=Path, help="report from sequences --save kept, measuring nothing")
    parser.add_argument("--notebooks", action="store_true", help="time two notebooks' verdicts (see above)")
    parser.add_argument("--base", type=Path, help="with --notebooks: the checkout before the change")
    parser.add_argument("--repeat", type=int, default=2, help="with --notebooks: gradings per checkout")
    args = parser.parse_args()
    if args.notebooks:
        if args.base is not None and not (args.base / "graders").is_dir():
            raise SystemExit(f"error: --base {args.base} holds no graders/ package")
        checkouts = ([("base", str(args.base.resolve()))] if args.base else []) + [("this", str(HERE.parent))]
        notebooks(args.dir, args.assignment, checkouts, args.repeat)
        return
    if args.sequences < 1 or args.rounds < 2:
        raise SystemExit("error: --sequences must be at least 1 and --rounds at least 2")
    if args.replay is not None:
        for level, found in json.loads(args.replay.read_text()).items():
            report(int(level), found, args.rounds)
        return
    course = make_course(args.dir)
    assignment = course.assignments[args.assignment]
    sandbox = Sandbox(course_root=str(course.root)) if args.sandbox else None
    kept = {}
    for level in args.load:
        load = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(level)]
        try:
            found = sequences(assignment, args.sequences, args.rounds, sandbox)
        finally:
            for p in load:
                p.kill()
                p.wait()
        report(level, found, args.rounds)
        kept[level] = found
        if args.save is not None:
            args.save.write_text(json.dumps(kept))


if __name__ == "__main__":
    main()
