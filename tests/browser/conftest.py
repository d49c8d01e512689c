"""Real-browser fixtures: Debian's Chromium driven by Playwright (no browser download).

Each test starts its own JupyterLab server (``lab.jupyter_lab``) and stops it.
Screenshots go to ``browser-screenshots/`` at the kit's root (gitignored) for people to look at.
"""
from __future__ import annotations

import pytest
from lab import CHROMIUM


def pytest_collection_modifyitems(items):
    for item in items:
        if "browser" in item.path.parts:
            item.add_marker(pytest.mark.e2e)


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


