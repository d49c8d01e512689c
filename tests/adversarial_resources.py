"""The adversarial class, issue 18 D: one student costing the class (files, memory, processes, disk, time).

Each entry is a `Case` of tests/adversarial.py (an answer for `batch_outer`, the marks it deserves, extra cells
or tampering); tests/test_adversarial.py grades every case through nbgrader. The answers are right: what the
extra cells do in the student's kernel costs that kernel only (its jail's cgroup and tmpfs scratch), and a
submission over the intake caps is refused whole, before nbgrader walks or copies it."""
from __future__ import annotations

from graders.sandbox.footprint import torch_footprint

from adversarial import FULL, REF, Case

# the class's jails get 3 GB for the work, not the default 6: on these virtual machines memory that was never touched
# before costs about 5 s per GB on its first touch, so filling 6 GB could outlast a cell's 20 s on a fresh machine.
# The limits add the installed torch's footprint to it (graders.sandbox.footprint), whichever build pip installed
JAIL_MB = 3072
JAIL_CONFIG = f"c.Sandbox.memory_mb = {JAIL_MB}"
# the jail's cgroup as the Sandbox derives it: the work's 3 GB and torch's resident memory
GROUP_MB = JAIL_MB + torch_footprint().resident_mb
# four processes of the kernel's jail, a third of the jail's cgroup each: the jail cannot hold them all
FORK_AND_ALLOCATE = """import os, time
pipes = {}
for _ in range(4):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        block = b"x" * (BLOCK_MB << 20)
        os.write(w, b"1")
        time.sleep(60)
        os._exit(0)
    os.close(w)
    pipes[pid] = r
for pid, r in pipes.items():
    os.read(r, 1)  # b"1" once allocated, b"" when it died first
    os.close(r)
time.sleep(0.5)
alive = [pid for pid in pipes if os.waitpid(pid, os.WNOHANG) == (0, 0)]
for pid in alive:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print("stopped by the jail:", len(alive) < 4)
""".replace("BLOCK_MB", str(GROUP_MB // 3))
# 8 MB files (under Sandbox.file_mb) in the working folder until the scratch tmpfs (Sandbox.scratch_mb) is full
FILL_SCRATCH = """import errno, os
try:
    for i in range(1000):
        with open(f"fill-{i}", "wb") as f:
            f.write(b"x" * (8 << 20))
    print("scratch full: never")
except OSError as exc:
    print("scratch full:", errno.errorcode.get(exc.errno))
for name in os.listdir("."):
    if name.startswith("fill-"):
        os.remove(name)
"""
# a small program in the kernel's jail forks sleeping processes, up to 2000: the jail's task limit (Sandbox.pids)
# stops it first (forked from a small process, not from the kernel, so that each fork is cheap)
BOMB = """import os, time
children = []
try:
    for _ in range(2000):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError:
    pass
for pid in children:
    os.kill(pid, 9)
for pid in children:
    os.waitpid(pid, 0)
print("forks refused:", len(children) < 2000)
"""
FORK_BOMB = ("import subprocess, sys\n"
             f"print(subprocess.run([sys.executable, '-c', {BOMB!r}], capture_output=True, text=True, "
             "timeout=15).stdout.strip())\n")

CASES: list = [
    Case("many_small_files", "20,000 small files beside the notebook (nbgrader's walk over them is quadratic)",
         REF, None, files={f"f{i:05}.txt": b"x" for i in range(20_000)}),
    Case("big_file", "a 25 MB file beside the notebook (more than Intake.max_bytes)", REF, None,
         files={"weights.bin": b"\0" * (25 << 20)}),
    Case("many_cells", "a notebook of 10,001 one-line cells (more than Intake.max_cells)", REF, None,
         extra=[f"x = {i}" for i in range(10_001)]),
    Case("fork_and_allocate", f"four processes in the kernel's jail, {GROUP_MB // 3} MB each", REF, FULL,
         extra=[FORK_AND_ALLOCATE], shows="stopped by the jail: True"),
    Case("fill_scratch", "fills the kernel's scratch folder with files", REF, FULL,
         extra=[FILL_SCRATCH], shows="scratch full: ENOSPC"),
    Case("kernel_fork_bomb", "a fork bomb in a scratch cell of the kernel", REF, FULL,
         extra=[FORK_BOMB], shows="forks refused: True"),
]
