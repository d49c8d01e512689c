"""The jail, run directly: what confined code can and cannot reach, and that it fails closed.

Confined code starts two ways, and each test of what it reaches runs both:
``exec`` (a new program through ``Sandbox.wrap``: the kernel, and the template
when the grader is not root) and ``forked`` (a student's template forked from
the warm ``ForkServer`` into a jail of its own, as grading starts it as root).
"""
import ast
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from graders import KIT_ROOT
from graders.sandbox import policy
from graders.sandbox.jail import FIRST_UID
from graders.sandbox.policy import Sandbox, SandboxUnavailableError
from graders.sandbox.session import ForkServer, Limits, Template, WorkerFailure, WorkerSession

PROBE = r'''
import os, socket
report = {"uid": os.getuid(), "pid": os.getpid(), "cwd": os.getcwd(), "host": socket.gethostname()}
for name, path in (("course", COURSE), ("kit", KIT), ("neighbour", NEIGHBOUR)):
    report[name] = sorted(os.listdir(path)) if os.path.isdir(path) else None
try:
    socket.create_connection(("127.0.0.1", 22), timeout=2)
    report["net"] = "open"
except OSError as exc:
    report["net"] = type(exc).__name__
for name, path in (("scratch", os.path.join(SCRATCH, "w")), ("outside", os.path.join(COURSE, "w")),
                   ("root", "/w")):
    try:
        open(path, "w").write("x")
        report[name] = "written"
    except OSError as exc:
        report[name] = type(exc).__name__
print(report)
'''


def run_probe(box, code, scratch, how="exec", timeout=60):
    """Run ``code`` confined; it leaves a dict in ``report`` (and prints it). ``SCRATCH`` in the code
    is the process's own scratch folder (``scratch``, or the forked template's own)."""
    if how == "forked":
        return forked_probe(box, code)
    code = code.replace("SCRATCH", repr(str(scratch)))
    out = subprocess.run(box.wrap([sys.executable, "-c", code], scratch=str(scratch)),
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])  # our own probe's dict


def forked_probe(box, code, server=None):
    """``code`` in a grading child of a template forked from the warm server, as grading runs it."""
    own = server is None
    server = server or ForkServer()
    try:
        with Template(Limits(), box, server) as template:
            code = code.replace("SCRATCH", repr(template.scratch.name)) + "\ndef probe():\n    return report\n"
            with WorkerSession([("probe", code)], template=template) as child:
                child.start()
                assert not child.load_errors, child.load_errors
                reply, _ = child.request("call", 30, name="probe", args=[], kwargs={})
                assert "ok" in reply, reply
                return reply["ok"]["out"]
    finally:
        if own:
            server.close()


@pytest.fixture
def sandbox():
    box = Sandbox()
    confined, status = box.status()
    if not confined:
        pytest.skip(status)
    return box


HOW = ["exec", pytest.param("forked", marks=[pytest.mark.root, pytest.mark.skipif(
    os.geteuid() != 0, reason="the warm server forks templates as root only")])]


@pytest.mark.parametrize("how", HOW)
def test_confined_code_sees_only_the_allowlist(sandbox, tmp_path, how):
    course, scratch, neighbour = tmp_path / "course", tmp_path / "scratch", tmp_path / "other-checkout"
    for folder in (course, scratch, neighbour):
        folder.mkdir()
    (course / "gradebook.db").write_text("secret")
    (neighbour / "answers.py").write_text("secret")
    sandbox.course_root = str(course)
    code = (PROBE.replace("COURSE", repr(str(course))).replace("KIT", repr(str(KIT_ROOT)))
            .replace("NEIGHBOUR", repr(str(neighbour))))
    code = code.replace('"cwd": os.getcwd()', '"cwd": os.getcwd() == SCRATCH')
    report = run_probe(sandbox, code, scratch, how)
    assert report["course"] is None and report["neighbour"] is None  # never listed: not there at all
    venv = [os.path.basename(sys.prefix)] if os.path.dirname(sys.prefix) == str(KIT_ROOT) else []
    assert report["kit"] == sorted(["graders", *venv])  # of the checkout, only the package and the venv
    assert report["net"] != "open" and report["host"] == "sandbox"
    assert report["scratch"] == "written" and report["outside"] != "written" and report["root"] != "written"
    assert report["pid"] != 1 and report["cwd"] is True  # a small init is PID 1, not the student
    if os.geteuid() == 0:
        assert report["uid"] >= FIRST_UID  # a user of the jail's own, not root and not a system user
    # control: the same probe, unconfined on purpose, does see the course and the neighbour
    report = run_probe(Sandbox(enabled=False), code, scratch)
    assert report["course"] == ["gradebook.db"] and report["neighbour"] == ["answers.py"]


