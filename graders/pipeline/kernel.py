"""The kernel manager nbgrader's ``Execute`` uses: the student's kernel starts inside ``graders.sandbox.jail``.

The jail has no network, so the kernel talks to nbgrader over ZeroMQ's IPC
transport: Unix sockets in a folder of its own, the one writable place it is
given besides its scratch folder.
"""
from __future__ import annotations

import os
import shutil
import tempfile

from jupyter_client.manager import AsyncKernelManager

from graders.sandbox.jail import NOBODY
from graders.sandbox.policy import Sandbox


class SandboxedKernelManager(AsyncKernelManager):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sandbox = Sandbox(parent=self)
        self.confined, self.sandbox_status = self.sandbox.status()
        self.scratch = tempfile.TemporaryDirectory(prefix="vecgrade-kernel-")
        if self.confined:
            if os.geteuid() == 0:  # the kernel runs as nobody: its folder is its own, closed to others
                os.chown(self.scratch.name, NOBODY, NOBODY)
            self.transport = "ipc"
            self.ip = os.path.join(self.scratch.name, "zmq")

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        if self.confined:
            cwd = kw.get("cwd") or os.getcwd()
            # the kernel reads its connection file from its own folder, as its own user
            private = os.path.join(self.scratch.name, "connection.json")
            shutil.copyfile(self.connection_file, private)
            if os.geteuid() == 0:
                os.chown(private, NOBODY, NOBODY)
            kernel_cmd = [private if arg == self.connection_file else arg for arg in kernel_cmd]
            kernel_cmd = self.sandbox.wrap(kernel_cmd, scratch=self.scratch.name, cwd=cwd, expose=[cwd])
        self.log.info("vecgrade: student kernel %s", self.sandbox_status)
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            self.scratch.cleanup()
