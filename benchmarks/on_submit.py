"""Verdicts on submit: seconds from ``nbgrader submit`` returning to the feedback being released, and a rush.

A fresh course (one user: the service runs with ``Serve.check_owner = False``
and ``min_interval = 0``, and every submission is ``nbgrader submit --student
<id>`` under a new id), ``vecgrade serve`` started and warm. Every submission
is ada's honest four-exercise notebook made a distinct program (each answer
gains a line ``_unique = <n>``, as in throughput.py), so the service's cache
of programs already graded never answers for one. Then:

1. latency: ``--latency N`` submissions, one at a time (each waits for its
   feedback), timed from ``nbgrader submit`` returning to its feedback page
   appearing in the exchange; p50 and p95;
2. rush: ``--rush N`` submissions spread evenly over ``--within`` seconds (a
   deadline rush), and the time until the last one's feedback is released;
   its throughput and the latencies inside the rush.

The goals on a 2-core machine: p95 within 10 s; 30 submissions within 2 minutes
all served within 3 minutes. The submitting clients run on the same machine
and share its cores with the service, as students on a course server do.
``--load N`` runs N busy processes (``python -c "while True: pass"``) beside the
service from its start to the end, as other users of a shared course server
would, and each result line gives the load average it was measured under.

    python benchmarks/on_submit.py [--latency 20] [--rush 30] [--within 120] [--jobs 2] [--load 0]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import nbformat
from nbgrader.utils import notebook_hash
from throughput import make_distinct  # benchmarks/ is the script's folder, first on sys.path

from graders import KIT_ROOT
from graders.course.build import write_source
from graders.course.demo import make_course
from graders.course.personas import load_roster

A = "broadcasting"
BIN = Path(sys.executable).parent


def course_with_exchange(directory: Path):
    course = make_course(directory)
    with open(course.root / "nbgrader_config.py", "a") as f:
        f.write("\nc.Serve.check_owner = False  # one user submits for everyone here\nc.Serve.min_interval = 0\n")
    write_source(course.root, course.assignments[A])
    with course.api() as api:
        assert api.generate_assignment(A)["success"] and api.release_assignment(A)["success"]
    return course


def student_folder(course, directory: Path) -> Path:
    """A student's folder: nbgrader's config pointing at the course's exchange, the assignment fetched and
    answered (ada's vectorized answers: an honest notebook)."""
    directory.mkdir(parents=True)
    (directory / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.Exchange.root = {str(course.root / 'exchange')!r}\n"
        "c.CourseDirectory.course_id = 'vecgrade'\n")
    subprocess.run([BIN / "nbgrader", "fetch_assignment", A], cwd=directory, check=True, capture_output=True)
    path = directory / A / f"{A}.ipynb"
    ada = next(p for p in load_roster(KIT_ROOT, course.assignments[A]) if p.student == "ada")
    nbformat.write(ada.notebook(nbformat.read(path, as_version=4), course.assignments[A]), path)
    return directory


def own_copy(folder: Path, course, number: int) -> Path:
    """A copy of the student's folder whose every answer is a distinct program (``make_distinct``), so that
    no submission's verdicts come from the service's cache of programs already graded."""
    copy = folder.with_name(f"{folder.name}-{number:03d}")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    make_distinct(copy / A / f"{A}.ipynb", course.assignments[A], number)
    return copy


def submit(folder: Path, student: str) -> float:
    subprocess.run([BIN / "nbgrader", "submit", A, "--student", student], cwd=folder, check=True,
                   capture_output=True)
    return time.time()


def released_at(course, student: str, timeout: float = 600) -> float:
    """When the student's feedback page (the verdicts, not a one-line page) appeared in the exchange."""
    inbound = course.root / "exchange" / "vecgrade" / "inbound"
    deadline = time.time() + timeout
    page = None
    while time.time() < deadline:
        if page is None:
            found = [p for p in inbound.glob(f"{student}+{A}+*") if (p / "submission_secret.txt").exists()]
            if found:
                secret = (found[0] / "submission_secret.txt").read_text()
                page = course.root / "exchange" / "vecgrade" / "feedback" / \
                    f"{notebook_hash(secret=secret, notebook_id=A)}.html"
        if page is not None and page.exists() and "Graded on submit" in page.read_text():
            return page.stat().st_mtime
        time.sleep(0.05)
    raise TimeoutError(f"no feedback for {student} after {timeout} s")


@contextmanager
def busy(n: int) -> Iterator[None]:
    """``n`` processes that spin on a core each, killed (and waited for) when the block ends, however it ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min)"


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vecgrade-on-submit"))
    parser.add_argument("--latency", type=int, default=20, help="submissions timed one at a time")
    parser.add_argument("--rush", type=int, default=30, help="submissions in the deadline rush")
    parser.add_argument("--within", type=float, default=120.0, help="seconds the rush is spread over")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the service")
    args = parser.parse_args()
    if args.load < 0 or args.latency < 0 or args.rush < 0:
        sys.exit("error: --load, --latency and --rush count processes and submissions: 0 or more")
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.1f}, vecgrade serve --jobs {args.jobs}")
    for old in args.dir.glob("student*"):
        shutil.rmtree(old, ignore_errors=True)
    course = course_with_exchange(args.dir / "course")
    folder = student_folder(course, args.dir / "student")
    with busy(args.load):
        if args.load:
            print(f"{args.load} busy processes beside the service", flush=True)
        run(args, course, folder)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def run(args: argparse.Namespace, course, folder: Path) -> None:
    """Start the service, time the latency and the rush, stop the service."""
    log = open(args.dir / "serve.log", "w")
    service = subprocess.Popen([BIN / "vecgrade", "serve", "--jobs", str(args.jobs)], cwd=course.root,
                               stdout=log, stderr=subprocess.STDOUT)
    try:
        start = time.time()
        while "serving " not in (args.dir / "serve.log").read_text():
            if service.poll() is not None or time.time() - start > 600:
                raise RuntimeError(f"the service did not start; see {args.dir / 'serve.log'}")
            time.sleep(0.2)
        print(f"service started and warm in {time.time() - start:.1f} s")

        latencies = []
        for i in range(args.latency):
            student = f"lat{i:03d}"
            submitted = submit(own_copy(folder, course, i), student)
            latencies.append(released_at(course, student) - submitted)
        if latencies:
            print(f"latency, one submission at a time ({len(latencies)}): p50 {quantile(latencies, 0.5):.1f} s, "
                  f"p95 {quantile(latencies, 0.95):.1f} s, max {max(latencies):.1f} s (goal: p95 <= 10 s); "
                  f"{load()}", flush=True)
        if not args.rush:
            return

        returned: dict[str, float] = {}
        copies = [own_copy(folder, course, args.latency + i) for i in range(args.rush)]
        gap = args.within / max(1, args.rush - 1)
        first = time.time()

        def one(i: int) -> None:
            time.sleep(max(0.0, first + i * gap - time.time()))
            returned[f"rush{i:03d}"] = submit(copies[i], f"rush{i:03d}")

        threads = [threading.Thread(target=one, args=(i,)) for i in range(args.rush)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        done = {s: released_at(course, s) for s in returned}
        served = max(done.values()) - first
        rush = [done[s] - returned[s] for s in returned]
        print(f"rush: {args.rush} submissions within {max(returned.values()) - first:.0f} s, all served "
              f"{served:.0f} s after the first (goal: <= 180 s); throughput {args.rush / served * 60:.1f} "
              f"submissions per minute; latency in the rush p50 {quantile(rush, 0.5):.1f} s, "
              f"p95 {quantile(rush, 0.95):.1f} s, max {max(rush):.1f} s; {load()}")
        print(f"mean grading per submission (the service's log): {_mean_grading(args.dir / 'serve.log'):.1f} s")
    finally:
        service.terminate()
        service.wait(120)
        log.close()


def _mean_grading(log: Path) -> float:
    found = [float(part.split("=")[1].rstrip("s")) for line in log.read_text().splitlines()
             for part in line.split() if part.startswith("grading=") and "outcome=graded" in line]
    return statistics.mean(found) if found else float("nan")


if __name__ == "__main__":
    main()
