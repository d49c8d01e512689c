"""A semester without a surprise (issue 39, "Tests"): at every step, ``vecgrade status --json``, ``vecgrade report``
(CSV), ``vecgrade export`` (parts, Canvas, Moodle with a roster) agree with nbgrader's gradebook, read as the truth.

Three assignments with due dates, ten students across them written with the demo personas
(graders/course/personas.py): right, loops, wrong, untouched, one late under nbgrader's documented late-submission
plugin (``late.py`` with ``SubMarks``, one point per hour), one who resubmits after feedback (the newer submission
first waits in the exchange, collected without ``--update``; then in ``submitted/``, as ``collect --update`` leaves
it), one with an extension granted before submission and one after grading; a manual grade and extra credit through
nbgrader's gradebook API (what the formgrader calls); a threshold (``ref_factor``) changed after grading.

The truth is nbgrader's: each submission's ``score`` and ``late_submission_penalty`` from ``Gradebook``, and the
totals ``nbgrader export`` (``CsvExportPlugin``) writes. Grading is ``grade_class`` with two processes and a fixed
``c.TrustedVerdicts.seed``.
"""
from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook
from nbgrader.plugins.export import CsvExportPlugin

from graders import KIT_ROOT
from graders.course.build import write_source
from graders.course.demo import make_course, submit_class
from graders.course.feedback import write_feedback
from graders.course.grade import grade_class
from graders.course.personas import load_roster
from graders.course.results import RESUBMITTED
from graders.coursedir.course import Course
from graders.coursedir.paths import Step
from graders.model.exercise import load_assignment
from graders.pipeline.arrivals import Arrival, save, write_stamp

from tests.testkit.cli import vecgrade

pytestmark = pytest.mark.e2e

NAMES = ("broadcasting", "strides", "einops")
DUE = {"broadcasting": datetime.datetime(2026, 2, 1, 12, 0), "strides": datetime.datetime(2026, 3, 1, 12, 0),
       "einops": datetime.datetime(2026, 4, 1, 12, 0)}
LATE_PLUGIN = '''from __future__ import division
from nbgrader.plugins import BasePlugin


class SubMarks(BasePlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        """Penalty of 1 mark per hour late"""
        hours_late = total_seconds_late / 3600
        return round(hours_late, 0)
'''
# assignment -> student -> (the demo persona whose answers they hand in, hours after the due date (None: before))
CLASS: dict[str, dict[str, tuple[str, float | None]]] = {
    "broadcasting": {"ada": ("ada", None), "bob": ("bob", None), "cy": ("cy", None), "gus": ("gus", None),
                     "lee": ("ada", 3.0), "ron": ("cy", None), "eli": ("ada", 30.0), "kim": ("ada", 2.0)},
    "strides": {"ada": ("ada", None), "dee": ("dee", None)},
    "einops": {"bob": ("bob", None), "zoe": ("ada", None)},
}
STUDENTS = sorted({s for people in CLASS.values() for s in people})
JOBS = 2


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def ok(*args) -> str:
    result = vecgrade(*args)
    assert result.exit_code == 0, (args, result.output)
    return result.stdout


# --- the course ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Three assignments built and generated, each with a due date, the late plugin and a fixed seed."""
    course = make_course(tmp_path_factory.mktemp("semester") / "course")
    (course.root / "late.py").write_text(LATE_PLUGIN)
    with open(course.root / "nbgrader_config.py", "a") as f:
        f.write("\nc.AssignLatePenalties.plugin_class = 'late.SubMarks'\nc.TrustedVerdicts.seed = 3\n")
    for name in NAMES:
        write_source(course.root, load_assignment(course.root / "assignments" / f"{name}.py"))
    with course.api() as api:
        for name in NAMES:
            assert api.generate_assignment(name)["success"], name
    with Gradebook(course.db_url) as gb:
        for name in NAMES:
            gb.update_or_create_assignment(name, duedate=DUE[name])
        for s in STUDENTS:  # as the teacher's roster import leaves them: names, an email each
            gb.update_or_create_student(s, first_name=s.title(), last_name="Ng", email=f"{s}@uni.example")
    sys.path.insert(0, str(course.root))  # nbgrader imports 'late.SubMarks' from the course folder
    yield course
    sys.path.remove(str(course.root))
    sys.modules.pop("late", None)


def hand_in(course: Course, assignment: str, student: str, persona: str, arrived: datetime.datetime) -> None:
    """``student``'s notebook (the demo persona's answers) in submitted/, collected at ``arrived``."""
    definitions = course.assignments[assignment]
    people = {p.student: p for p in load_roster(KIT_ROOT, definitions)}
    submit_class(course, assignment, [dataclasses.replace(people[persona], student=student)])
    folder = course.paths.folder(Step.SUBMITTED, assignment, student)
    write_stamp(folder, arrived)
    save(course.root, Arrival(student, assignment, arrived, "collected", None))


