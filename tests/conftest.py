"""Shared fixtures: the course's definitions, PostgreSQL, Dask and the browser; the markers' rules.

Helpers that tests import (a program, a generated course, the demo class) are in ``tests.testkit``."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from graders.model.exercise import load_assignment

from tests.testkit import ROOT, admin_tool


@pytest.fixture(scope="session")
def broadcasting():
    return load_assignment(ROOT / "assignments" / "broadcasting.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    pytest.fail("PostgreSQL's initdb is missing: `apt-get install postgresql` (Debian), or run `make test` as root")


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL cluster in a temporary folder, run by an unprivileged user; stopped at the end."""
    bindir = _postgres_bin()
    folder = Path(tempfile.mkdtemp(prefix="vecgrade-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        os.chmod(folder, 0o755)
        os.chown(folder, 65534, 65534)
        as_user = [admin_tool("runuser"), "-u", "nobody", "--"]
    data, port = folder / "data", _free_port()
    ctl = as_user + [str(bindir / "pg_ctl"), "-D", str(data), "-w"]
    try:
        subprocess.run(as_user + [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "vecgrade",
                                  "--no-sync"], check=True, capture_output=True)
        subprocess.run(ctl + ["-l", str(folder / "log"), "-o",
                              f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True)
        yield f"postgresql+psycopg2://vecgrade@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(ctl + ["-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        p.terminate()
    for p in processes:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope="session")
def dask_scheduler():
    """A Dask scheduler and two single-threaded workers, each its own process on localhost; stopped at the end."""
    from distributed import Client
    dask = str(Path(sys.executable).with_name("dask"))
    address = f"tcp://127.0.0.1:{_free_port()}"
    # the tests folder on the path: a test may send a task whose step is a test helper (DieOnce); the root, for the
    # tests.testkit that such a test module imports
    path = [str(ROOT / "tests"), str(ROOT), os.environ.get("PYTHONPATH")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                                   "--no-dashboard"], **quiet)]
    try:
        processes += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard",
                                        "--name", f"w{i}", "--preload", "graders.engine.dask_worker"], **quiet) for i in range(2)]
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        _stop(processes)


SLOW_OR_SPECIAL = ("e2e", "browser", "timing", "root")


def pytest_collection_modifyitems(config, items):
    """``unit`` on every test that carries none of the other marks: ``-m unit`` is what ``make test-fast`` runs."""
    for item in items:
        if not any(item.get_closest_marker(name) for name in SLOW_OR_SPECIAL):
            item.add_marker(pytest.mark.unit)


def pytest_configure(config):
    """A run stopped by SIGTERM (a CI timeout) still tears down its fixtures: PostgreSQL, Dask."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)


# --- real-browser fixtures (tests/browser): Debian's Chromium driven by Playwright, no browser download ----
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (make test does it)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield context.new_page()
    context.close()


