"""Temporary folders, tmpfs mounts and jail cgroups end with their owner, even one killed with SIGKILL.

Every ``vecgrade-<kind>-<owner>-<random>`` folder is named after the process that made it (pid and start
time); whatever a killed process left is removed by the next process that makes one. The last test
kills a real ``vecgrade grade`` mid-run and shows the next run leaves nothing of it behind.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from graders.course.personas import Persona
from graders.sandbox import cgroup, owner, scratch
from graders.sandbox.policy import Sandbox
from graders.sandbox.scratch import NAME, Scratch, sweep

from tests.testkit import generated_course


def ended_tag() -> str:
    """The tag of a process that has ended."""
    proc = subprocess.Popen(["sleep", "0.1"])
    tag = owner.tag(proc.pid)
    proc.wait()
    return tag


def test_a_tag_names_a_running_process_and_no_other():
    assert owner.alive(owner.tag())
    assert not owner.alive(ended_tag())
    pid, start = owner.tag().split(".")
    assert not owner.alive(f"{pid}.{int(start) + 1}")  # the same pid, started at another time: another process
    assert owner.is_tag("12.345") and not owner.is_tag("12") and not owner.is_tag("memory.max")


def test_a_scratch_is_named_after_its_owner_and_removed_with_it(tmp_path):
    with Scratch("job", folder=str(tmp_path)) as path:
        match = NAME.fullmatch(os.path.basename(path))
        assert match and match.group(1) == "job" and match.group(2) == owner.tag()
        assert os.path.isdir(path)
    assert not os.path.exists(path)
    kept = Scratch("job", folder=str(tmp_path))
    child = os.fork()
    if child == 0:  # a forked child that exits normally runs the finalizers it inherited (as at exit)...
        kept.cleanup()
        os._exit(0)
    os.waitpid(child, 0)
    assert os.path.isdir(kept.name)  # ...and leaves its parent's folder alone
    kept.cleanup()
    assert not os.path.exists(kept.name)


def test_the_sweep_removes_what_ended_owners_left_and_nothing_else(tmp_path):
    dead, live = ended_tag(), owner.tag()
    for name in (f"vecgrade-kernel-{dead}-ab12", f"vecgrade-kernel-{live}-ab12", "vecgrade-kernel-qq3x1f",
                 "vecgrade-stability"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text("x")
    target = tmp_path / "someone-elses"
    target.mkdir()
    (target / "keep").write_text("x")
    os.symlink(target, tmp_path / f"vecgrade-job-{dead}-cd34")  # named like ours, but a link: never followed
    assert sweep(str(tmp_path)) == [f"vecgrade-kernel-{dead}-ab12"]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([f"vecgrade-job-{dead}-cd34", f"vecgrade-kernel-{live}-ab12", "someone-elses",
                           "vecgrade-kernel-qq3x1f", "vecgrade-stability"])
    assert (target / "keep").exists()


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="a jail's scratch is a tmpfs only as root")
def test_a_tmpfs_scratch_left_by_a_killed_process_is_unmounted_and_removed(tmp_path):
    code = ("import sys, time\nfrom graders.sandbox.scratch import Scratch\n"
            f"s = Scratch('kernel', size_mb=8, folder={str(tmp_path)!r})\nopen(s.name + '/x', 'w').write('x')\n"
            "print(s.name, flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    path = proc.stdout.readline().strip()
    proc.kill()
    proc.wait()
    assert os.path.ismount(path) and os.path.exists(os.path.join(path, "x"))  # control: SIGKILL left it mounted
    assert sweep(str(tmp_path)) == [os.path.basename(path)]
    assert not os.path.ismount(path) and not os.path.exists(path)


def leftovers(folder: str | None = None) -> set[str]:
    """Owned folders (in ``folder``, default the temporary folder), tmpfs mounts and jail groups on this machine
    whose owner has ended."""
    found = {entry.path for entry in os.scandir(folder or scratch.tempfile.gettempdir())
             if (m := NAME.fullmatch(entry.name)) and not owner.alive(m.group(2))}
    with open("/proc/mounts") as f:
        found |= {line.split()[1] for line in f if (m := NAME.search(line.split()[1])) and not owner.alive(m.group(2))}
    hierarchy = cgroup.hierarchy()
    if cgroup.problem() is None and hierarchy is not None:
        found |= {os.path.join(parent, name) for parent in hierarchy.parents() for name in os.listdir(parent)
                  if owner.is_tag(name) and not owner.alive(name)}
    return found


SLOW = "import time\nif 'get_ipython' in globals():  # the notebook's kernel (its shell), never a grading child\n    time.sleep(60)\n"


@pytest.mark.e2e
@pytest.mark.skipif(not Sandbox().status()[0], reason="no sandbox here")
def test_a_grading_run_killed_with_sigkill_leaves_nothing_after_the_next_run(tmp_path, broadcasting):
    course = generated_course(tmp_path / "course", broadcasting, extra_config="c.ResilientExecute.timeout = 90")
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    for name, extra in (("abe_slow", [SLOW]), ("ada", [])):  # the slow one is graded first: its kernel sleeps
        person = Persona(name, "reference answers", lambda ex: ex.reference_source(), lambda n: (1.0, 1.0, 1.0),
                         extra_cells=extra)
        (course.root / "submitted" / name / "broadcasting").mkdir(parents=True)
        nbformat.write(person.notebook(release, broadcasting), course.root / "submitted" / name / "broadcasting"
                       / "broadcasting.ipynb")
    # a temporary folder of the run's own: another test's run, sweeping the machine's, cannot tidy this one up first
    private = tmp_path / "tmp"
    private.mkdir()
    env = {**os.environ, "TMPDIR": str(private)}
    before = leftovers(str(private))
    vecgrade = str(Path(sys.executable).with_name("vecgrade"))
    run = subprocess.Popen([vecgrade, "grade", "broadcasting", "--jobs", "1"], cwd=course.root, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    kernel = f"vecgrade-kernel-{owner.tag(run.pid)}-"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and run.poll() is None:  # until the slow student's kernel sleeps
        if any(name.startswith(kernel) for name in os.listdir(private)):
            time.sleep(8)
            break
        time.sleep(0.5)
    assert run.poll() is None, "the run ended before it could be killed"
    os.killpg(run.pid, 9)
    run.wait()
    time.sleep(2)  # the fork server sees its grader gone and ends its jails
    killed = leftovers(str(private)) - before
    assert any(kernel in path for path in killed), killed  # control: SIGKILL left the run's folders behind
    again = subprocess.run([vecgrade, "grade", "broadcasting", "--jobs", "1", "-s", "ada"], cwd=course.root, env=env,
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert not (killed & leftovers(str(private))), killed & leftovers(str(private))
    assert not any(os.path.exists(path) for path in killed)


@pytest.mark.e2e
@pytest.mark.skipif(not Sandbox().status()[0], reason="no sandbox here")
def test_grading_processes_give_everything_back_when_the_run_ends(tmp_path, broadcasting, monkeypatch):
    """A grading process ends without the interpreter's teardown (it took 0.8 s with torch loaded), so it gives back
    what it holds first: its fork server and jails, its folders, its cgroups. Nothing of a finished run remains."""
    from graders.course.grade import grade_class
    monkeypatch.setattr(sys.modules["__main__"], "__spec__", None, raising=False)  # spawn under pytest-xdist
    course = generated_course(tmp_path / "course", broadcasting)
    release = nbformat.read(course.root / "release" / "broadcasting" / "broadcasting.ipynb", as_version=4)
    for student in ("ada", "bo"):  # two: grade_class never starts more processes than submissions
        person = Persona(student, "reference answers", lambda ex: ex.reference_source(), lambda n: (1.0, 1.0, 1.0))
        (course.root / "submitted" / student / "broadcasting").mkdir(parents=True)
        nbformat.write(person.notebook(release, broadcasting), course.root / "submitted" / student / "broadcasting"
                       / "broadcasting.ipynb")
    before = leftovers()
    results = grade_class(course, "broadcasting", ["ada", "bo"], jobs=2)
    assert all(r.success for r in results), results  # control: the run really graded, in its own processes
    assert leftovers() - before == set()
