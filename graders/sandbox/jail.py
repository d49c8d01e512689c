"""Run one command confined: its own mount, network, PID, IPC and UTS namespaces, a fresh root, rlimits.

    python -m graders.sandbox.jail [--expose PATH] [--expose-rw PATH] [--hide PATH] [--cwd DIR] [--home DIR]
                           [--env NAME=VALUE] [--memory-mb N] [--cpu-s N] [--file-mb N] [--nproc N]
                           [--pids N] [--cgroup] -- COMMAND...

The command's file system is built from an ALLOWLIST, not by hiding paths:
a fresh tmpfs root that holds only the system's programs and libraries
(``/usr`` and its top-level links), a few files of ``/etc``, a minimal
``/dev``, its own ``/proc``, empty private ``/tmp``, ``/dev/shm`` and ``/run``,
and the ``--expose`` paths (read-only: the Python install, the ``graders``
package, ...) and ``--expose-rw`` paths (its own scratch folder). Nothing
else of the machine exists there, so a folder nobody thought of listing
(another checkout, the course, a home folder) cannot be read. ``--hide``
paths are emptied even inside an exposed folder.

It has no network interface, its own SysV IPC objects (nothing one student
leaves in shared memory is seen by the next) and host name, sees only its own
processes, and runs as ``nobody`` when the grader is root. Without root it uses
a user namespace (same protections, but it stays the grader's user inside it).
Its environment is rebuilt from scratch (``graders.sandbox.spec.environment``): PATH, LANG,
HOME/TMPDIR, the few ``PASSED_ENV`` settings and the ``--env`` values, never the grader's other
variables (which may hold secrets).

Its settings are a ``graders.sandbox.spec.JailSpec``: given as data by the fork server (``enter``),
or as this command line (``parser``, whose defaults are the spec's) to a jail started as a program.

Limits: each process has rlimits (address space ``--address-mb``, else ``--memory-mb``, CPU time, file size, and
processes of the jail's own user). With ``--cgroup`` the jail as a whole is also held to
``--memory-mb`` of memory and ``--pids`` tasks (processes and threads): its first process makes a
control group of its own (``graders.sandbox.cgroup``) and moves itself into it before anything
else, so every process of the jail is counted there.

The first stage re-executes itself under ``unshare``; the second stage is PID 1
of the new namespace: it builds the root, then forks the command and stays as
a small init that reaps orphans and exits with the command's status. The
student's code is never PID 1, so it cannot ignore the signals the grader sends.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
from typing import Callable, NoReturn, Sequence

from graders.sandbox import cgroup
from graders.sandbox.exits import ProcessExit
from graders.sandbox.spec import MB, NOBODY, PASSED_ENV, JailSpec, Where, environment

__all__ = ["FIRST_UID", "NOBODY", "PASSED_ENV", "enter", "main", "parser", "spec_of", "unshare_command"]
FIRST_UID = 100_000  # per-jail users start here, above the system's own users
ROOT = "/mnt"  # the new root's mount point, in the jail's private mount namespace
SYSTEM = ("/usr",)  # programs and shared libraries; /bin, /lib, /lib64, /sbin are links into it here
ETC = ("passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
       "alternatives", "fonts", "ssl", "mime.types", "hosts")
DEVICES = ("null", "zero", "full", "random", "urandom")
NAMESPACES = ("--mount", "--net", "--pid", "--ipc", "--uts")
# the same namespaces as clone flags, for ``enter`` (linux/sched.h)
CLONE_FLAGS = 0x00020000 | 0x40000000 | 0x20000000 | 0x08000000 | 0x04000000  # NEWNS NEWNET NEWPID NEWIPC NEWUTS
PR_SET_PDEATHSIG = 1


SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # util-linux's tools, whatever PATH the grader had
# mount(2) flags (linux/mount.h): the jail's root is built with the system calls themselves, not with util-linux's
# programs, so that a jail costs a few milliseconds rather than one process per mount
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
MNT_DETACH = 2
# the flags a read-only remount must keep (in a user namespace they are locked; elsewhere keeping them is harmless)
_KEPT = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
         (os.ST_NODIRATIME, MS_NODIRATIME),
         (os.ST_RELATIME, MS_RELATIME))
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "i686": 217, "armv7l": 218, "riscv64": 41}  # SYS_pivot_root
_libc = ctypes.CDLL(None, use_errno=True)


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={"PATH": SYSTEM_PATH})


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    if _libc.mount(raw(source), raw(target), raw(fstype), ctypes.c_ulong(flags), raw(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source or ''} on {target}: {os.strerror(errno)}")


def _read_only(target: str, extra: int = 0) -> None:
    """Remount the bind mount at ``target`` read-only (the flags it already has kept)."""
    have = os.statvfs(target).f_flag
    kept = sum(flag for st, flag in _KEPT if have & st)
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | extra | kept)


def _bind(source: str, target: str, writable: bool = False) -> None:
    """Mount ``source`` at ``target`` (inside the new root), read-only unless asked otherwise."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if not writable:
        _read_only(target, MS_NOSUID | MS_NODEV)


