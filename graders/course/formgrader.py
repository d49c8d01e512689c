"""The formgrader lists every submission; one vecgrade could not grade shows "needs autograding" and the reason.

nbgrader 0.9.6's formgrader counts the folders in ``submitted/`` but lists only
the submissions in the gradebook and those without a folder in ``autograded/``:
an ungraded submission that left one behind was counted and never listed. Its
time came from the student's ``timestamp.txt``, and one that was not a time
stopped the whole page.

Its pages also showed a student without names in the gradebook (one that
autograde added) as "None, None", and the reason of an ungraded submission
twice (nbgrader's ``get_submissions`` calls ``get_submission`` for it, so the
reason was added once there and once again on the list).

``install()`` (from ``nbgrader_config.py``, which the formgrader loads) wraps
three methods of nbgrader's ``NbGraderAPI``, which the formgrader's pages read,
and nothing else: every submitted student is listed; one with a row in
``ungraded.csv`` shows ``not graded: <reason>`` in the timestamp column, once
(the formgrader's status column says "needs autograding"); a submission's time
is its time of record (``graders.pipeline.arrivals``); a submission of a student
without names is shown by id (``ada, (no name)``). The students' own page keeps
nbgrader's "None, None": its edit form would save a stand-in as the name.
"""
from __future__ import annotations

import os
from functools import wraps

from nbgrader.apps.api import NbGraderAPI

from graders.course.ungraded import ungraded
from graders.coursedir.course import Course
from graders.pipeline.arrivals import observed
from graders.pipeline.nbgrader_seam import patch

_original = {name: getattr(NbGraderAPI, name) for name in ("get_submission", "get_submissions",
                                                            "get_submitted_timestamp")}
NO_NAME = "(no name)"  # the first name shown for a student the gradebook has no names for


def _reasons(api: NbGraderAPI, assignment_id: str) -> dict[str, str]:
    try:
        return ungraded(Course(api.coursedir.root), assignment_id)
    except FileNotFoundError:  # not a vecgrade course folder: nbgrader's view unchanged
        return {}


def _named(record: dict, student: str) -> dict:
    """A submission of the formgrader, with the student's id as the name when the gradebook has none (the page
    would show "None, None"); for display only: no form of the submissions' pages saves a name."""
    if record.get("last_name") is None and record.get("first_name") is None:
        record.update(last_name=student, first_name=NO_NAME)
    return record


def _marked(submission: dict, reasons: dict[str, str]) -> dict:
    """A submission of the formgrader, its timestamp cell saying why it was not graded (when it was not)."""
    why = reasons.get(submission.get("student", ""))
    if why and not submission.get("autograded"):
        when = submission.get("display_timestamp")
        submission["display_timestamp"] = f"{when + ' - ' if when else ''}not graded: {why}"
    return submission


def _as_ungraded(api: NbGraderAPI, assignment_id: str, student_id: str) -> dict:
    """nbgrader's own record of a submission that was not autograded."""
    return _original["get_submission"](api, assignment_id, student_id, ungraded={student_id})


@wraps(_original["get_submission"])
def get_submission(self, assignment_id, student_id, ungraded=None, students=None):
    found = _original["get_submission"](self, assignment_id, student_id, ungraded, students)
    if found is None and student_id in self.get_submitted_students(assignment_id):
        found = _as_ungraded(self, assignment_id, student_id)  # an autograded folder without gradebook rows
    return None if found is None else _named(_marked(found, _reasons(self, assignment_id)), student_id)


@wraps(_original["get_submissions"])
def get_submissions(self, assignment_id):
    listed = _original["get_submissions"](self, assignment_id)  # its ungraded ones from ``get_submission``: marked
    missing = sorted(self.get_submitted_students(assignment_id) - {s["student"] for s in listed})
    reasons = _reasons(self, assignment_id)
    listed += [_marked(_as_ungraded(self, assignment_id, student), reasons) for student in missing]
    return sorted((_named(s, s["student"]) for s in listed), key=lambda s: s["student"])


@wraps(_original["get_submitted_timestamp"])
def get_submitted_timestamp(self, assignment_id, student_id):
    folder = self.coursedir.format_path(self.coursedir.submitted_directory, student_id, assignment_id)
    if not os.path.isdir(folder):
        return None
    return observed(self.coursedir.root, student_id, assignment_id, folder)  # never the student's timestamp.txt


def install() -> None:
    """Make the formgrader's API list every submission with its reason and time of record."""
    patch("nbgrader.apps.api.NbGraderAPI.get_submission", get_submission)
    patch("nbgrader.apps.api.NbGraderAPI.get_submissions", get_submissions)
    patch("nbgrader.apps.api.NbGraderAPI.get_submitted_timestamp", get_submitted_timestamp)
