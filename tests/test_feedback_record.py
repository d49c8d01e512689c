"""The teacher's feedback page is marked as the grade of record among a student's pages (graders/course/feedback.py)."""
from graders.course.feedback import mark_of_record
from graders.coursedir.course import Course

PAGE = "<html><head></head><body>\n<h4>broadcasting</h4></body></html>"
AT = 1_796_000_000.0  # 2026-11-30 UTC


def _course(tmp_path, config: str = "") -> Course:
    (tmp_path / "nbgrader_config.py").write_text(config)
    for student in ("ada", "bob"):
        folder = tmp_path / "feedback" / student / "broadcasting"
        folder.mkdir(parents=True)
        (folder / "broadcasting.html").write_text(PAGE)
    return Course(tmp_path)


def test_the_teachers_page_says_it_is_the_grade_of_record_and_another_students_is_untouched(tmp_path):
    course = _course(tmp_path)
    assert mark_of_record(course, "broadcasting", "ada", at=AT) == ["broadcasting.html"]
    ada = (tmp_path / "feedback" / "ada" / "broadcasting" / "broadcasting.html").read_text()
    line = "this page is your grade of record for broadcasting (a page that says &quot;Graded on submit&quot; is not)"
    assert ada.index("<body>") < ada.index(line) < ada.index("<h4>") and ada.count("grade of record") == 1
    assert "Graded by your teacher at 2026-11-" in ada and " UTC: " in ada
    assert (tmp_path / "feedback" / "bob" / "broadcasting" / "broadcasting.html").read_text() == PAGE  # control


def test_the_time_is_in_the_exchanges_timezone_and_a_student_without_pages_gets_nothing(tmp_path):
    course = _course(tmp_path, "c = get_config()\nc.Exchange.timezone = 'Europe/Paris'\n")
    mark_of_record(course, "broadcasting", "ada", at=AT)
    assert " CET: " in (tmp_path / "feedback" / "ada" / "broadcasting" / "broadcasting.html").read_text()
    assert mark_of_record(course, "broadcasting", "carol", at=AT) == []
    assert mark_of_record(course, "other", "ada", at=AT) == []

