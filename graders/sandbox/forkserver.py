"""The warm process that starts every student's confined template: torch is imported once per grading process.

    python -m graders.sandbox.forkserver FD

Started by the grader (``graders.sandbox.server_handle.ForkServer``) as a program
of its own, with a minimal environment: it holds none of the grader's memory
(no solution, no gradebook address, no secret). It imports torch and the
worker's counting machinery and warms them up once; then, for each student,
it forks a process that enters a jail of its own (``graders.sandbox.jail.enter``:
fresh namespaces, allowlisted root, a user of its own, rlimits, minimal
environment) and becomes that student's template (``graders.sandbox.worker``).
A student's process thus starts warm, in the same confinement as one started
through ``unshare``, and shares nothing writable with the server or with
another student. The server runs no student code itself.

The notebook's feedback shell (``graders.sandbox.shell``: the cells run as in
a kernel, their outputs recorded for feedback) starts the same way: a fork
that enters a jail of its own, IPython and torch already imported.

The course's reference program, which is trusted, starts warm from the same
server without a jail (its own session, rlimits and scratch folder).

Requests on the control socket: ``template`` (the template's socket comes
with it; no ``jail``: a trusted one), ``shell`` (its socket comes with it); the reply is the pid of the
process outside the new jail, which is the handle for ``kill`` (killing it
kills the whole jail; the reply comes once SIGKILL is sent to it, and the jail
is reaped and its cgroup removed right after, while the grader goes on). The
server exits when the grader closes the control socket; every jail it started
dies with it, and their cgroups are removed.
"""
from __future__ import annotations

import ctypes
import functools
import gc
import os
import select
import signal
import socket
from typing import Callable

from graders.sandbox import cgroup, jail, shell, worker
from graders.sandbox.exits import ProcessExit
from graders.sandbox.protocol import Killed, Op, Role, Started, dispatch, encode_reply, hello, serve_requests
from graders.sandbox.spec import JailSpec, Limits, Where, environment
from graders.sandbox.wire import send_frame


def _detach(control: socket.socket, fd: int | None) -> None:
    """In the fork: a session of its own, dying with the server, holding only its own socket (if any)."""
    ctypes.CDLL(None, use_errno=True).prctl(jail.PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with the server
    os.setsid()
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the warm-up's cell-budget handler is not the student's
    control.close()
    if fd is None:
        os.closerange(3, 1 << 20)
    else:
        os.closerange(3, fd)
        os.closerange(fd + 1, 1 << 20)


def _into_jail(spec: JailSpec, body: Callable[[], None]) -> None:
    """Enter a fresh jail and run ``body`` there (a student's template or feedback shell)."""
    jail.enter(spec, body)


def _trusted(cwd: str, limits: dict, body: Callable[[], None]) -> None:
    """Run ``body`` without a jail (the course's own reference program), in ``cwd``, under ``limits``."""
    os.chdir(cwd)
    env = environment(Where.OUTSIDE, cwd)  # what the server itself was started with, its HOME and TMPDIR now cwd
    os.environ.clear()
    os.environ.update(env)
    Limits(**limits).apply()
    body()


def _template(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    send_frame(sock, encode_reply(hello(0.0)))
    worker.template(sock)


def _shell(fd: int) -> None:
    shell.serve(socket.socket(fileno=fd))


def _kill(pid: int) -> None:
    """Kill a child's group (the process outside a jail: PID 1 and all inside follow it; or a trusted
    template and the children it forked)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _end(pid: int) -> None:
    """Kill a child's group, reap it, and remove its jail's cgroup."""
    _kill(pid)
    os.waitpid(pid, 0)
    cgroup.release(pid)


def _reap(children: set[int]) -> None:
    """Reap the jails that have ended (by themselves, or killed), each with its cgroup removed."""
    for pid in list(children):
        if os.waitpid(pid, os.WNOHANG)[0]:
            children.discard(pid)
            cgroup.release(pid)


REAP_EVERY = 0.02  # seconds: how often a killed jail not yet gone is looked at while no request comes


def serve(control: socket.socket) -> None:
    children: set[int] = set()
    try:
        _serve(control, children)
    finally:
        for pid in children:  # the grader is gone: so are the jails it asked for
            _end(pid)


def _serve(control: socket.socket, children: set[int]) -> None:
    killed: set[int] = set()  # killed, not reaped yet: their exit and cgroup are waited for between requests

    def between() -> None:
        # after each reply: the jails that ended by themselves (each removed its own group) or were killed; a
        # killed jail is reaped (and its cgroup removed) while the grader goes on: a jail ending takes tens of
        # milliseconds (its address space unmapped, its group removed) that no grader waits for
        _reap(children)
        killed.intersection_update(children)
        while killed and not select.select([control], [], [], REAP_EVERY)[0]:
            _reap(children)
            killed.intersection_update(children)

    def fork(op: Op, payload: dict, fds: list[int]) -> Started | None:
        if len(fds) != 1:
            return None
        fd = fds[0]
        body = functools.partial(_template if op is Op.TEMPLATE else _shell, fd)
        pid = os.fork()
        if pid == 0:
            try:
                _detach(control, fd)
                if payload.get("jail") is None and op is Op.TEMPLATE:
                    _trusted(str(payload["cwd"]), dict(payload["limits"]), body)
                else:
                    _into_jail(JailSpec.from_wire(payload["jail"]), body)
            finally:
                os._exit(ProcessExit.SERVED_FORK_FAILED)
        os.close(fd)
        children.add(pid)
        return {"pid": pid}

    def kill(payload: dict, fds: list[int]) -> Killed | None:
        pid = int(payload["pid"])
        if pid not in children:
            return None
        _kill(pid)  # SIGKILL sent to its whole group before the reply: nothing in it runs again
        killed.add(pid)
        return {"killed": True}

    serve_requests(control, dispatch(Role.FORK_SERVER, {
        Op.TEMPLATE: functools.partial(fork, Op.TEMPLATE), Op.SHELL: functools.partial(fork, Op.SHELL),
        Op.KILL: kill}), between)


def main() -> None:
    control = worker.warm_start(shell.warm_up)  # the feedback shells' IPython, paid once
    # what the server holds now is for good: the collector of a forked process never walks it, so the pages stay
    # shared with the server instead of being copied into every jail
    gc.freeze()
    serve(control)  # returns once the grader is gone and every jail it asked for has ended
    # nothing else to give back: skip the interpreter's teardown of torch (0.8 s the grader waits for)
    os._exit(ProcessExit.OK)


if __name__ == "__main__":
    main()