def _tmpfs(target: str, size: str, mode: str = "1777") -> None:
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")


def _pivot_root(new_root: str, put_old: str) -> None:
    number = PIVOT_ROOT.get(os.uname().machine)
    if number is None:  # a machine whose system call number is not listed here: util-linux's program
        _run("pivot_root", new_root, put_old)
    elif _libc.syscall(ctypes.c_long(number), new_root.encode(), put_old.encode()) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"pivot_root: {os.strerror(errno)}")


def build_root(spec: JailSpec) -> None:
    """Make the allowlisted file system at ROOT and switch to it."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _tmpfs(ROOT, "16m", "755")
    inside = lambda path: ROOT + os.path.realpath(path)  # noqa: E731 - one-line path mapping
    for path in SYSTEM:
        _bind(path, inside(path))
    for name in ("bin", "lib", "lib32", "lib64", "sbin", "libx32"):  # merged-/usr links, as on the host
        if os.path.islink("/" + name):
            os.symlink(os.readlink("/" + name), os.path.join(ROOT, name))
        elif os.path.isdir("/" + name):
            _bind("/" + name, inside("/" + name))
    for name in ETC:
        if os.path.exists(os.path.join("/etc", name)):
            _bind(os.path.join("/etc", name), os.path.join(ROOT, "etc", name))
    _tmpfs(os.path.join(ROOT, "dev"), "1m", "755")
    for name in DEVICES:
        _bind(os.path.join("/dev", name), os.path.join(ROOT, "dev", name), writable=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(ROOT, "dev", name))
    for path, size in (("/tmp", "64m"), ("/dev/shm", "64m"), ("/run", "1m")):
        _tmpfs(ROOT + path, size)
    os.makedirs(ROOT + "/run/lock", mode=0o1777, exist_ok=True)
    os.chmod(ROOT + "/run/lock", 0o1777)
    for path in spec.expose:
        if os.path.exists(path):
            _bind(path, inside(path))
    for path in spec.expose_rw:
        if os.path.exists(path):
            _bind(path, inside(path), writable=True)
    for path in spec.hide:
        if os.path.isdir(inside(path)):
            _tmpfs(inside(path), "1m", "755")
    os.makedirs(os.path.join(ROOT, "proc"), exist_ok=True)
    old = os.path.join(ROOT, ".old")
    os.makedirs(old)
    os.chdir(ROOT)
    _pivot_root(".", ".old")
    os.chroot(".")
    os.chdir("/")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if _libc.umount2(b"/.old", MNT_DETACH) != 0:
        raise OSError(ctypes.get_errno(), "umount /.old")
    os.rmdir("/.old")
    _read_only("/")  # the root's own tmpfs: nothing new can be made there


def drop_privileges(spec: JailSpec) -> None:
    """The spec's rlimits, then (root, no user namespace) the jail's own user: RLIMIT_NPROC counts every
    process of the user on the host, so a user of its own per jail keeps one student's fork bomb from
    starving another student's processes."""
    spec.rlimits()
    if os.geteuid() == 0 and not spec.userns:
        os.setgroups([])
        os.setgid(spec.uid)
        os.setuid(spec.uid)


def run_as_init(spec: JailSpec, command: Sequence[str], body: Callable[[], None] | None = None) -> None:
    """PID 1: start the command, pass on the grader's signals, reap everything, exit as the command did.

    ``body``: run it in the confined process instead of executing ``command`` (see ``enter``)."""
    child = os.fork()
    if child == 0:
        drop_privileges(spec)
        os.chdir(spec.cwd or spec.home or "/")
        env = environment(Where.INSIDE, spec.home or "/tmp", spec.env)
        if body is None:
            os.execvpe(command[0], list(command), env)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # the jail's TMPDIR, not the one the warm process cached
        try:
            body()
        finally:
            os._exit(ProcessExit.OK)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, lambda signum, _frame: os.kill(child, signum))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt reaches the command through its process group
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(ProcessExit.FAILED)
        except InterruptedError:
            continue
        if pid == child:
            os._exit(os.waitstatus_to_exitcode(status) % 256)


def confine(spec: JailSpec, command: Sequence[str], body: Callable[[], None] | None = None) -> None:
    """Inside the namespaces, as PID 1: build the root, then run the command under a small init."""
    for path in spec.expose_rw:  # the command's own folders, owned by the user it runs as
        if os.path.exists(path) and os.geteuid() == 0 and not spec.userns:
            os.chown(path, spec.uid, spec.uid)
    build_root(spec)
    socket.sethostname("sandbox")  # its own UTS namespace: the host's name is not the student's business
    run_as_init(spec, command, body)


