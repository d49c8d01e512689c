"""One page of record per student and assignment (graders/course/feedback.py): the teacher's page of the newest
graded submission says it counts; a page of an earlier submission released in the exchange says it was replaced,
and by what."""
import datetime

import pytest

from graders.course.feedback import mark_of_record, record_of
from graders.coursedir.course import Course
from graders.pipeline.arrivals import write_stamp

PAGE = "<html><head></head><body>\n<h4>broadcasting</h4></body></html>"
AT = 1_796_000_000.0  # 2026-11-30 UTC
FIRST, SECOND = datetime.datetime(2026, 11, 1, 10, 0), datetime.datetime(2026, 11, 2, 9, 30)


def _course(tmp_path, config: str = "") -> Course:
    (tmp_path / "nbgrader_config.py").write_text(
        config or f"c = get_config()\nc.CourseDirectory.course_id = 'vc'\nc.Exchange.root = '{tmp_path / 'ex'}'\n")
    for student in ("ada", "bob"):
        _page(tmp_path, student, FIRST)
    return Course(tmp_path)


def _page(root, student: str, submitted: datetime.datetime):
    """A freshly generated page of ``student``'s submission of record time ``submitted``."""
    folder = root / "feedback" / student / "broadcasting"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "broadcasting.html").write_text(PAGE)
    write_stamp(folder, submitted)
    return folder / "broadcasting.html"


def _release(root, page, name: str):
    """``nbgrader release_feedback``: the page copied into the exchange under its submission's hash."""
    dest = root / "ex" / "vc" / "feedback"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / name).write_text(page.read_text())
    return dest / name


def test_the_teachers_page_says_it_is_the_grade_of_record_and_another_students_is_untouched(tmp_path):
    course = _course(tmp_path)
    assert mark_of_record(course, "broadcasting", "ada", at=AT) == ["broadcasting.html"]
    ada = (tmp_path / "feedback" / "ada" / "broadcasting" / "broadcasting.html").read_text()
    line = ("this page, for your submission of 2026-11-01 10:00:00 UTC, is your grade of record for broadcasting "
            "(a page that says &quot;Graded on submit&quot; or &quot;Replaced&quot; is not)")
    assert ada.index("<body>") < ada.index(line) < ada.index("<h4>") and ada.count("grade of record") == 1
    assert "Graded by your teacher at 2026-11-" in ada and " UTC: " in ada
    assert record_of(ada) == {"student": "ada", "assignment": "broadcasting", "submission": "2026-11-01 10:00:00 UTC"}
    assert (tmp_path / "feedback" / "bob" / "broadcasting" / "broadcasting.html").read_text() == PAGE  # control


def test_the_time_is_in_the_exchanges_timezone_and_a_student_without_pages_gets_nothing(tmp_path):
    course = _course(tmp_path, "c = get_config()\nc.Exchange.timezone = 'Europe/Paris'\n")
    mark_of_record(course, "broadcasting", "ada", at=AT)
    assert " CET: " in (tmp_path / "feedback" / "ada" / "broadcasting" / "broadcasting.html").read_text()
    assert mark_of_record(course, "broadcasting", "carol", at=AT) == []
    assert mark_of_record(course, "other", "ada", at=AT) == []


@pytest.mark.e2e
def test_only_the_newest_graded_page_counts_an_earlier_released_one_says_it_was_replaced(tmp_path):
    course = _course(tmp_path)
    mark_of_record(course, "broadcasting", "ada", at=AT - 86400)
    mark_of_record(course, "broadcasting", "bob", at=AT - 86400)
    first = _release(tmp_path, tmp_path / "feedback" / "ada" / "broadcasting" / "broadcasting.html", "a1.html")
    bob = _release(tmp_path, tmp_path / "feedback" / "bob" / "broadcasting" / "broadcasting.html", "b1.html")
    mark_of_record(course, "broadcasting", "ada", at=AT - 3600)  # a regrade of the same submission: still of record
    assert "is your grade of record" in first.read_text() and "Replaced: " not in first.read_text()
    page = _page(tmp_path, "ada", SECOND)  # ada resubmitted; graded again after the due date
    mark_of_record(course, "broadcasting", "ada", at=AT)
    second = _release(tmp_path, page, "a2.html")
    old, new = first.read_text(), second.read_text()
    assert new.count("grade of record") == 1 and "for your submission of 2026-11-02 09:30:00 UTC" in new
    assert "is your grade of record" not in old and old.count("Replaced: ") == 1
    assert ("Replaced: your teacher graded your submission of 2026-11-02 09:30:00 UTC at 2026-11-30" in old
            and "the page of that submission counts for broadcasting, not this one." in old)
    assert old.index("<body>") < old.index("Replaced: ") < old.index("<h4>")
    assert "is your grade of record" in bob.read_text()  # another student's page: untouched
    marked = [p for p in (first, second, bob) if "is your grade of record" in p.read_text()
              and record_of(p.read_text())["student"] == "ada"]
    assert marked == [second]  # one page of record for ada
