"""What JupyterLab shows of nbgrader, after `vecgrade student-lab --user` and without it (issue 30).

The student's JupyterLab keeps the Nbgrader menu's Assignment List and loses the Formgrader, the Course
List and the Create Assignment panel; the teacher's, where the step never ran, keeps every one. No kernel
starts: each test opens JupyterLab's page and its Nbgrader menu.
"""
from __future__ import annotations

import pytest
from lab import config_dir, jupyter_lab, shot

from graders.student import lab
from graders.student.lab import Level

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

STUDENT_ITEMS = ("Assignment List",)
TEACHER_ITEMS = ("Formgrader", "Course List", "Create assignment")  # the last greyed out until a notebook is open
CREATE_ASSIGNMENT_PANEL = "#nbgrader-create_assignemnt"  # nbgrader 0.9.6's id for its right-side panel, sic


def nbgrader_menu(page, base: str, token: str) -> dict[str, bool]:
    """Whether each of the menu's items shows, and whether the Create Assignment panel is in the shell."""
    page.goto(f"{base}/lab?token={token}")
    page.wait_for_selector(".jp-LauncherCard", timeout=120_000)
    page.get_by_text("Nbgrader", exact=True).click()
    menu = page.locator("#jp-mainmenu-nbgrader")
    menu.wait_for(timeout=30_000)
    shown = {item: menu.get_by_text(item, exact=True).is_visible() for item in (*STUDENT_ITEMS, *TEACHER_ITEMS)}
    shown["Create Assignment panel"] = page.locator(CREATE_ASSIGNMENT_PANEL).count() > 0
    return shown


@pytest.mark.parametrize("student", [True, False], ids=["student", "teacher"])
def test_the_student_sees_the_assignment_list_only_and_the_teacher_every_tool(page, tmp_path, monkeypatch, student):
    home = tmp_path / "home"
    home.mkdir()
    if student:  # the step, at the user's level of the config folder that JupyterLab will read
        monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(config_dir(home)))
        lab.hide_teacher_tools(Level.USER)
    with jupyter_lab(home) as (base, token):
        shown = nbgrader_menu(page, base, token)
        shot(page, f"nbgrader-menu-{'student' if student else 'teacher'}")
    expected = {**dict.fromkeys(STUDENT_ITEMS, True), **dict.fromkeys(TEACHER_ITEMS, not student),
                "Create Assignment panel": not student}
    assert shown == expected
