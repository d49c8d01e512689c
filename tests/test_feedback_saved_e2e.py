"""Issue 38 item 6, end to end: a notebook as people save it (a pasted image in a markdown cell, `%matplotlib
inline`, `!ls`) is graded and gets a feedback page through nbgrader, with the image, the figure and one line for
the shell command. Before, `generate_feedback` failed on "missing attachment: image.png" (no page at all), and the
cell stopped at `%matplotlib inline` (NotImplementedError) or `!ls` (OSError: out of pty devices).
"""
import nbformat
import pytest

from graders.course.grade import grade_class
from graders.coursedir.paths import Step
from graders.sandbox.shell import SHELL_SKIPPED

from tests.testkit import generated_course

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
CELL = ("%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n!ls\n"
        "print('after the shell line')\n")


@pytest.mark.e2e
def test_a_notebook_as_saved_gets_its_feedback_page(tmp_path, broadcasting):
    course = generated_course(tmp_path / "course", broadcasting)
    nb = nbformat.read(course.paths.notebook(Step.RELEASE, "broadcasting"), as_version=4)
    pasted = nbformat.v4.new_markdown_cell("My notes:\n\n![image.png](attachment:image.png)")
    pasted.attachments = {"image.png": {"image/png": PNG}}
    pasted["id"] = "pasted-image"
    code = nbformat.v4.new_code_cell(CELL)
    code["id"] = "scratch-plot"
    nb.cells[2:2] = [pasted, code]
    dest = course.paths.notebook(Step.SUBMITTED, "broadcasting", "ann")
    dest.parent.mkdir(parents=True)
    nbformat.write(nb, dest)
    grade_class(course, "broadcasting", ["ann"])
    with course.api() as api:
        assert api.generate_feedback("broadcasting", "ann")["success"]
    html = (course.root / "feedback" / "ann" / "broadcasting" / "broadcasting.html").read_text()
    assert f"data:image/png;base64,{PNG}" in html and "My notes:" in html
    assert SHELL_SKIPPED.format(cmd="ls") in html and "after the shell line" in html
    assert "enable_gui" not in html and "out of pty" not in html  # (the stubs still raise NotImplementedError)
    assert html.count("data:image/png;base64,") >= 2  # the pasted image and the inline figure
