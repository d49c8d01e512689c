"""The kernel manager nbgrader's ``Execute`` uses: the student's kernel starts inside ``graders.sandbox.jail``.

The kernel works in a PRIVATE copy of the notebook's folder (regular files
only, within the ``Intake`` caps, without the notebooks and the names nbgrader
ignores, as nbgrader's own autograde leaves them out; see
``graders.pipeline.intake``), inside its own scratch folder, never in a folder
of ``autograded/``: nothing it writes reaches the course, and nothing of the
course but that copy is reachable from it. As root that scratch folder is a
tmpfs of ``Sandbox.scratch_mb`` on the host: the jail writes there (ENOSPC past
its size) and the grader still reaches the sockets and connection file in it.

The jail has no network, so the kernel talks to nbgrader over ZeroMQ's IPC
transport: Unix sockets in its scratch folder, the one writable place it has.
When confinement is asked for and unavailable, starting the kernel raises
``SandboxUnavailableError``: the notebook is not graded (see ``Sandbox.check``).

As root, an ipykernel is forked from the process's warm ``ForkServer`` (torch
already imported) into a jail of its own, instead of starting a new Python
through ``Sandbox.wrap``: the same confinement, without paying ``import
torch`` per student.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys

from jupyter_client.manager import AsyncKernelManager
from nbgrader.coursedir import CourseDirectory

from graders.pipeline.intake import Intake, copy_regular_files
from graders.sandbox import cgroup
from graders.sandbox.jail import PASSED_ENV
from graders.sandbox.policy import Sandbox
from graders.sandbox.session import ForkServer, WorkerFailure


def ipykernel_argv(kernel_cmd: list[str]) -> list[str] | None:
    """The arguments of a ``python -m ipykernel_launcher ...`` command on this Python, else None."""
    if len(kernel_cmd) >= 3 and kernel_cmd[1:3] == ["-m", "ipykernel_launcher"] and (
            kernel_cmd[0] in (sys.executable, "python", "python3")):  # jupyter_client's bare name is this Python
        return kernel_cmd[3:]
    return None


class ForkedKernel:
    """What jupyter_client's provisioner uses of ``subprocess.Popen``, for a kernel the warm server forked.

    The kernel's jail is the server's child, not this process's: it is watched through a pidfd,
    and its exit status is not known here (``returncode`` is 0 once it has ended)."""

    stdin = stdout = stderr = None

    def __init__(self, server: ForkServer, pid: int):
        self.server, self.pid = server, pid
        self.pidfd: int | None = os.pidfd_open(pid)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self.pidfd is not None and select.select([self.pidfd], [], [], 0)[0]:
            self.returncode = 0
            os.close(self.pidfd)
            self.pidfd = None
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.pidfd is not None and not select.select([self.pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(["ipykernel"], timeout or 0)
        return self.poll() or 0

    def send_signal(self, signum: int) -> None:
        if self.pidfd is not None:
            signal.pidfd_send_signal(self.pidfd, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.server.kill(self.pid)


class SandboxedKernelManager(AsyncKernelManager):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sandbox = Sandbox(parent=self)
        self.confined, self.sandbox_status = self.sandbox.status()
        self.scratch = self.sandbox.scratch("kernel")
        self.jail_pid: int | None = None  # a kernel started as a program: its jail's cgroup is released here
        if self.confined:
            self.transport = "ipc"
            self.ip = os.path.join(self.scratch.name, "zmq")

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        self.log.info("vecgrade: student kernel %s", self.sandbox_status)
        if self.sandbox.check():  # raises SandboxUnavailableError: no kernel runs unconfined by accident
            work = os.path.join(self.scratch.name, "work")
            skip = [*CourseDirectory(config=self.config).ignore, "*.ipynb"]  # what nbgrader does not copy either
            copy_regular_files(kw.get("cwd") or os.getcwd(), work, Intake(config=self.config), skip)
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
            env = {k: v for k, v in (kw.get("env") or os.environ).items() if k in ("PATH", *PASSED_ENV)}
            argv = ipykernel_argv(kernel_cmd)
            if os.geteuid() == 0 and argv is not None:
                jail = self.sandbox.jail_args(self.scratch.name, cwd=work, uid=uid)
                jail += [f"--env={k}={v}" for k, v in env.items() if k in PASSED_ENV]
                try:
                    return self._forked(argv, jail)
                except WorkerFailure:  # the server could not provide one: start a new program instead
                    self.log.warning("vecgrade: the warm server could not start the kernel; starting a new one")
            kernel_cmd = self.sandbox.wrap(kernel_cmd, scratch=self.scratch.name, cwd=work, uid=uid)
            kw["cwd"] = self.scratch.name
            kw["env"] = env
            # without a parent pid (meaningless in its own PID namespace) ipykernel prints its
            # "Ctrl-C will not work" banner to stdout, which is the grader's terminal
            kw["stdout"] = subprocess.DEVNULL
            info = await super()._async_launch_kernel(kernel_cmd, **kw)
            self.jail_pid = getattr(self.provisioner, "pid", None)
            return info
        return await super()._async_launch_kernel(kernel_cmd, **kw)

    def _forked(self, argv: list[str], jail: list[str]) -> None:
        """Start the kernel from the warm server and hand its process to the provisioner."""
        server = ForkServer.shared()
        pid = server.fork_kernel(argv, jail)
        provisioner = self.provisioner
        assert provisioner is not None, "jupyter_client makes the provisioner before launching"
        provisioner.process = ForkedKernel(server, pid)  # type: ignore[attr-defined]
        provisioner.pid = provisioner.pgid = pid  # type: ignore[attr-defined]  # its own session: pgid is pid
        provisioner.cwd = self.scratch.name  # type: ignore[attr-defined]
        self._reconcile_connection_info(provisioner.connection_info)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if self.jail_pid is not None:
            cgroup.release(self.jail_pid)
            self.jail_pid = None
        if not restart:
            self.scratch.cleanup()