def arrival(assignment: str, hours: float | None) -> datetime.datetime:
    return DUE[assignment] + datetime.timedelta(hours=hours if hours is not None else -5)


def grade(course: Course, assignment: str, students: list[str]) -> None:
    results = grade_class(course, assignment, students, jobs=JOBS)
    assert [r.student for r in results if not r.success] == [], [(r.student, r.reason) for r in results]


# --- the truth, and every view held to it ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Truth:
    score: float
    penalty: float
    total: float
    seconds_late: float


def truth(course: Course, tmp: Path) -> dict[tuple[str, str], Truth]:
    """{(assignment, student): nbgrader's marks} for every graded submission: ``Gradebook``'s score and penalty, and
    the total ``nbgrader export`` writes (checked to be ``max(0, score - penalty)``)."""
    dest = tmp / "nbgrader-export.csv"
    with course.inside(), Gradebook(course.db_url) as gb:
        CsvExportPlugin(to=str(dest)).export(gb)
        out = {}
        for name in NAMES:
            for sub in gb.find_assignment(name).submissions:
                if sub.timestamp is None:  # a row that only holds an extension: nothing graded
                    continue
                out[name, sub.student_id] = Truth(float(sub.score), float(sub.late_submission_penalty or 0),
                                                  max(0.0, float(sub.score) - float(sub.late_submission_penalty or 0)),
                                                  float(sub.total_seconds_late or 0))
    exported = {(r["assignment"], r["student_id"]): r for r in read_csv(dest)}
    for key, t in out.items():
        assert float(exported[key]["score"]) == pytest.approx(t.total), key
        assert float(exported[key]["late_submission_penalty"]) == pytest.approx(t.penalty), key
        assert float(exported[key]["raw_score"]) == pytest.approx(t.score), key
    return out


def status(course: Course) -> dict[str, dict]:
    found = json.loads(ok("status", "-c", course.root, "--json"))
    return {a["assignment"]: a for a in found["assignments"]}