def enter(spec: JailSpec, body: Callable[[], None]) -> NoReturn:
    """The same jail without a new program: this process makes the namespaces itself and ``body`` runs
    as the confined command. For a warm, single-threaded fork of ``graders.sandbox.forkserver``, which
    imported torch once: the student's process starts with what the server loaded, and nothing else.

    Like ``unshare --fork --kill-child``: this process stays outside, waits, and exits as PID 1 did;
    killing it kills PID 1 and so every process of the jail. With ``--cgroup`` it makes the jail's
    group first, leaves it once PID 1 (forked inside it) runs, and removes it when the jail has ended."""
    group = None
    if spec.cgroup:
        try:
            group = cgroup.JailGroup.create(spec.memory_mb * MB, spec.pids)
        except OSError:
            os._exit(ProcessExit.NO_CGROUP)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_FLAGS) != 0:
        os._exit(ProcessExit.NO_NAMESPACES)
    init = os.fork()
    if init == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        try:
            if group is not None:
                group.close_fds()  # no descriptor of the cgroup tree reaches student code
            confine(spec, (), body)
        finally:
            os._exit(ProcessExit.NOT_CONFINED)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for the command (same process group)
    if group is not None:
        group.leave()  # PID 1 and all it forks stay counted; this process is not the jail's
    while True:
        try:
            _, status = os.waitpid(init, 0)
            break
        except InterruptedError:
            continue
    if group is not None:
        group.remove()
    os._exit(os.waitstatus_to_exitcode(status) % 256)


def parser() -> argparse.ArgumentParser:
    """The jail's command line; each option is a ``JailSpec`` field, and its default the spec's."""
    p = argparse.ArgumentParser(prog="python -m graders.sandbox.jail", description=__doc__.splitlines()[0])
    p.add_argument("--expose", action="append", default=[])
    p.add_argument("--expose-rw", action="append", default=[])
    p.add_argument("--hide", action="append", default=[])
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the command's environment")
    p.add_argument("--cwd")
    p.add_argument("--home", help="HOME and TMPDIR of the command (its scratch folder)")
    p.add_argument("--memory-mb", type=int, default=JailSpec.memory_mb,
                   help="the jail's cgroup; also the address space without --address-mb")
    p.add_argument("--address-mb", type=int, default=JailSpec.address_mb,
                   help="the address-space limit of each process (0: --memory-mb)")
    p.add_argument("--cpu-s", type=int, default=JailSpec.cpu_s)
    p.add_argument("--file-mb", type=int, default=JailSpec.file_mb)
    p.add_argument("--nproc", type=int, default=JailSpec.nproc)
    p.add_argument("--pids", type=int, default=JailSpec.pids, help="tasks of the whole jail (with --cgroup)")
    p.add_argument("--cgroup", action="store_true",
                   help="a control group for the jail as a whole: --memory-mb of memory, --pids tasks")
    p.add_argument("--uid", type=int, default=JailSpec.uid, help="the user (and group) the command runs as, when root")
    p.add_argument("--userns", action="store_true", help="not root: map the grader's user to root in a user namespace")
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("command", nargs=argparse.REMAINDER)
    return p


def unshare_command(userns: bool) -> list[str]:
    """The ``unshare`` call that makes the jail's namespaces (also used to probe whether they work)."""
    cmd = ["unshare", *NAMESPACES, "--fork", "--kill-child"]
    if userns:
        cmd[1:1] = ["--user", "--map-root-user"]
    return cmd


def _refuse(why: str) -> NoReturn:
    print(f"graders.sandbox.jail: {why}", file=sys.stderr)
    sys.exit(ProcessExit.FAILED)


def spec_of(args: argparse.Namespace) -> JailSpec:
    """The spec that ``parser``'s options name (``JailSpec.to_argv`` renders it back)."""
    return JailSpec(memory_mb=args.memory_mb, address_mb=args.address_mb, cpu_s=args.cpu_s, file_mb=args.file_mb,
                    nproc=args.nproc,
                    pids=args.pids, uid=args.uid, cgroup=args.cgroup, userns=args.userns, cwd=args.cwd,
                    home=args.home, expose=tuple(args.expose), expose_rw=tuple(args.expose_rw),
                    hide=tuple(args.hide), env=tuple(args.env))


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        _refuse("no command given")
    try:
        spec = spec_of(args)
    except ValueError as exc:
        _refuse(str(exc))
    if args.inside:
        confine(spec, command)
    if spec.cgroup:  # this process becomes ``unshare``, which lives as long as the jail: the group's owner
        try:
            cgroup.JailGroup.create(spec.memory_mb * MB, spec.pids)
        except OSError as exc:
            _refuse(f"cannot make the jail's cgroup: {exc}")
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = unshare_command(spec.userns)
    os.execvp(cmd[0], cmd + [sys.executable, "-m", "graders.sandbox.jail", "--inside"] + argv)


if __name__ == "__main__":
    main()
