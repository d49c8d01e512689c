"""JupyterLab servers and screenshots for the browser tests (imported by the tests and their conftest)."""
from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from graders import KIT_ROOT

SHOTS = KIT_ROOT / "browser-screenshots"
# `make screenshots` sets it to docs/images: the README's pictures, taken by the tests that check what they show
README_SHOTS = "VECGRADE_SCREENSHOTS"
README_VIEWPORT = {"width": 1200, "height": 800}


def shot(page, name: str) -> Path:
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def readme_shot(page, name: str) -> Path | None:
    """``name``.png in the folder ``VECGRADE_SCREENSHOTS`` names, at the README's viewport; nothing when it is unset.
    The viewport stays as set: call it after the test's checks of the page."""
    folder = os.environ.get(README_SHOTS)
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(README_VIEWPORT)
    path = Path(folder) / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config_dir(root: Path) -> Path:
    """The Jupyter config folder (``JUPYTER_CONFIG_DIR``) of ``jupyter_lab(root)``'s user."""
    return root.parent / ".jupyter-config"


@contextmanager
def jupyter_lab(root: Path, timeout: float = 90):
    """``jupyter lab`` serving ``root`` (also its working directory, so nbgrader finds the course config), with
    ``config_dir(root)`` as its user's Jupyter config folder: what a test wrote in its page config is kept."""
    port, token = _free_port(), secrets.token_hex(16)
    log = open(root.parent / f"jupyter-{port}.log", "w")
    page_config = config_dir(root) / "labconfig" / "page_config.json"
    page_config.parent.mkdir(parents=True, exist_ok=True)
    config = json.loads(page_config.read_text()) if page_config.exists() else {}
    # no "news?" pop-up over the screenshots
    config.setdefault("disabledExtensions", {})["@jupyterlab/apputils-extension:announcements"] = True
    page_config.write_text(json.dumps(config))
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config_dir(root)),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--allow-root",
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=root, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                    json.load(r)
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"jupyter lab did not start; see {log.name}") from None
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
