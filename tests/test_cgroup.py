"""Each jail is bounded as a whole by a cgroup of its own: memory (all its processes together) and tasks.

Rlimits hold each process alone; these tests fork several processes inside ONE jail and show the
jail's total held to ``Sandbox.memory_mb`` and ``Sandbox.pids``, while another jail is unaffected, and
each has a control that runs the same program without the group and gets past the limit. Both ways
a jail starts are checked: ``exec`` (a new program through ``Sandbox.wrap``) and ``forked`` (a template
forked from the warm server into its jail, as grading starts it as root).
"""
import ast
import os
import subprocess
import sys
import time

import pytest

from graders.sandbox import cgroup, owner
from graders.sandbox.cgroup import Hierarchy, find_hierarchy
from graders.sandbox.footprint import torch_footprint
from graders.sandbox.policy import Sandbox, SandboxUnavailableError
from graders.sandbox.session import ForkServer, Template, WorkerSession

GROUPS = cgroup.problem() is None and Sandbox().status()[0]
needs_groups = pytest.mark.skipif(not GROUPS, reason=f"no cgroups for jails here: {cgroup.problem()}")
HOW = ["exec", "forked"]
# the jails' cgroups hold 2.5 GB in all: the Sandbox adds the installed torch's resident memory to memory_mb
GROUP_MB = 2560
JAIL_MB = GROUP_MB - torch_footprint().resident_mb

# forks CHILDREN processes one after the other, each writing 1.5 GB and keeping it; reports how many still
# hold theirs at the end (the memory cgroup's OOM killer stops the others), then lets them go or keeps them
HOLD = r'''
import os, time
children = []
for _ in range(CHILDREN):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(1)
        block = b"x" * (1536 << 20)
        os.write(w, b"1")
        time.sleep(120)
        os._exit(0)
    os.close(w)
    os.read(r, 1)  # b"1" once allocated, b"" when it died first
    os.close(r)
    children.append(pid)
time.sleep(0.5)
alive = [pid for pid in children if os.waitpid(pid, os.WNOHANG) == (0, 0)]
report = {"holding": len(alive)}
print(report, flush=True)
if KEEP:
    time.sleep(120)
for pid in alive:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
'''
ALLOCATE = "block = b'x' * (1536 << 20)\nreport = {'allocated': len(block) >> 20}\nprint(report)\n"
BOMB = r'''
import os, time
held = 0
for _ in range(100):
    try:
        if os.fork() == 0:
            os.close(1)
            time.sleep(60)
            os._exit(0)
        held += 1
    except OSError:
        break
report = {"held": held}
print(report)
'''
WHERE = ("report = {'groups': sorted({line.rstrip().split(':', 2)[2] for line in open('/proc/self/cgroup') "
         "if line.split(':')[1] in ('memory', 'pids')})}\nprint(report)\n")


