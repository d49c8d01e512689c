"""The student's kernel (what nbgrader's Execute runs the notebook in): confined, warm, interruptible.

As root it is forked from the warm server into a jail of its own; otherwise (or for a kernel
command that is not this Python's ipykernel) it starts through ``Sandbox.wrap``. Both ways run here.
"""
import ast
import asyncio
import os
import sys

import pytest
from traitlets.config import Config

from graders.pipeline import kernel
from graders.pipeline.kernel import SandboxedKernelManager, ipykernel_argv
from graders.sandbox.jail import FIRST_UID
from graders.sandbox.policy import Sandbox
from graders.sandbox.session import ForkServer, WorkerFailure

PROBE = """import os, signal, socket, sys
print({"uid": os.getuid(), "host": socket.gethostname(), "course": os.path.exists(COURSE),
       "alarm": signal.getsignal(signal.SIGALRM) == signal.SIG_DFL, "argv0": os.path.basename(sys.argv[0]),
       "forked": "graders.sandbox.worker" in sys.modules, "mode": os.environ.get("NBGRADER_EXECUTION")})
"""


async def _session(cwd, codes, interrupt_after=None, config=None, during=None):
    """Run ``codes`` one by one in a fresh sandboxed kernel; (stdout text, error names) per code.
    ``during(km)`` runs once the kernel is ready (a look at its scratch folder from the grader's side)."""
    km = SandboxedKernelManager(kernel_name="python3", **({"config": config} if config else {}))
    await km.start_kernel(cwd=str(cwd), env={**os.environ, "NBGRADER_EXECUTION": "autograde"})
    kc = km.client()
    kc.start_channels()
    results = []
    try:
        await kc.wait_for_ready(timeout=60)
        if during is not None:
            during(km)
        for code in codes:
            out, errors = [], []

            def hook(msg, out=out, errors=errors):
                if msg["msg_type"] == "stream":
                    out.append(msg["content"]["text"])
                elif msg["msg_type"] == "error":
                    errors.append(msg["content"]["ename"])

            run = asyncio.ensure_future(kc.execute_interactive(code, timeout=60, output_hook=hook))
            if interrupt_after is not None:
                await asyncio.sleep(interrupt_after)
                await km.interrupt_kernel()
            await run
            results.append(("".join(out), errors))
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
    return results


@pytest.fixture
def confined():
    box = Sandbox()
    if not box.status()[0]:
        pytest.skip(box.status()[1])


ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="kernels are forked from the warm server as root only")


@pytest.mark.parametrize("how", ["exec", pytest.param("forked", marks=ROOT_ONLY),
                                 pytest.param("server refuses", marks=ROOT_ONLY)])
def test_the_kernel_is_confined_either_way(confined, tmp_path, monkeypatch, how):
    course = tmp_path / "course"
    course.mkdir()
    if how == "exec":
        monkeypatch.setattr(kernel, "ipykernel_argv", lambda cmd: None)  # the command path, as without root
    if how == "server refuses":  # a server that cannot fork: the kernel starts as a new program instead

        def refuse(self, argv, jail_args):
            raise WorkerFailure("the student's kernel could not start")

        monkeypatch.setattr(ForkServer, "fork_kernel", refuse)
    code = PROBE.replace("COURSE", repr(str(course)))
    (tmp_path / "work").mkdir()
    [(out, errors)] = asyncio.run(_session(tmp_path / "work", [code]))
    assert errors == []
    report = ast.literal_eval(out.strip())
    assert report["forked"] is (how == "forked")  # control: each way really ran
    assert report["host"] == "sandbox" and report["course"] is False and report["mode"] == "autograde"
    assert report["alarm"] and report["argv0"] == "ipykernel_launcher.py"  # a kernel as `python -m` starts it
    if os.geteuid() == 0:
        assert report["uid"] >= FIRST_UID


@pytest.mark.skipif(os.geteuid() != 0, reason="kernels are forked from the warm server as root only")
def test_a_forked_kernel_can_be_interrupted_and_goes_on(confined, tmp_path):
    """nbgrader interrupts a cell past its time: the interrupt reaches the kernel, not the jail around it."""
    (tmp_path / "work").mkdir()
    results = asyncio.run(_session(tmp_path / "work", ["import time\ntime.sleep(60)"], interrupt_after=3))
    assert results[0][1] == ["KeyboardInterrupt"]
    # control: an uninterrupted cell raises nothing
    assert asyncio.run(_session(tmp_path / "work", ["x = 1\nprint(x)"]))[0] == ("1\n", [])


def test_only_this_pythons_ipykernel_is_forked():
    assert ipykernel_argv([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json"]) == ["-f", "c.json"]
    assert ipykernel_argv(["python3", "-m", "ipykernel_launcher", "-f", "c.json"]) == ["-f", "c.json"]
    assert ipykernel_argv(["/opt/other/bin/python", "-m", "ipykernel_launcher", "-f", "c.json"]) is None
    assert ipykernel_argv([sys.executable, "-m", "other_kernel", "-f", "c.json"]) is None


FILL = """import errno, os
written = 0
try:
    for i in range(100):
        with open(f"fill-{i}", "wb") as f:  # in its working copy, inside the scratch
            f.write(b"x" * (8 << 20))
        written += 8
except OSError as exc:
    print(written, errno.errorcode.get(exc.errno))
"""


@ROOT_ONLY
@pytest.mark.parametrize("how", ["exec", "forked"])
def test_the_kernel_writes_into_a_tmpfs_of_its_own_size_and_goes_on_when_it_is_full(confined, tmp_path,
                                                                                      monkeypatch, how):
    if how == "exec":
        monkeypatch.setattr(kernel, "ipykernel_argv", lambda cmd: None)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "data.csv").write_text("1,2\n")
    seen = {}

    def look(km):  # the grader's side: a mount of the size asked for, holding the copy and the sockets
        stats = os.statvfs(km.scratch.name)
        seen.update(mount=os.path.ismount(km.scratch.name), mb=stats.f_blocks * stats.f_frsize >> 20,
                    names=sorted(os.listdir(km.scratch.name)), scratch=km.scratch.name)

    config = Config({"Sandbox": {"scratch_mb": 40}})
    results = asyncio.run(_session(tmp_path / "work", [FILL, "print(open('data.csv').read().strip(), 'still here')"],
                                   config=config, during=look))
    # IPython's history thread may say, in either output, that it could not save into the full scratch
    assert "32 ENOSPC\n" in results[0][0] and results[0][1] == []  # 4 of 8 MB in 40 MB that hold the copy too
    assert "1,2 still here\n" in results[1][0] and results[1][1] == []  # the kernel goes on, its copy intact
    assert seen["mount"] and seen["mb"] == 40 and "connection.json" in seen["names"] and "work" in seen["names"]
    assert any(name.startswith("zmq") for name in seen["names"])  # the ZeroMQ sockets live there too
    assert not os.path.exists(seen["scratch"])  # unmounted and removed with the kernel
