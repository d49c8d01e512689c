"""The formgrader in a real browser (issue 19, point 3): the assignment counts every submission, its submissions page
lists every one of them, and a submission vecgrade could not grade reads "not graded:" with the reason and the fix.

Without vecgrade's view, nbgrader 0.9.6 counted the folders in submitted/ and listed only what the gradebook held
(or what had no autograded/ folder): a refused submission was counted and never shown.
"""
from __future__ import annotations

import shutil

import pytest
from lab import jupyter_lab, shot

from graders import KIT_ROOT
from graders.course.demo import submit_class
from graders.course.grade import grade_class
from graders.course.personas import load_roster

from tests.testkit import generated_course

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
GRADED, TWO, BROKEN, LEFT_BEHIND = "ada", "two", "zed", "old"


@pytest.fixture(scope="module")
def course(tmp_path_factory, broadcasting):
    course = generated_course(tmp_path_factory.mktemp("formgrader") / "course", broadcasting)
    people = [p for p in load_roster(KIT_ROOT, broadcasting) if p.student == GRADED]
    submit_class(course, "broadcasting", people)
    release = course.root / "release" / "broadcasting" / "broadcasting.ipynb"
    two = course.root / "submitted" / TWO / "broadcasting"
    two.mkdir(parents=True)
    shutil.copy(release, two / "broadcasting.ipynb")
    shutil.copy(release, two / "broadcasting (1).ipynb")  # a browser's second download
    broken = course.root / "submitted" / BROKEN / "broadcasting"
    broken.mkdir(parents=True)
    (broken / "broadcasting.ipynb").write_text("not a notebook")
    results = {r.student: r for r in grade_class(course, "broadcasting", [GRADED, TWO, BROKEN])}
    assert results[GRADED].success and not results[TWO].success and not results[BROKEN].success
    # an older run that left an autograded/ folder without gradebook rows (nbgrader hid such a submission)
    old = course.root / "submitted" / LEFT_BEHIND / "broadcasting"
    old.mkdir(parents=True)
    shutil.copy(release, old / "broadcasting.ipynb")
    shutil.copytree(old, course.root / "autograded" / LEFT_BEHIND / "broadcasting")
    return course


def test_the_formgrader_lists_every_submission_and_says_why_one_was_not_graded(page, course):
    with jupyter_lab(course.root) as (base, token):
        page.goto(f"{base}/formgrader/manage_assignments?token={token}")
        page.locator("tr", has_text="broadcasting").first.wait_for(timeout=90_000)
        counted = page.locator("tr", has_text="broadcasting").first.inner_text()
        assert "4" in counted.split(), counted  # "# Submissions": the folders in submitted/
        page.goto(f"{base}/formgrader/manage_submissions/broadcasting?token={token}")
        page.locator("tr", has_text=BROKEN).first.wait_for(timeout=60_000)
        rows = {s: page.locator("tr", has_text=s).first.inner_text() for s in (GRADED, TWO, BROKEN, LEFT_BEHIND)}
        shot(page, "formgrader-ungraded")
        assert "graded" in rows[GRADED] and "not graded" not in rows[GRADED], rows[GRADED]
        assert "16 / 16" in rows[GRADED].replace(".0", ""), rows[GRADED]
        assert "not graded:" in rows[TWO] and "remove or rename broadcasting (1).ipynb" in rows[TWO], rows[TWO]
        assert "vecgrade grade broadcasting -s two" in rows[TWO], rows[TWO]
        assert "not graded:" in rows[BROKEN] and "needs autograding" in rows[BROKEN], rows[BROKEN]
        assert "needs autograding" in rows[LEFT_BEHIND], rows[LEFT_BEHIND]
        # the reason once, and a student without names in the gradebook shown by id (issue 30)
        assert all(r.count("not graded:") <= 1 and "None, None" not in r for r in rows.values()), rows
        assert f"{BROKEN}, (no name)" in rows[BROKEN], rows[BROKEN]
        body = page.locator("table tbody tr")
        assert body.count() == 4, [body.nth(i).inner_text() for i in range(body.count())]
