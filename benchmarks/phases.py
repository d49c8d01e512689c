"""Where the time of one ``vecgrade`` command goes: the command run with timers around its phases.

    python benchmarks/phases.py LOG [vecgrade's arguments ...]     # e.g. LOG grade broadcasting --jobs 2
    python benchmarks/phases.py --summary LOG [--kinds]

The first form runs the ``vecgrade`` command in this process (as the console script does) after wrapping, in the
coordinator and so in the grading processes it forks, the functions of each phase with a timer that appends one
JSON line per call to LOG: ``{"pid", "phase", "start", "end", "student", "exercise"}`` (``time.time()``, so the
lines of every process share one clock). The first line, ``process``, is the interpreter's start (read from
``/proc/self/stat``) to this module's first line; ``imports`` is what importing the command's modules took.
The wrappers only time: the grading is the one ``vecgrade grade`` does.

The phases: ``engine`` (Engine construction: the pool's processes start), ``preflight`` (Engine.preflight: a jail and
the notebook's kernel each run torch, in a pool process, whose fork server starts here), ``forkserver``
(ForkServer._start, per grading process), ``references`` (Engine.measure_references), ``prepare`` (nbgrader's
sanitize steps per student, coordinator), ``job`` (one notebook's expensive steps in a pool process), ``kernel``
(ResilientExecute.preprocess: the notebook's confined kernel), ``verdicts`` (TrustedVerdicts.preprocess), ``exercise``
(GradingRun._grade_exercise, one exercise in its own jail; inside it ``load``: WorkerSession.start, the program
loaded in the jail, and ``correct``, ``vectorized``, ``fast``: ExerciseChecks' parts), ``jail_start`` /
``jail_end`` (a template's start and close), ``record`` (nbgrader's autograde recording one student, coordinator).

``--summary`` prints, per phase, the count, the total and the mean seconds (``--kinds``: exercises and jobs by the
kind of answer, the student name's prefix before the first ``-``), and the coordinator's timeline.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import threading
import time

T0 = time.time()
LOG: str | None = None
_current = threading.local()


def _process_start() -> float:
    """When this process started (time.time() clock): /proc/self/stat's start time, in clock ticks since boot."""
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")


def note(phase: str, start: float, end: float, **extra) -> None:
    assert LOG is not None
    line = {"pid": os.getpid(), "phase": phase, "start": start, "end": end,
            "student": getattr(_current, "student", None), **extra}
    with open(LOG, "a") as f:
        f.write(json.dumps(line) + "\n")


def timer(owner, name: str, phase: str, extra=None) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        start = time.time()
        try:
            return original(*args, **kwargs)
        finally:
            note(phase, start, time.time(), **(extra(*args, **kwargs) if extra else {}))

    setattr(owner, name, wrapper)


def install() -> None:
    from graders.checks import parts, submission
    from graders.engine import coordinator, job
    from graders.engine.executors import local
    from graders.pipeline.execute import ResilientExecute
    from graders.pipeline.verdicts import TrustedVerdicts
    from graders.sandbox import session

    original_grade = job.grade

    def grade(request):
        _current.student = request.student
        start = time.time()
        try:
            return original_grade(request)
        finally:
            note("job", start, time.time())
            _current.student = None

    job.grade = grade  # grade_json, in a pool's processes, finds it here
    local.grade = grade  # type: ignore[attr-defined]  # this process's Serial imported it by name
    original_init = coordinator.Engine.__init__

    def engine_init(self, *args, **kwargs):
        start = time.time()
        original_init(self, *args, **kwargs)
        note("engine", start, time.time())

    coordinator.Engine.__init__ = engine_init  # type: ignore[method-assign]
    timer(coordinator.Engine, "preflight", "preflight")
    timer(coordinator.Engine, "measure_references", "references")
    timer(coordinator.Engine, "before_the_first", "preflight+references")  # the two at once
    timer(coordinator.Engine, "request_for", "prepare", lambda self, student: {"who": student})
    original_record = coordinator.autograde

    def record(api, assignment, student):
        start = time.time()
        try:
            return original_record(api, assignment, student)
        finally:
            note("record", start, time.time(), who=student)

    coordinator.autograde = record
    timer(session.ForkServer, "_start", "forkserver")
    timer(session.Template, "start", "jail_start")
    timer(session.Template, "close", "jail_end")
    timer(ResilientExecute, "preprocess", "kernel")
    timer(TrustedVerdicts, "preprocess", "verdicts")
    timer(submission.GradingRun, "_grade_exercise", "exercise", lambda self, ex, *a, **k: {"exercise": ex.name})
    timer(session.WorkerSession, "start", "load")
    for part in ("correct", "vectorized", "fast"):
        timer(parts.ExerciseChecks, part, part, lambda self: {"exercise": self.ex.name})


def summary(log: str, kinds: int) -> None:
    lines = [json.loads(x) for x in open(log)]
    first = min(x["start"] for x in lines)
    coordinator = lines[0]["pid"]
    rows: dict[str, list[float]] = {}
    for x in lines:
        key = x["phase"]
        if kinds and key in ("exercise", "job", "kernel", "verdicts", "correct", "vectorized", "fast", "load") \
                and x.get("student"):
            key += " " + x["student"].split("-")[0] + (f" {x['exercise']}" if "exercise" in x and kinds == 2 else "")
        rows.setdefault(key, []).append(x["end"] - x["start"])
    print(f"{'phase':40s} {'count':>5s} {'total s':>8s} {'mean s':>8s}")
    for key in sorted(rows):
        v = rows[key]
        print(f"{key:40s} {len(v):5d} {sum(v):8.2f} {sum(v) / len(v):8.3f}")
    print("coordinator timeline (s from the interpreter's start):")
    for x in lines:
        if x["pid"] == coordinator and x["phase"] not in ("prepare", "record"):
            print(f"  {x['phase']:12s} {x['start'] - first:7.2f} -> {x['end'] - first:7.2f}")
    recs = [x for x in lines if x["phase"] == "record"]
    if recs:
        print(f"  first record ends {min(x['end'] for x in recs) - first:.2f}, "
              f"last ends {max(x['end'] for x in recs) - first:.2f}")
    print(f"  last line ends {max(x['end'] for x in lines) - first:.2f} (then the interpreter's teardown)")


def main() -> None:
    global LOG
    if sys.argv[1] == "--summary":
        summary(sys.argv[2], 2 if "--exercises" in sys.argv else int("--kinds" in sys.argv))
        return
    LOG = sys.argv[1]
    note("process", _process_start(), T0)
    import atexit
    coordinator = os.getpid()
    # registered first, so it runs last of the exit handlers: from the command's end to here is their time

    def last() -> None:
        if os.getpid() == coordinator:
            note("atexit", T0, time.time())

    atexit.register(last)
    start = time.time()
    from graders import entry
    entry.lighter_imports()  # as the console script does
    from graders.cli import app
    install()
    note("imports", start, time.time())
    sys.argv = ["vecgrade", *sys.argv[2:]]
    try:
        app()
    except SystemExit as exc:
        note("command", T0, time.time())
        entry.end(exc.code)  # as the console script ends
        raise


if __name__ == "__main__":
    main()
