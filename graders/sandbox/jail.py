"""Run one command confined: its own mount, network and PID namespaces, an unprivileged user, rlimits.

    python -m graders.sandbox.jail [--expose PATH] [--expose-rw PATH] [--hide PATH] [--cwd DIR]
                           [--memory-mb N] [--cpu-s N] [--file-mb N] [--nproc N] -- COMMAND...

The command sees the machine's system files, but every ``--hide`` folder
(the course, the kit, /tmp, home folders) is replaced by an empty tmpfs, with
only the ``--expose`` paths (read-only: the Python install, the ``graders``
package, a connection file) and ``--expose-rw`` paths (its scratch folder)
put back. It has no network interface at all, sees only its own processes,
and runs as ``nobody`` when the grader is root. Without root it uses a user
namespace (same protections, but it stays the grader's user inside it).

The first stage re-executes itself under ``unshare``; the second stage (PID 1
of the new namespace, still privileged there) makes the mounts, sets the
limits, drops privileges and ``exec``s the command.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys

NOBODY = 65534
STAGE = "/mnt"


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _mkdirs(path: str, is_file: bool) -> None:
    parent = os.path.dirname(path) if is_file else path
    os.makedirs(parent, exist_ok=True)
    if is_file and not os.path.exists(path):
        open(path, "w").close()


def confine(args: argparse.Namespace) -> None:
    """Inside the namespaces: hide, re-expose, limit, drop privileges."""
    _run("mount", "--make-rprivate", "/")
    exposes = [(p, False) for p in args.expose if os.path.exists(p)]
    exposes += [(p, True) for p in args.expose_rw if os.path.exists(p)]
    # 1. park every path to re-expose on a staging tmpfs, before its parent disappears
    _run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", STAGE)
    staged = []
    for i, (path, writable) in enumerate(exposes):
        is_file = os.path.isfile(path)
        stage = os.path.join(STAGE, str(i))
        _mkdirs(stage, is_file)
        _run("mount", "--bind", path, stage)
        staged.append((path, stage, writable, is_file))
    # 2. hide whole folders behind empty tmpfs
    for path in args.hide:
        if os.path.isdir(path) and not path.startswith(STAGE):
            _run("mount", "-t", "tmpfs", "-o", "size=64m,mode=755", "tmpfs", path)
    # 3. put the exposed paths back where they were, read-only unless asked otherwise
    for path, stage, writable, is_file in staged:
        _mkdirs(path, is_file)
        _run("mount", "--move", stage, path)
        if not writable:
            _run("mount", "-o", "remount,bind,ro", path)
    limits = ((resource.RLIMIT_AS, args.memory_mb * 1024 ** 2), (resource.RLIMIT_CPU, args.cpu_s),
              (resource.RLIMIT_FSIZE, args.file_mb * 1024 ** 2), (resource.RLIMIT_CORE, 0))
    for what, value in limits:
        resource.setrlimit(what, (value, value))
    if os.geteuid() == 0 and not args.userns:
        resource.setrlimit(resource.RLIMIT_NPROC, (args.nproc, args.nproc))
        for path, _, writable, _ in staged:
            if writable:
                os.chown(path, NOBODY, NOBODY)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    os.chdir(args.cwd or "/")
    if args.home:
        os.environ.update(HOME=args.home, TMPDIR=args.home, IPYTHONDIR=os.path.join(args.home, ".ipython"))
    os.execvp(args.command[0], args.command)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m graders.sandbox.jail", description=__doc__.splitlines()[0])
    p.add_argument("--expose", action="append", default=[])
    p.add_argument("--expose-rw", action="append", default=[])
    p.add_argument("--hide", action="append", default=[])
    p.add_argument("--cwd")
    p.add_argument("--home", help="HOME and TMPDIR of the command (its scratch folder)")
    p.add_argument("--memory-mb", type=int, default=6144)
    p.add_argument("--cpu-s", type=int, default=300)
    p.add_argument("--file-mb", type=int, default=16)
    p.add_argument("--nproc", type=int, default=256)
    p.add_argument("--userns", action="store_true", help="not root: map the grader's user to root in a user namespace")
    p.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("command", nargs=argparse.REMAINDER)
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        sys.exit("graders.sandbox.jail: no command given")
    if args.inside:
        confine(args)
    argv = list(sys.argv[1:] if argv is None else argv)
    unshare = ["unshare", "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]
    if args.userns:
        unshare[1:1] = ["--user", "--map-root-user"]
    os.execvp(unshare[0], unshare + [sys.executable, "-m", "graders.sandbox.jail", "--inside"] + argv)


if __name__ == "__main__":
    main()
