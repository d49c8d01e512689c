"""What the on-submit tests need around the service: Unix students with an environment that holds only
nbgrader, a world-accessible exchange, their answers, and ``vecgrade serve`` as a process of its own."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from graders.course.personas import Persona
from graders.coursedir.course import Course
from graders.model.exercise import Assignment
from graders.model.notebook import answer_id
from graders.serve.ledger import Entry, Ledger, ledger_url

from tests.testkit import admin_tool

STUDENT_NBGRADER = "nbgrader==0.9.6"
SYSTEM_PYTHON = "/usr/bin/python3"
VECGRADE = str(Path(sys.executable).with_name("vecgrade"))

# run by the student's own Python (nbformat came with nbgrader): put answers into the fetched notebook
ANSWER = """\
import json, sys, nbformat
path, answers = sys.argv[1], json.load(sys.stdin)
nb = nbformat.read(path, as_version=4)
for cell in nb.cells:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    if grade_id in answers["cells"]:
        cell.source = answers["cells"][grade_id]
for i, source in enumerate(answers["extra"]):
    nb.cells.insert(2 + i, nbformat.v4.new_code_cell(source))
nbformat.write(nb, path)
"""


def wait_for(check: Callable[[], object], timeout: float, what: str, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def _system_venv_ready() -> None:
    """Debian's python3 makes venvs only with python3-venv (ensurepip); installed when root, else named."""
    if subprocess.run([SYSTEM_PYTHON, "-c", "import ensurepip, venv"], capture_output=True).returncode == 0:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError("the on-submit tests need Debian's python3-venv: apt-get install -y python3-venv")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "python3-venv"], check=True, env=env)


def student_env() -> Path:
    """A virtualenv of Debian's python3 holding only nbgrader (and what it needs), readable by every user.

    Built once per machine and kept by its path (a pip install takes half a minute); a half-built one
    (no ``.complete``) is built again."""
    version = subprocess.run([SYSTEM_PYTHON, "--version"], capture_output=True, text=True).stdout.strip()
    key = hashlib.sha256(f"{STUDENT_NBGRADER} {version}".encode()).hexdigest()[:12]
    path = Path(f"/opt/vecgrade-student-{key}")
    with open(f"{path}.lock", "w") as lock:  # two test workers at once build it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (path / ".complete").exists():
            _system_venv_ready()
            shutil.rmtree(path, ignore_errors=True)
            subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(path)], check=True)
            subprocess.run([str(path / "bin" / "pip"), "install", "--quiet", STUDENT_NBGRADER], check=True)
            subprocess.run(["chmod", "-R", "a+rX", str(path)], check=True)
            (path / ".complete").write_text(STUDENT_NBGRADER + "\n")
    return path


@dataclass
class Student:
    """A Unix user who runs nbgrader's own client as themselves."""
    name: str
    home: Path
    env: Path

    def run(self, *args: str, stdin: str | None = None, timeout: float = 180, check: bool = True):
        """``args`` as this user, in their home, with a clean environment: their own PATH, HOME and cache."""
        variables = {"HOME": str(self.home), "USER": self.name, "LOGNAME": self.name, "LANG": "C.UTF-8",
                     "PATH": f"{self.env / 'bin'}:/usr/bin:/bin"}
        cmd = [admin_tool("runuser"), "-u", self.name, "--", "env", "-i", *[f"{k}={v}" for k, v in variables.items()], *args]
        proc = subprocess.run(cmd, cwd=self.home, input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} as {self.name} failed ({proc.returncode}):\n"
                                 f"{proc.stdout}\n{proc.stderr}")
        return proc

    def nbgrader(self, *args: str, check: bool = True):
        return self.run(str(self.env / "bin" / "nbgrader"), *args, check=check)

    def answer(self, assignment: Assignment, persona: Persona, notebook: str | None = None) -> None:
        """Write ``persona``'s answers into the fetched notebook, with the student's own Python."""
        answers = {answer_id(ex.name): persona.answers(ex) for ex in assignment.exercises}
        payload = {"cells": {k: v for k, v in answers.items() if v is not None}, "extra": persona.extra_cells}
        path = self.home / assignment.name / (notebook or f"{assignment.name}.ipynb")
        self.run(str(self.env / "bin" / "python"), "-c", ANSWER, str(path), stdin=json.dumps(payload))

    def feedback_pages(self, assignment: str) -> dict[str, str]:
        """{submission timestamp: feedback HTML} as ``nbgrader fetch_feedback`` left them."""
        folder = self.home / assignment / "feedback"
        return {p.parent.name: p.read_text() for p in sorted(folder.glob("*/*.html"))}


