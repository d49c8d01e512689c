"""Fork servers started early (graders.sandbox.launch): each grading process claims one at most once, a server
nobody claimed ends when the starter lets go, and none outlives the command."""
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from tests.testkit import ROOT

SCRIPT = textwrap.dedent("""
    import json, multiprocessing, os, sys
    from graders.sandbox import launch
    from graders.sandbox.processes import read_reply as _read

    def grading_process(queue):
        mine = launch.claim()
        if mine is None:
            queue.put(None)
            return
        ready = "ready" in _read(mine.control, 120, None)
        queue.put([mine.proc.pid, ready])
        mine.stop()

    started = int(sys.argv[1])
    launch.start_early(started)
    servers = [l.proc.pid for l in launch._early]
    own = launch.claim() if sys.argv[2] == "self" else None
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    children = [context.Process(target=grading_process, args=(queue,)) for _ in range(int(sys.argv[3]))]
    for child in children:
        child.start()
    launch.let_go()
    claims = [queue.get(timeout=180) for _ in children]
    for child in children:
        child.join()
    print(json.dumps({"servers": servers, "claims": claims, "own": own.proc.pid if own else None,
                      "second_own": launch.claim() is not None}))
    if own is not None:
        own.stop()
""")


def run(started: int, own: str, children: int) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(started), own, str(children)], capture_output=True,
                         text=True, timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.1)
    return False


def test_each_forked_process_claims_its_own_server_and_one_too_many_claims_none():
    found = run(2, "no", 3)
    claimed = [c[0] for c in found["claims"] if c is not None]
    assert sorted(claimed) == sorted(found["servers"])  # two distinct servers, each claimed once
    assert all(c[1] for c in found["claims"] if c is not None)  # and each was ready for its claimer
    assert found["claims"].count(None) == 1  # the third process launches its own
    assert gone(found["servers"])  # stopped by their claimers, reaped by the starter


def test_the_starting_process_claims_one_itself_and_an_unclaimed_server_ends_with_the_starter():
    found = run(2, "self", 0)
    assert found["own"] in found["servers"] and not found["second_own"]
    assert found["claims"] == []
    assert gone(found["servers"])  # the other server, claimed by nobody, ended when the starter let go


def test_killing_a_jail_starts_no_fork_server_when_none_runs(monkeypatch):
    """A template closed at exit, after its process's server was closed (exit handlers run last-registered first),
    once started a fresh server, torch imported, only to kill a jail that ended with the old one: 1.4 s at the end
    of every `vecgrade grade -s`."""
    from graders.sandbox.server_handle import ForkServer

    def started(self):
        raise AssertionError("a fork server was started")

    monkeypatch.setattr(ForkServer, "_start", started)
    server = ForkServer()
    server.kill(4_000_000)  # no server: nothing to kill, none started
    # control: the patch does catch a server's start
    with pytest.raises(AssertionError, match="started"):
        server.start()
