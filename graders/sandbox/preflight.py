"""Before any submission: can a jail start Python with the installed torch under the configured limits?

The student's processes are forked from a server that imported torch, so each starts with torch's address space
already mapped: PyPI's default (CUDA) build maps about 3 GB more than the CPU build, and under an address-space or
memory limit below that, no student process can start at all. Grading then would give every student "could not
start". The limits add torch's footprint to ``Sandbox.memory_mb`` (``graders.sandbox.footprint``), so this
should not happen; ``problem`` makes sure once, before grading, by starting a jail with the configured limits and
calling a torch function in it, and says which setting to change, with the footprints measured here.
"""
from __future__ import annotations

import os

from graders.sandbox.footprint import torch_footprint
from graders.sandbox.session import ForkServer, Limits, Template, WorkerFailure, WorkerSession

PROBE = ("probe", "import torch\ndef probe(a):\n    return (a * 2).sum()\n")
KERNEL_PROBE = "import torch\nprint(float((torch.ones(3) * 2).sum()))"


def torch_footprint_mb(server: ForkServer) -> int | None:
    """The address space (MB) of the warm server's process, which every student process starts with; None when
    it cannot be read."""
    proc = server.proc
    try:
        pid = proc.pid if proc is not None else os.getpid()
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError):
        return None
    return None


def _exercise_jail(limits: Limits, sandbox, server: ForkServer) -> str | None:
    """Why an exercise's jail does not run a torch call, or None."""
    import torch
    try:
        with Template(limits, sandbox, server) as template:
            template.start()
            with WorkerSession([PROBE], template=template) as child:
                child.start()
                reply, _ = child.request("call", 30, name="probe", args=(torch.ones(3),), kwargs={})
    except WorkerFailure as exc:
        return str(exc)
    return None if "ok" in reply else str(reply.get("error") or reply.get("refused") or "no answer")


def _kernel_jail(limits: Limits, sandbox) -> str | None:
    """Why the notebook's kernel (the feedback shell, a jail of its own) does not run a torch cell, or None."""
    from graders.sandbox.shell_session import ShellSession, ShellStopped
    scratch = sandbox.scratch("kernel")
    try:
        work = os.path.join(scratch.name, "work")
        os.makedirs(work, exist_ok=True)
        with ShellSession(sandbox, scratch.name, work, {}, limits) as shell:
            ran = shell.run(KERNEL_PROBE, 30, 4096)
    except (ShellStopped, WorkerFailure) as exc:
        return str(exc)
    finally:
        scratch.cleanup()
    printed = "".join(str(o.get("text", "")) for o in ran.outputs)
    return None if "6.0" in printed else "the notebook's kernel could not run torch"


def problem(limits: Limits, sandbox, server: ForkServer | None = None) -> str | None:
    """None when a jail under ``limits`` (confined by ``sandbox``) runs a torch call, and so does the notebook's
    kernel; else one line naming the setting to change."""
    server = server or ForkServer.shared()
    why = _exercise_jail(limits, sandbox, server)
    if why is None and sandbox is not None:
        why = _kernel_jail(limits, sandbox)
    if why is None:
        return None
    need = torch_footprint_mb(server)
    have = limits.memory_bytes // 1024 ** 2
    torch_mb = torch_footprint().address_mb
    needs = f"; the warm server here maps {need} MB" if need else ""
    hint = "raise c.Sandbox.memory_mb in nbgrader_config.py" if need is None or need >= have * 0.8 else \
        "check the jail (vecgrade's docs/security.md) and c.Sandbox in nbgrader_config.py"
    return (f"a jail cannot run torch under the configured limits (c.Sandbox.memory_mb = {have - torch_mb}, "
            f"on top of torch's {torch_mb} MB of address space{needs}): {why}; {hint}")