@pytest.mark.parametrize("how", HOW)
def test_the_demo_answers_are_not_reachable(sandbox, tmp_path, how):
    answers = str(KIT_ROOT / "demo" / "broadcasting.py")  # the demo class's working answers
    assert os.path.exists(answers)  # they are there on the host: the probe below can only fail by the jail
    code = (f"import os\nreport = {{'demo': os.path.exists({answers!r}), "
            f"'package': os.path.exists({policy.graders.__file__!r})}}\nprint(report)")
    report = run_probe(sandbox, code, tmp_path, how)
    assert report == {"demo": False, "package": True}


IPC_WRITE = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
shmid = libc.shmget(0x7EC6, 4096, 0o1666)  # IPC_CREAT | 0666
open("/run/lock/vecgrade-leak", "w").write("x")
open("/dev/shm/vecgrade-leak", "w").write("x")
seen = libc.shmget(0x7EC6, 0, 0)
report = {"created": shmid >= 0, "seen_here": seen >= 0, "lock": os.path.exists("/run/lock/vecgrade-leak")}
print(report)
'''
IPC_READ = r'''
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
report = {"shm": libc.shmget(0x7EC6, 0, 0) >= 0, "lock": os.path.exists("/run/lock/vecgrade-leak"),
          "devshm": os.path.exists("/dev/shm/vecgrade-leak")}
