"""The feedback page's summary names each exercise and part (graders/course/feedback_template.py)."""
import os
from datetime import datetime, timedelta

import nbformat
from nbconvert.exporters import HTMLExporter
from nbgrader.api import Gradebook
from traitlets.config import Config

from graders.course import feedback_template
from graders.course.feedback_template import NBGRADER_TEMPLATES, TEMPLATES, NoteLateness, lateness, part_label
from graders.model.exercise import PARTS

IDS = [f"batch_outer_{p}" for p in PARTS] + ["pairwise_dist_correct", "my_own_test"]


def test_a_vecgrade_grade_id_is_named_by_its_exercise_and_part():
    assert part_label("batch_outer_correct") == "batch_outer: correct"
    assert part_label("pairwise_dist_fast") == "pairwise_dist: fast"
    assert part_label("my_own_test") == "Test cell"  # not a vecgrade part: nbgrader's words
    assert part_label("_fast") == "Test cell" and part_label("") == "Test cell"


def _feedback_html(configured: bool, late: str = "") -> str:
    nb = nbformat.v4.new_notebook()
    for gid in IDS:
        cell = nbformat.v4.new_code_cell("assert True")
        cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": gid,
                                     "points": 1.0, "score": 1.0, "schema_version": 3}
        nb.cells.append(cell)
    c = Config()
    c.HTMLExporter.template_name = "feedback"  # as nbgrader's GenerateFeedback asks for it
    # what nbgrader's GenerateFeedback sets (the template folders only where the config has none)
    c.HTMLExporter.extra_template_basedirs = [NBGRADER_TEMPLATES]
    c.HTMLExporter.extra_template_paths = [os.path.join(os.path.dirname(NBGRADER_TEMPLATES), "static", "node_modules",
                                                        "bootstrap", "dist", "css")]
    if configured:
        feedback_template.configure(c)
    resources = {"nbgrader": {"notebook": "broadcasting", "score": 6.0, "max_score": 6.0, "late_penalty": 0,
                              "late": late}}  # as NoteLateness leaves it
    html, _ = HTMLExporter(config=c).from_notebook_node(nb, resources=resources)
    return html[html.index("<h4>"):html.index("</ol>")]


def test_the_summary_names_each_exercise_and_part_and_nbgraders_does_not():
    ours = _feedback_html(configured=True)
    for part in PARTS:
        assert f'<a href="#batch_outer_{part}">batch_outer: {part}</a> (Score: 1.0 / 1.0)' in ours, ours
    assert ">pairwise_dist: correct</a>" in ours and ours.count(">Test cell</a>") == 1  # my_own_test only
    plain = _feedback_html(configured=False)  # control: nbgrader's own template
    assert plain.count(">Test cell</a>") == len(IDS) and "batch_outer: correct" not in plain


def test_the_copy_is_nbgraders_template_but_for_the_summary_line():
    def read(base):
        with open(os.path.join(base, "feedback", "index.html.j2")) as f:
            return f.read()
    theirs, ours = read(NBGRADER_TEMPLATES), read(TEMPLATES)
    assert theirs.count(">Test cell</a>") == 1
    title = theirs[theirs.index("        <h4>"):theirs.index("</h4>\n") + 6]
    changed = theirs.replace(">Test cell</a>", ">{{ cell.metadata.nbgrader.grade_id | vecgrade_part }}</a>").replace(
        title, title + '        {% if resources.nbgrader.late %}<p class="vecgrade-late" style="color: #d2413a">'
        "{{ resources.nbgrader.late }}</p>{% endif %}\n")
    assert ours.startswith("{#-") and ours.split("-#}\n", 1)[1] == changed  # a note on top, then nbgrader's, changed


def test_a_late_submission_says_so_under_the_title_and_one_on_time_does_not():
    line = lateness(5400)
    assert line == "Submitted after the due date: late 1.5 h" and lateness(0) == lateness(None) == ""
    assert "<h4>broadcasting (Score: 6.0 / 6.0)</h4>" in _feedback_html(True, line)
    assert f'<p class="vecgrade-late" style="color: #d2413a">{line}</p>' in _feedback_html(True, line)
    assert "vecgrade-late" not in _feedback_html(True, "")  # on time: no line


def test_the_lateness_comes_from_the_gradebook_and_a_page_without_a_student_is_left_alone(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    due = datetime(2026, 12, 1, 12, 0)
    with Gradebook(url) as gb:
        gb.add_assignment("a1", duedate=due)
        gb.add_student("ada")
        gb.add_student("bob")
        gb.add_submission("a1", "ada", timestamp=due + timedelta(hours=3))
        gb.add_submission("a1", "bob", timestamp=due - timedelta(hours=1))

    def noted(**info) -> dict:
        return NoteLateness().preprocess(nbformat.v4.new_notebook(), {"nbgrader": dict(info)})[1]["nbgrader"]
    assert noted(db_url=url, assignment="a1", student="ada")["late"] == "Submitted after the due date: late 3.0 h"
    assert noted(db_url=url, assignment="a1", student="bob")["late"] == ""  # on time
    assert noted(db_url=url, assignment="a1", student="carol")["late"] == ""  # no submission
    assert "late" not in noted(notebook="broadcasting")  # the formgrader's page: no student


def test_configure_keeps_the_configs_own_preprocessors():
    c = Config()
    c.HTMLExporter.preprocessors = ["my.Preprocessor"]
    feedback_template.configure(c)
    assert c.HTMLExporter.preprocessors == ["my.Preprocessor", NoteLateness]
