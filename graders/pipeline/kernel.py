"""The kernel manager nbgrader's ``Execute`` uses: the student's kernel starts inside ``graders.sandbox.jail``.

The kernel works in a PRIVATE copy of the notebook's folder (regular files
only, see ``graders.pipeline.intake``), inside its own scratch folder, never in
a folder of ``autograded/``: nothing it writes reaches the course, and nothing
of the course but that copy is reachable from it.

The jail has no network, so the kernel talks to nbgrader over ZeroMQ's IPC
transport: Unix sockets in its scratch folder, the one writable place it has.
When confinement is asked for and unavailable, starting the kernel raises
``SandboxUnavailableError``: the notebook is not graded (see ``Sandbox.check``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from jupyter_client.manager import AsyncKernelManager

from graders.pipeline.intake import copy_regular_files
from graders.sandbox.jail import PASSED_ENV
from graders.sandbox.policy import Sandbox


class SandboxedKernelManager(AsyncKernelManager):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sandbox = Sandbox(parent=self)
        self.confined, self.sandbox_status = self.sandbox.status()
        self.scratch = tempfile.TemporaryDirectory(prefix="vecgrade-kernel-")
        if self.confined:
            self.transport = "ipc"
            self.ip = os.path.join(self.scratch.name, "zmq")

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        self.log.info("vecgrade: student kernel %s", self.sandbox_status)
        if self.sandbox.check():  # raises SandboxUnavailableError: no kernel runs unconfined by accident
            work = os.path.join(self.scratch.name, "work")
            copy_regular_files(kw.get("cwd") or os.getcwd(), work)
            # the kernel reads its connection file from its own folder, as its own user
            private = os.path.join(self.scratch.name, "connection.json")
            shutil.copyfile(self.connection_file, private)
            uid = self.sandbox.fresh_uid()  # the kernel's own user: nothing it makes is another student's
            if os.geteuid() == 0:
                for dirpath, _, filenames in os.walk(self.scratch.name):
                    os.chown(dirpath, uid, uid)
                    for name in filenames:
                        os.chown(os.path.join(dirpath, name), uid, uid)
            kernel_cmd = [private if arg == self.connection_file else arg for arg in kernel_cmd]
            kernel_cmd = self.sandbox.wrap(kernel_cmd, scratch=self.scratch.name, cwd=work, uid=uid)
            kw["cwd"] = self.scratch.name
            kw["env"] = {k: v for k, v in (kw.get("env") or os.environ).items() if k in ("PATH", *PASSED_ENV)}
            # without a parent pid (meaningless in its own PID namespace) ipykernel prints its
            # "Ctrl-C will not work" banner to stdout, which is the grader's terminal
            kw["stdout"] = subprocess.DEVNULL
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            self.scratch.cleanup()