def run_probe(box, code, scratch):
    """``code`` as a new program in a jail (``Sandbox.wrap``); the dict it printed last."""
    out = subprocess.run(box.wrap([sys.executable, "-c", code], scratch=str(scratch)),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def in_template(box, code, how):
    """``code`` in a grading child of a confined template, started as ``how`` says; its ``report``."""
    server = ForkServer() if how == "forked" else None
    try:
        with Template(box.limits(60), box, server) as template:
            with WorkerSession([("probe", code + "\ndef probe():\n    return report\n")], template=template) as child:
                child.start()
                assert not child.load_errors, child.load_errors
                reply, _ = child.request("call", 60, name="probe", args=[], kwargs={})
                assert "ok" in reply, reply
                return reply["ok"]["out"]
    finally:
        if server is not None:
            server.close()


def group_folders(name: str) -> list[str]:
    hierarchy = cgroup.hierarchy()
    assert hierarchy is not None
    return [os.path.join(parent, name) for parent in hierarchy.parents()]


@pytest.fixture
def no_groups(monkeypatch):
    """This process sees no usable cgroups (as on a host without them): jails get rlimits only."""
    monkeypatch.setattr(cgroup, "problem", lambda: "switched off by the test")


def test_the_hierarchy_is_found_in_v1_v2_and_hybrid_mount_tables(tmp_path):
    v1 = ("cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
          "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n")
    assert find_hierarchy(v1) == Hierarchy(1, ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"), ("memory", "pids"))
    shared = "cgroup /cg cgroup rw,memory,pids 0 0\n"
    assert find_hierarchy(shared).roots == ("/cg",)  # one mount holding both: one group, not two
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma\n")
    v2 = f"cgroup2 {tmp_path} cgroup2 rw,nsdelegate 0 0\n"
    assert find_hierarchy(v2) == Hierarchy(2, (str(tmp_path),))
    assert find_hierarchy(v2 + v1).version == 1  # hybrid: the controllers are v1's, the unified tree has none
    # controls: nothing usable is found where nothing is there
    assert find_hierarchy("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n") is None  # no pids controller
    (tmp_path / "cgroup.controllers").write_text("cpu io\n")
    assert find_hierarchy(v2) is None
    assert find_hierarchy("proc /proc proc rw 0 0\n") is None


@pytest.mark.root
@needs_groups
@pytest.mark.parametrize("how", HOW)
def test_a_jails_processes_share_one_memory_limit(how):
    """Four processes of one jail each write 1.5 GB: with 2.5 GB for the jail, at most one keeps its memory."""
    box = Sandbox(memory_mb=JAIL_MB)
    report = in_template(box, HOLD.replace("CHILDREN", "4").replace("KEEP", "False"), how)
    assert report["holding"] <= 1, report


@pytest.mark.root
@needs_groups
def test_without_the_group_the_same_jail_holds_more_than_its_limit(no_groups, tmp_path):
    """Control: rlimits alone let two processes of one jail hold 3 GB against a 2.5 GB limit."""
    box = Sandbox(memory_mb=JAIL_MB)
    assert "--cgroup" not in box.jail_args(str(tmp_path))
    assert run_probe(box, HOLD.replace("CHILDREN", "2").replace("KEEP", "False"), tmp_path)["holding"] == 2


@pytest.mark.root
@needs_groups
def test_a_jail_at_its_memory_limit_costs_another_jail_nothing(tmp_path):
    box = Sandbox(memory_mb=JAIL_MB)
    (tmp_path / "hog").mkdir()
    (tmp_path / "other").mkdir()
    hog = subprocess.Popen(box.wrap([sys.executable, "-c", HOLD.replace("CHILDREN", "4").replace("KEEP", "True")],
                                    scratch=str(tmp_path / "hog")),
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = hog.stdout.readline()
        assert line.startswith("{'holding': ") and int(line.split(": ")[1].rstrip("}\n")) <= 1, line
        assert run_probe(box, ALLOCATE, tmp_path / "other") == {"allocated": 1536}  # while the hog holds its share
    finally:
        os.killpg(hog.pid, 9)
        hog.wait()
        cgroup.release(hog.pid)


@pytest.mark.root
@needs_groups
@pytest.mark.parametrize("how", HOW)
def test_a_fork_bomb_stops_at_the_jails_task_limit(how):
    box = Sandbox(pids=40, nproc=10_000)  # the per-user process limit far above: the group is what stops it
    assert in_template(box, BOMB, how)["held"] < 40


@pytest.mark.root
@needs_groups
def test_without_the_group_the_same_fork_bomb_goes_on(no_groups, tmp_path):
    """Control: with rlimits only (and a high per-user limit) the bomb forks all it tries."""
    assert run_probe(Sandbox(pids=40, nproc=10_000), BOMB, tmp_path)["held"] == 100


@pytest.mark.root
@needs_groups
@pytest.mark.parametrize("how", HOW)
def test_a_jail_runs_in_a_group_of_its_own_that_goes_with_it(how):
    box = Sandbox()
    groups = in_template(box, WHERE, how)["groups"]
    assert len(groups) == 1 and groups[0].startswith(f"/{cgroup.PARENT}/"), groups  # memory and pids: one name
    name = groups[0].rsplit("/", 1)[1]
    assert owner.is_tag(name) and not owner.alive(name)  # named after the jail's first process, which has ended
    deadline = time.monotonic() + 5
    while any(os.path.exists(p) for p in group_folders(name)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(os.path.exists(p) for p in group_folders(name))


@pytest.mark.root
@needs_groups
def test_groups_a_killed_grader_left_are_removed_with_what_still_runs_in_them(tmp_path):
    ended = subprocess.Popen(["sleep", "0.1"])
    dead = owner.tag(ended.pid)
    ended.wait()
    straggler = subprocess.Popen(["sleep", "300"])  # a process of that dead jail, still running
    live = owner.tag()  # a group whose owner runs (this test): the sweep must leave it
    try:
        for name in (dead, live):
            for folder in group_folders(name):
                os.makedirs(folder)
        for folder in group_folders(dead):
            with open(os.path.join(folder, "cgroup.procs"), "w") as f:
                f.write(str(straggler.pid))
        run_probe(Sandbox(), "report = {}\nprint(report)", tmp_path)  # a new jail makes its group: it sweeps
        assert not any(os.path.exists(p) for p in group_folders(dead))
        assert straggler.wait(timeout=10) == -9  # killed: it belonged to a jail that had ended
        assert all(os.path.exists(p) for p in group_folders(live))  # control: a live owner's group stays
    finally:
        straggler.kill()
        straggler.wait()
        for folder in group_folders(live) + group_folders(dead):
            if os.path.exists(folder):
                os.rmdir(folder)


@pytest.mark.skipif(not Sandbox().status()[0], reason="no sandbox here")
def test_without_cgroups_jails_run_on_rlimits_and_the_status_says_so(no_groups, tmp_path):
    box = Sandbox()
    confined, status = box.status()
    assert confined and "rlimits only (no cgroup: switched off by the test" in status
    assert "--cgroup" not in box.jail_args(str(tmp_path))
    report = run_probe(box, WHERE, tmp_path)  # still confined, in the grader's own groups
    assert not any(g.startswith(f"/{cgroup.PARENT}/") for g in report["groups"])
    # a course that would rather refuse says so, and nothing runs
    strict = Sandbox(require_cgroup=True)
    confined, status = strict.status()
    assert not confined and "Sandbox.require_cgroup" in status
    with pytest.raises(SandboxUnavailableError, match="no cgroup for the jails"):
        strict.wrap(["true"], scratch=str(tmp_path))


@pytest.mark.root
@needs_groups
def test_with_cgroups_the_status_gives_the_jails_limits(tmp_path):
    box = Sandbox(memory_mb=3000, pids=99)
    assert "a cgroup per jail (3000 MB, 99 tasks)" in box.status()[1]
    assert "--cgroup" in box.jail_args(str(tmp_path))
    assert Sandbox(require_cgroup=True).check() is True  # control: with groups, requiring them refuses nothing


def test_on_cgroup_v2_the_group_gets_the_unified_limits_and_controllers(tmp_path, monkeypatch):
    """The v2 layout, in a folder standing for /sys/fs/cgroup (the kernel would make the control files itself):
    memory and pids enabled below the root and below vecgrade/, memory.max, no swap, pids.max, the process
    moved in, and back out when it leaves."""
    (tmp_path / "cgroup.controllers").write_text("cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("cpu\n")
    (tmp_path / "cgroup.procs").write_text("")
    group = tmp_path / cgroup.PARENT / owner.tag()
    group.mkdir(parents=True)
    (tmp_path / cgroup.PARENT / "cgroup.subtree_control").write_text("")
    for name in ("memory.max", "memory.swap.max", "pids.max", "cgroup.procs"):
        (group / name).write_text("")
    hierarchy = find_hierarchy(f"cgroup2 {tmp_path} cgroup2 rw 0 0\n")
    assert hierarchy == Hierarchy(2, (str(tmp_path),))
    monkeypatch.setattr(cgroup, "hierarchy", lambda: hierarchy)
    monkeypatch.setattr(cgroup, "_home", lambda h: [str(tmp_path)])  # where this process is: the root here
    jail = cgroup.JailGroup.create(512 << 20, 64)
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (tmp_path / cgroup.PARENT / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert [(group / n).read_text() for n in ("memory.max", "memory.swap.max", "pids.max", "cgroup.procs")] == \
        [str(512 << 20), "0", "64", str(os.getpid())]
    jail.leave()
    assert (tmp_path / "cgroup.procs").read_text() == str(os.getpid())
    jail.close_fds()
    # control: without the pids controller file the group is refused, not made half-limited
    (group / "pids.max").unlink()
    with pytest.raises(OSError, match="no memory or no pids limit"):
        cgroup.JailGroup.create(512 << 20, 64)
