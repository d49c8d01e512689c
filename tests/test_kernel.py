"""The student's kernel (what nbgrader's Execute runs the notebook in): confined, warm, interruptible.

As root it is forked from the warm server into a jail of its own; otherwise (or for a kernel
command that is not this Python's ipykernel) it starts through ``Sandbox.wrap``. Both ways run here.
"""
import ast
import asyncio
import os
import sys

import pytest

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


async def _session(cwd, codes, interrupt_after=None):
    """Run ``codes`` one by one in a fresh sandboxed kernel; (stdout text, error names) per code."""
    km = SandboxedKernelManager(kernel_name="python3")
    await km.start_kernel(cwd=str(cwd), env={**os.environ, "NBGRADER_EXECUTION": "autograde"})
    kc = km.client()
    kc.start_channels()
    results = []
    try:
        await kc.wait_for_ready(timeout=60)
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
