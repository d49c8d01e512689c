"""Verdicts on submit in the browser: a student (a Unix user running JupyterLab from an environment that holds
only nbgrader) fetches the assignment in nbgrader's Assignment List, answers, clicks Submit, then Fetch
Feedback, and reads the verdicts that ``vecgrade serve`` (running as the teacher, owner check on) released."""
from __future__ import annotations

import json
import secrets
import subprocess
import urllib.request
from contextlib import contextmanager

import nbformat
import pytest
from lab import _free_port, shot
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from serve_kit import ServiceProcess, Student, entries, students, wait_for, world_exchange
from test_flows import accept_dialogs, index_of, set_source

from graders.course.personas import loop_answer

from tests.testkit import admin_tool, generated_course

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.root]  # students are Unix users (useradd)
A = "broadcasting"


@contextmanager
def student_lab(student: Student):
    """``jupyter lab`` of the student's own environment, run as the student in their home."""
    port, token = _free_port(), secrets.token_hex(16)
    labconfig = student.home / ".jupyter" / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)  # no "news?" pop-up over the screenshots
    (labconfig / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    subprocess.run(["chown", "-R", f"{student.name}:{student.name}", str(labconfig.parent)], check=True)
    variables = {"HOME": str(student.home), "USER": student.name, "LOGNAME": student.name, "LANG": "C.UTF-8",
                 "PATH": f"{student.env / 'bin'}:/usr/bin:/bin"}
    log = open(f"/tmp/vecgrade-lab-{student.name}.log", "w")
    server = subprocess.Popen(
        [admin_tool("runuser"), "-u", student.name, "--", "env", "-i", *[f"{k}={v}" for k, v in variables.items()],
         str(student.env / "bin" / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={student.home}", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        cwd=student.home, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                return True
        except OSError:
            assert server.poll() is None, open(log.name).read()
            return False

    try:
        wait_for(up, 120, "the student's JupyterLab")
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory, broadcasting):
    with world_exchange() as exchange, students(["lab"], exchange, "vecgrade") as people:
        course = generated_course(tmp_path_factory.mktemp("on-submit") / "course", broadcasting,
                                  extra_config=f"c.Exchange.root = {str(exchange)!r}\n")
        with course.api() as api:
            assert api.release_assignment(A)["success"]
        service = ServiceProcess(course, "--jobs", "1")
        service.start()
        try:
            yield course, people["lab"]
        finally:
            service.stop()


def test_submit_and_fetch_feedback_in_the_assignment_list(served, page, broadcasting):
    course, student = served
    first = broadcasting.exercises[0]
    with student_lab(student) as (base, token):
        page.goto(f"{base}/lab?token={token}")
        page.wait_for_selector(".jp-LauncherCard", timeout=120_000)
        page.get_by_text("Nbgrader", exact=True).click()
        page.get_by_text("Assignment List", exact=True).click()
        page.get_by_role("button", name="Fetch").first.click()
        page.get_by_role("button", name="Submit").wait_for(timeout=60_000)
        shot(page, "on-submit-fetched")

        page.goto(f"{base}/lab/tree/{A}/{A}.ipynb?token={token}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        accept_dialogs(page)
        nb = nbformat.read(student.home / A / f"{A}.ipynb", as_version=4)
        for ex in broadcasting.exercises:  # the first exercise keeps its loop: correct, not vectorized
            source = loop_answer(ex) if ex is first else ex.reference_source()
            set_source(page, index_of(nb, f"{ex.name.replace('_', '-')}-answer"), source)
        page.keyboard.press("Control+S")
        page.wait_for_timeout(1500)
        accept_dialogs(page)
        tab = page.get_by_role("tab", name="Assignments")
        try:  # JupyterLab restores the Assignment List's tab when it saved its layout before the reload
            tab.wait_for(timeout=10_000)
        except PlaywrightTimeout:  # it had not: open the list again from nbgrader's menu
            page.get_by_text("Nbgrader", exact=True).click()
            page.get_by_text("Assignment List", exact=True).click()
        tab.click(timeout=120_000)
        page.get_by_role("button", name="Submit").click(timeout=120_000)
        page.get_by_role("button", name="Fetch Feedback").wait_for(timeout=60_000)
        shot(page, "on-submit-submitted")

        [e] = wait_for(lambda: [e for e in entries(course, student.name) if e.state == "graded"], 240,
                       "the service to release the feedback")
        page.get_by_role("button", name="Fetch Feedback").click()
        page.get_by_text("(view feedback)").wait_for(timeout=60_000)
        page.get_by_text("(view feedback)").click()
        page.locator(".jp-DirListing-item", has_text=f"{A}.html").dblclick()
        viewer = page.frame_locator(".jp-HTMLViewer iframe").first
        body = viewer.locator("body")
        body.get_by_text("Graded on submit").wait_for(timeout=60_000)
        text = body.inner_text()
        shot(page, "on-submit-feedback")
    assert "NotVectorized" in text and text.count("vectorized: passed.") == len(broadcasting.exercises) - 1, text
    assert text.count("fast: passed.") == len(broadcasting.exercises) - 1 and "correct: passed." in text, text
    assert e.owner == student.name