@contextmanager
def students(names: list[str], exchange: Path, course_id: str) -> Iterator[dict[str, Student]]:
    """Fresh Unix users (unique names: other test runs share the machine), removed with their homes after."""
    if os.geteuid() != 0:
        pytest.fail("the on-submit tests create Unix users (useradd): run them as root, as `make test` does")
    env = student_env()
    prefix = f"vgs{secrets.token_hex(3)}"
    made: dict[str, Student] = {}
    try:
        for name in names:
            user = f"{prefix}_{name}"
            subprocess.run([admin_tool("useradd"), "-m", "-s", "/bin/sh", user], check=True, capture_output=True)
            home = Path(f"/home/{user}")
            made[name] = Student(user, home, env)
            config = home / ".jupyter" / "nbgrader_config.py"
            config.parent.mkdir()
            config.write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n"
                              f"c.CourseDirectory.course_id = {course_id!r}\n")
            subprocess.run(["chown", "-R", f"{user}:{user}", str(config.parent)], check=True)
        yield made
    finally:
        for s in made.values():
            subprocess.run([admin_tool("userdel"), "-r", "-f", s.name], capture_output=True)


@contextmanager
def world_exchange() -> Iterator[Path]:
    """An exchange root every user can reach, as nbgrader's default /usr/local/share/nbgrader/exchange is."""
    base = Path("/srv/nbgrader")
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)
    root = base / f"exchange-{secrets.token_hex(4)}"
    root.mkdir(parents=True)  # parents: another run may just have removed an empty /srv/nbgrader
    os.chmod(root, 0o1777)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
        try:
            base.rmdir()  # made here, and empty unless another run uses it
        except OSError:
            pass


class ServiceProcess:
    """``vecgrade serve`` run as a teacher runs it: its own process, in the course folder, logging to a file."""

    def __init__(self, course: Course, *args: str):
        self.course, self.args = course, args
        self.log = course.root.parent / "serve.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 240) -> None:
        with open(self.log, "a") as out:
            out.write(f"--- start {time.strftime('%H:%M:%S')}\n")
            self.proc = subprocess.Popen([VECGRADE, "serve", *self.args], cwd=self.course.root, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        proc = self.proc
        wait_for(lambda: "serving " in self.log.read_text().rsplit("--- start", 1)[-1] or proc.poll() is not None,
                 timeout, "the service to start")
        assert proc.poll() is None, self.log.read_text()

    def kill(self) -> None:
        """SIGKILL, as an out-of-memory killer or a power cut would: no clean-up of any kind."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.terminate()
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines()


def entries(course: Course, student: str | None = None) -> list[Entry]:
    ledger = Ledger(ledger_url(course))
    try:
        return ledger.select(student=student)
    finally:
        ledger.close()


def release_and_fetch(course: Course, people: dict[str, Student], assignment: str) -> None:
    """``assignment`` released through nbgrader's API, then fetched by every student with nbgrader's own
    ``fetch_assignment`` (four at once)."""
    with course.api() as api:
        assert api.release_assignment(assignment)["success"]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda s: s.nbgrader("fetch_assignment", assignment), people.values()))


@contextmanager
def running(course: Course, *args: str) -> Iterator[ServiceProcess]:
    """``vecgrade serve ARGS`` started on ``course`` (until it says it serves), and stopped afterwards."""
    service = ServiceProcess(course, *args)
    service.start()
    try:
        yield service
    finally:
        service.stop()