def agree(course: Course, tmp: Path, step: str) -> tuple[dict[tuple[str, str], Truth], dict[str, dict]]:
    """Every view against the gradebook at ``step``; returns the truth and the status by assignment."""
    tmp = tmp / step
    tmp.mkdir()
    t = truth(course, tmp)
    submitted = {name: set(course.submitted_students(name)) for name in NAMES}

    ok("export", "-c", course.root, "--to", tmp / "parts.csv")
    rows = {r["student_id"]: r for r in read_csv(tmp / "parts.csv")}
    for name in NAMES:
        for s in STUDENTS:
            marks = t.get((name, s))
            row = rows[s]
            if marks is None:
                assert row[f"{name} total"] == "" and row[f"{name} score"] == "", (step, name, s, row)
                continue
            assert float(row[f"{name} total"]) == pytest.approx(marks.total), (step, name, s)
            assert float(row[f"{name} late penalty"]) == pytest.approx(marks.penalty), (step, name, s)
            assert float(row[f"{name} score"]) == pytest.approx(marks.score), (step, name, s)

    for name in NAMES:  # vecgrade report NAME --csv
        dest = tmp / f"report-{name}.csv"
        if not any(a == name for (a, _) in t):  # nothing graded: one line says so, no table of zeros
            result = vecgrade("report", name, "-c", course.root, "--csv", dest)
            assert result.exit_code == 2 and "nothing autograded" in result.stderr and not dest.exists()
            continue
        ok("report", name, "-c", course.root, "--csv", dest)
        table = {r["student"]: r for r in read_csv(dest)}
        assert set(table) == submitted[name] | {s for (a, s) in t if a == name}, (step, name)
        for s, r in table.items():
            marks = t.get((name, s))
            assert (r["total"] == "") == (marks is None), (step, name, s, r)
            if marks is not None:
                assert float(r["total"]) == pytest.approx(marks.total), (step, name, s)
                assert float(r["late penalty"]) == pytest.approx(marks.penalty), (step, name, s)

    roster = tmp / "roster.csv"
    with open(roster, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student_id", "first_name", "last_name", "email", "sis_user_id", "sis_login_id"])
        for i, s in enumerate(STUDENTS):
            w.writerow([s, s.title(), "Ng", f"{s}@uni.example", f"9{i:03d}", f"{s}-login"])
    for form, key in (("canvas", "SIS Login ID"), ("moodle", "Username")):
        dest = tmp / f"{form}.csv"
        ok("export", "-c", course.root, "--format", form, "--roster", roster, "--to", dest)
        lms = {r[key]: r for r in read_csv(dest) if r[key]}
        assert set(lms) == {f"{s}-login" for s in STUDENTS}, (step, form)
        for name in NAMES:
            for s in STUDENTS:
                marks = t.get((name, s))
                cell = lms[f"{s}-login"][name]
                assert (cell == "") == (marks is None), (step, form, name, s, cell)
                if marks is not None:
                    assert float(cell) == pytest.approx(marks.total), (step, form, name, s)

    found = status(course)
    for name in NAMES:
        a = found[name]
        graded = {s for (n, s) in t if n == name and s in submitted[name]}
        assert set(a["graded"]) | set(a["resubmitted"]) == graded, (step, name, a)
        assert set(a["submitted"]) == submitted[name], (step, name)
        assert a["due"] == DUE[name].strftime("%Y-%m-%d %H:%M:%S UTC"), (step, name)
        late = {s for s in a["graded"] if t[name, s].seconds_late > 0}
        assert {s for s in a["late"] if s in a["graded"]} == late, (step, name, a["late"])
    return t, found


# --- the semester -------------------------------------------------------------------------------------------------


def test_a_semester_every_view_agrees_with_the_gradebook(course, tmp_path):
    # an extension before eli's submission is in the gradebook
    assert "eli: +48 h, due 2026-02-03 12:00 UTC" in ok("extend", "broadcasting", "eli", "--hours", "48",
                                                         "-c", course.root)
    for name, people in CLASS.items():
        for student, (persona, hours) in people.items():
            hand_in(course, name, student, persona, arrival(name, hours))

    # collected, nothing graded: everyone waits, the late ones are named with the due date, eli within her extension
    t, found = agree(course, tmp_path, "collected")
    assert t == {}
    b = found["broadcasting"]
    assert sorted(b["waiting"]) == sorted(CLASS["broadcasting"]) and b["graded"] == []
    assert b["extensions"] == {"eli": 48.0}
    assert b["late"] == {"kim": "late 2.0 h, due 2026-02-01 12:00:00 UTC", "lee": "late 3.0 h, due 2026-02-01 12:00:00 UTC"}

    for name, people in CLASS.items():
        grade(course, name, sorted(people))
    t, found = agree(course, tmp_path, "graded")
    b = found["broadcasting"]
    assert sorted(b["graded"]) == sorted(CLASS["broadcasting"]) and b["waiting"] == []
    assert set(b["late"]) == {"kim", "lee"} and "eli" not in b["late"]
    full = t["broadcasting", "ada"].score
    assert full > 3 and t["broadcasting", "lee"] == Truth(full, 3.0, full - 3.0, 3 * 3600)  # the plugin's 3 points
    assert t["broadcasting", "kim"].penalty == 2.0
    assert t["broadcasting", "eli"].penalty == 0 and t["broadcasting", "eli"].seconds_late == 0  # within 48 h
    assert t["broadcasting", "cy"].score < full and t["broadcasting", "gus"].score == 0
    assert t["broadcasting", "bob"].score < full  # loops: correct only
    assert all(found[n]["changes"] == [] for n in NAMES)  # control: nothing changed yet

    write_feedback(course, "broadcasting")
    found = status(course)
    assert found["broadcasting"]["no_feedback"] == [] and found["broadcasting"]["stale_feedback"] == []

    # an extension after kim was graded: nbgrader's penalty stands until autograde runs again, then it is gone
    said = ok("extend", "broadcasting", "kim", "--hours", "3", "-c", course.root)
    assert "kim: +3 h" in said and "regrade with `vecgrade grade broadcasting -s kim` to apply it" in said
    t, found = agree(course, tmp_path, "extended")
    assert t["broadcasting", "kim"].penalty == 2.0 and t["broadcasting", "kim"].seconds_late == 0
    assert found["broadcasting"]["extensions"] == {"eli": 48.0, "kim": 3.0}
    assert found["broadcasting"]["penalty_stale"] == {"kim": 2.0}  # status says the penalty stands, and the fix
    grade(course, "broadcasting", ["kim"])  # what `vecgrade grade broadcasting -s kim` runs
    t, found = agree(course, tmp_path, "kim-regraded")
    assert t["broadcasting", "kim"] == Truth(full, 0.0, full, 0.0)
    assert "kim" not in found["broadcasting"]["late"] and found["broadcasting"]["penalty_stale"] == {}

    # a manual grade and extra credit, as the formgrader sets them: every view follows; bob's page is out of date
    with Gradebook(course.db_url) as gb:
        grades = gb.find_submission("broadcasting", "bob").notebooks[0].grades
        fast = next(g for g in grades if g.name.endswith("_fast"))
        assert fast.auto_score == 0  # control: bob's loops earn nothing for fast
        half = fast.max_score / 2
        fast.manual_score = half
        fast.extra_credit = 1.0
        gb.db.commit()
        by_hand = fast.name
    before = t["broadcasting", "bob"].score
    t, found = agree(course, tmp_path, "manual")
    assert t["broadcasting", "bob"].score == pytest.approx(before + half + 1.0)
    assert sorted(found["broadcasting"]["stale_feedback"]) == ["bob", "kim"]  # kim: regraded since her page
    assert found["broadcasting"]["stale_why"]["bob"].startswith(
        f"the page says {before:g} / {full:g}, the gradebook {t['broadcasting', 'bob'].score:g}")
    assert next(r for r in read_csv(tmp_path / "manual" / "parts.csv") if r["student_id"] == "bob")[
        "broadcasting graded by hand"] == by_hand
    write_feedback(course, "broadcasting", ["bob", "kim"])
    assert status(course)["broadcasting"]["stale_feedback"] == []

    # ron resubmits after reading his feedback: first in the exchange (collect without --update leaves it there)
    when = DUE["broadcasting"] - datetime.timedelta(hours=1)
    inbound = course.root / "exchange" / "vecgrade" / "inbound" / f"ron+broadcasting+{when} UTC+abc"
    inbound.mkdir(parents=True)
    ron = course.paths.notebook(Step.SUBMITTED, "broadcasting", "ron")
    first = ron.read_text()
    t, found = agree(course, tmp_path, "in-exchange")
    b = found["broadcasting"]
    assert b["in_exchange"] == {"ron": [when.strftime("%Y-%m-%d %H:%M:%S UTC")]} and "ron" in b["graded"]
    # collect --update: submitted/ holds the new one; its marks are the earlier submission's until it is graded
    hand_in(course, "broadcasting", "ron", "ada", when)
    assert ron.read_text() != first
    t, found = agree(course, tmp_path, "resubmitted")
    b = found["broadcasting"]
    assert b["resubmitted"] == ["ron"] and "ron" in b["waiting"] and "ron" not in b["graded"]
    assert b["in_exchange"] == {}
    row = next(r for r in read_csv(tmp_path / "resubmitted" / "parts.csv") if r["student_id"] == "ron")
    assert row["broadcasting status"] == f"graded, {RESUBMITTED}"
    assert float(row["broadcasting total"]) == pytest.approx(t["broadcasting", "cy"].total)  # still the wrong one
    grade(course, "broadcasting", ["ron"])
    t, found = agree(course, tmp_path, "resubmission-graded")
    assert t["broadcasting", "ron"].total == full
    assert found["broadcasting"]["resubmitted"] == [] and "ron" in found["broadcasting"]["graded"]
    assert found["broadcasting"]["no_feedback"] == [] and "ron" in found["broadcasting"]["stale_feedback"]

    # a threshold changed after grading: status names it and each step; the marks stay the gradebook's
    definitions = course.root / "assignments" / "strides.py"
    text = definitions.read_text()
    assert len(re.findall(r"ref_factor=4,", text)) >= 1
    definitions.write_text(text.replace("ref_factor=4,", "ref_factor=5,", 1))
    t, found = agree(course, tmp_path, "changed")
    s = found["strides"]
    changed = " | ".join(s["changes"])
    assert "strides.py" in changed and "graded under older definitions" in changed, changed
    steps = [step.split("`")[1] for step in s["steps"]]
    assert steps[0] == "vecgrade build" and "vecgrade grade strides" in steps, steps
    # each assignment's own fingerprint: the others are not named, in status nor in the export's max-points row
    assert found["broadcasting"]["changes"] == [] and found["einops"]["changes"] == []
    top = read_csv(tmp_path / "changed" / "parts.csv")[0]
    assert top["strides status"].startswith("changed after grading") and top["einops status"] == ""

    # the steps status names, taken: strides is current again, its marks the new grading's
    assert "wrote source/strides/strides.ipynb" in ok("build", "-c", course.root)
    s = status(course)["strides"]  # the rebuilt notebook: the task text states the new threshold
    assert any('task text "within 4x" -> "within 5x"' in c for c in s["changes"]), s["changes"]
    assert [step.split("`")[1] for step in s["steps"]][:2] == ["nbgrader generate_assignment strides --force",
                                                               "nbgrader release_assignment strides --force"]
    with course.api() as api:
        assert api.generate_assignment("strides", force=True)["success"]
    nbgrader = Path(sys.executable).parent / "nbgrader"
    subprocess.run([str(nbgrader), "release_assignment", "strides", "--force"], cwd=course.root, check=True,
                   capture_output=True, timeout=120)
    grade(course, "strides", sorted(CLASS["strides"]))
    t, found = agree(course, tmp_path, "regraded")
    assert found["strides"]["changes"] == [] and found["strides"]["steps"] == [], found["strides"]
    assert read_csv(tmp_path / "regraded" / "parts.csv")[0]["strides status"] == ""