print(report)
'''


@pytest.mark.parametrize("how", HOW)
def test_ipc_and_run_lock_are_not_shared_between_students(sandbox, tmp_path, how):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = run_probe(sandbox, IPC_WRITE, tmp_path / "a", how)
    assert first == {"created": True, "seen_here": True, "lock": True}  # control: the probe works
    second = run_probe(sandbox, IPC_READ, tmp_path / "b", how)
    assert second == {"shm": False, "lock": False, "devshm": False}
    assert not os.path.exists("/run/lock/vecgrade-leak") and not os.path.exists("/dev/shm/vecgrade-leak")


@pytest.mark.parametrize("how", HOW)
def test_the_graders_secrets_stay_outside(sandbox, tmp_path, monkeypatch, how):
    monkeypatch.setenv("VECGRADE_TEST_SECRET", "hunter2")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    code = ("import os\nreport = {'secret': os.environ.get('VECGRADE_TEST_SECRET'), "
            "'omp': os.environ.get('OMP_NUM_THREADS'), 'home': os.environ['HOME'] == SCRATCH}\nprint(report)")
    assert run_probe(sandbox, code, tmp_path, how) == {"secret": None, "omp": "1", "home": True}
    # control: unconfined on purpose, the same probe sees it
    assert run_probe(Sandbox(enabled=False), code, tmp_path)["secret"] == "hunter2"


def test_the_grader_can_kill_a_student_that_ignores_signals(sandbox, tmp_path):
    code = ("import signal, time\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
            "    signal.signal(s, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(600)\n")
    proc = subprocess.Popen(sandbox.wrap([sys.executable, "-c", code], scratch=str(tmp_path)),
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline().strip() == "ready"
    os.killpg(proc.pid, signal.SIGTERM)  # forwarded by the init; ignored by the student
    time.sleep(0.5)
    assert proc.poll() is None  # control: the student really ignores SIGTERM
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=20) != 0


def processes_of(uid: int) -> list[int]:
    """Pids on this host whose real user is ``uid`` (from /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as f:
                line = next(x for x in f if x.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if entry.isdigit() and int(line.split()[1]) == uid:
            pids.append(int(entry))
    return pids


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="the warm server forks templates as root only")
def test_closing_a_forked_template_ends_its_whole_jail(sandbox):
    """Each forked template runs in a jail of its own user; closing it (what grading does after a
    student, or after a hang) leaves no process of that jail, even one that ignores signals."""
    code = ("import os, signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
            "    signal.signal(s, signal.SIG_IGN)\nreport = {'uid': os.getuid()}\ndef probe():\n    return report\n")
    with ForkServer() as server:
        first = forked_probe(sandbox, "import os\nreport = {'uid': os.getuid()}", server)
        template = Template(Limits(), sandbox, server)
        with WorkerSession([("probe", code)], template=template) as child:
            child.start()
            uid = child.request("call", 30, name="probe", args=[], kwargs={})[0]["ok"]["out"]["uid"]
            assert uid >= FIRST_UID and uid != first["uid"]  # a user of its own, not the previous jail's
            assert len(processes_of(uid)) >= 2  # control: the jail's init, template and child are running
            template.close()
            deadline = time.monotonic() + 10
            while processes_of(uid) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert processes_of(uid) == []
        template.scratch.cleanup()


def refuse(self, *args, **kwargs):
    """A ForkServer.fork_template that fails, as one whose server cannot fork would."""
    raise WorkerFailure("the Python process that runs it could not start")


WHO = ("import os, socket, sys\nreport = {'main': os.path.basename(sys.modules['__main__'].__file__), "
       "'host': socket.gethostname(), 'uid': os.getuid()}")


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="the warm server forks templates as root only")
def test_a_server_that_cannot_fork_leaves_a_confined_program_instead(sandbox, monkeypatch):
    assert forked_probe(sandbox, WHO)["main"] == "forkserver.py"  # control: forked from the warm server

    monkeypatch.setattr(ForkServer, "fork_template", refuse)
    report = forked_probe(sandbox, WHO)
    assert report["main"] == "worker.py"  # a new program, started through the jail
    assert report["host"] == "sandbox" and report["uid"] >= FIRST_UID


def test_the_trusted_reference_starts_warm_without_a_jail_and_closes_with_its_children(monkeypatch):
    """The course's reference program is forked from the warm server too, as the grader's own user and
    host, in its own scratch folder; closing it ends its template and the child it forked."""
    code = WHO + "\nreport['cwd'] = os.getcwd()\ndef probe():\n    return report\n"
    with ForkServer() as server:
        with WorkerSession([("probe", code)], server=server) as reference:
            reference.start()
            report = reference.request("call", 30, name="probe", args=[], kwargs={})[0]["ok"]["out"]
            assert report["main"] == "forkserver.py" and report["uid"] == os.getuid()
            assert report["host"] == socket.gethostname() and report["cwd"] == reference.template.scratch.name
            group = reference.template.forked
            assert group is not None
            os.killpg(group, 0)  # control: the template's group (template and child) is running
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)
        # a server that cannot fork: the reference starts as a program of its own instead
        monkeypatch.setattr(ForkServer, "fork_template", refuse)
        with WorkerSession([("probe", code)], server=server) as reference:
            reference.start()
            assert reference.request("call", 30, name="probe", args=[], kwargs={})[0]["ok"]["out"]["main"] == "worker.py"


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="the warm server forks templates as root only")
def test_a_server_started_under_another_path_still_forks_jails(sandbox, monkeypatch, tmp_path):
    """The server keeps the environment it started in (here one whose PATH has no mount tools, as in
    a test that hides ``unshare``); the jails it forks later still mount their root."""
    path = os.environ["PATH"]
    with ForkServer() as server:
        monkeypatch.setenv("PATH", str(tmp_path))
        with WorkerSession([("probe", "x = 1")], server=server) as reference:
            reference.start()  # starts the server, under that PATH
        monkeypatch.setenv("PATH", path)
        report = forked_probe(sandbox, WHO, server)
        assert report["main"] == "forkserver.py" and report["host"] == "sandbox"


def test_a_missing_unshare_refuses_instead_of_running_unconfined(monkeypatch, tmp_path):
    policy._namespaces_work.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no unshare there
    try:
        box = Sandbox()
        confined, status = box.status()
        assert not confined and status.startswith("sandbox unavailable:") and "unshare" in status
        with pytest.raises(SandboxUnavailableError, match="Sandbox.enabled = False"):
            box.wrap(["true"], scratch=str(tmp_path))
        # only an explicit choice runs student code unconfined
        assert Sandbox(enabled=False).wrap(["true"], scratch=str(tmp_path)) == ["true"]
    finally:
        policy._namespaces_work.cache_clear()


def test_status_explains_when_the_sandbox_is_off():
    box = Sandbox(enabled=False)
    confined, status = box.status()
    assert not confined and status.startswith("sandbox off:")
    assert box.check() is False
    assert box.wrap(["true"], scratch="/tmp") == ["true"]


def test_no_folder_of_the_course_is_handed_to_student_code(sandbox, tmp_path):
    sandbox.course_root = str(tmp_path)
    with pytest.raises(ValueError, match="private copy"):
        sandbox.wrap(["true"], scratch="/tmp/x", cwd=str(tmp_path / "autograded" / "bob"))
    assert sandbox.wrap(["true"], scratch="/tmp/x")[-1] == "true"  # control: a scratch outside it is fine


HOG = """import os, time
held = 0
while True:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        held += 1
    except OSError:
        break
print("holding", held, flush=True)
time.sleep(60)
"""
FORK_THREE = """import os
children = 0
for _ in range(3):
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        children += 1
    except OSError:
        pass
print({"forked": children})
"""


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="per-jail users need root (without it the user namespace counts)")
def test_one_students_fork_bomb_does_not_starve_another(tmp_path):
    """RLIMIT_NPROC counts per user on the host: each jail runs as a user of its own, so a student who
    holds every process the limit allows costs the next student nothing."""
    box = Sandbox(nproc=12)
    if not box.status()[0]:
        pytest.skip(box.status()[1])
    for d in ("hog", "other", "same"):
        (tmp_path / d).mkdir()
    uid = box.fresh_uid()
    hog = subprocess.Popen(box.wrap([sys.executable, "-c", HOG], scratch=str(tmp_path / "hog"), uid=uid),
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert hog.stdout.readline().startswith("holding")  # it holds all the limit allows
        assert run_probe(box, FORK_THREE, tmp_path / "other") == {"forked": 3}
        # control: sharing the hog's user, the same probe cannot fork at all
        out = subprocess.run(box.wrap([sys.executable, "-c", FORK_THREE], scratch=str(tmp_path / "same"), uid=uid),
                             capture_output=True, text=True, timeout=60)
        assert "forked': 3" not in out.stdout
    finally:
        os.killpg(hog.pid, signal.SIGKILL)
        hog.wait()


FILL = r'''
import errno, os
written = 0
try:
    for i in range(100):
        with open(os.path.join(os.environ["HOME"], f"fill-{i}"), "wb") as f:
            f.write(b"x" * (8 << 20))
        written += 8
    report = {"written": written, "error": None}
except OSError as exc:
    report = {"written": written, "error": errno.errorcode.get(exc.errno)}
print(report)
'''


def fill_scratch(box, how):
    """FILL in a jail whose scratch is made as grading makes it (``Sandbox.scratch``), then removed."""
    if how == "forked":
        return forked_probe(box, FILL)
    scratch = box.scratch("worker")
    try:
        assert os.path.ismount(scratch.name)  # a tmpfs on the host: the grader sees what the jail writes
        return run_probe(box, FILL, scratch.name)
    finally:
        scratch.cleanup()
        assert not os.path.exists(scratch.name)


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="the scratch is a tmpfs only as root (mounted on the host)")
@pytest.mark.parametrize("how", HOW)
def test_writing_past_the_scratch_size_fails_inside_the_jail_only(sandbox, how):
    """HOME and TMPDIR hold ``scratch_mb``: the fourth 8 MB file of a 30 MB scratch fails with ENOSPC
    (the jail goes on and reports it); a larger scratch takes more (the size is what stopped it)."""
    sandbox.scratch_mb = 30
    assert fill_scratch(sandbox, how) == {"written": 24, "error": "ENOSPC"}
    sandbox.scratch_mb = 60
    assert fill_scratch(sandbox, how) == {"written": 56, "error": "ENOSPC"}
