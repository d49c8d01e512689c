"""A file vecgrade rewrites is replaced whole (graders.model.atomic.write_atomically): a reader sees the old file
or the new one, the mode follows one rule, a failed write leaves the old file and no temporary behind; and the four
writers that use it (CSVs, the catalogue, feedback pages, the footprint cache) keep their own modes."""
import errno
import json
import os
import stat
import threading

import pytest

from graders.model import atomic
from graders.model.atomic import write_atomically
from graders.model.catalogue import CATALOGUE, AssignmentEntry, write_catalogue
from graders.model.csvsafe import read_rows, write_rows
from graders.sandbox import footprint
from graders.sandbox.footprint import Footprint
from graders.serve import pages


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """A umask of 0o027 for the test (and the old one back after it)."""
    old = os.umask(0o027)
    yield 0o027
    os.umask(old)


@pytest.fixture
def old(tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("old content\n")
    return path


def test_the_new_content_replaces_the_old_and_no_temporary_is_left(old):
    write_atomically(old, "new ✓\n")
    assert old.read_text(encoding="utf-8") == "new ✓\n"
    write_atomically(old, b"\x00bytes")
    assert old.read_bytes() == b"\x00bytes"
    assert [p.name for p in old.parent.iterdir()] == [old.name]


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path, umask):
    write_atomically(tmp_path / "new", "x")
    assert _mode(tmp_path / "new") == 0o666 & ~umask == 0o640


def test_a_replaced_file_keeps_its_mode(old, umask):
    os.chmod(old, 0o604)  # not what the umask gives: the file's own mode wins
    write_atomically(old, "x")
    assert _mode(old) == 0o604


def test_a_given_mode_wins_over_the_old_files_and_the_umask(old, umask):
    os.chmod(old, 0o600)
    write_atomically(old, "x", mode=0o644)
    assert _mode(old) == 0o644
    write_atomically(old.with_name("fresh"), "x", mode=0o600)
    assert _mode(old.with_name("fresh")) == 0o600


def _assert_untouched(old):
    assert old.read_text() == "old content\n"
    assert [p.name for p in old.parent.iterdir()] == [old.name]


def test_data_that_cannot_be_encoded_leaves_the_old_file(old):
    with pytest.raises(UnicodeEncodeError):
        write_atomically(old, "half \udc80 a surrogate")
    _assert_untouched(old)


def test_a_failed_rename_leaves_the_old_file_and_no_temporary(old, monkeypatch):
    def refuse(src, dst):
        raise PermissionError(errno.EACCES, "refused", str(dst))
    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(PermissionError):
        write_atomically(old, "new")
    _assert_untouched(old)


def test_a_disk_that_fills_up_halfway_leaves_the_old_file_and_no_temporary(old, monkeypatch):
    real = os.write
    calls = []

    def fill(fd, data):
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, data[:3])  # a short write: the rest must be written by a second call
    monkeypatch.setattr(atomic.os, "write", fill)
    with pytest.raises(OSError, match="No space"):
        write_atomically(old, "new content")
    assert calls == [11, 8]
    _assert_untouched(old)


def test_a_short_write_is_finished(old, monkeypatch):
    real = os.write
    monkeypatch.setattr(atomic.os, "write", lambda fd, data: real(fd, data[:2]))
    write_atomically(old, "written two bytes at a time")
    assert old.read_text() == "written two bytes at a time"


def test_while_the_new_content_is_written_a_reader_sees_the_old_file_whole(old, monkeypatch):
    real, seen = os.write, []

    def write(fd, data):
        written = real(fd, data[:4])
        seen.append(old.read_text())  # a reader between two pieces of the new content
        return written
    monkeypatch.setattr(atomic.os, "write", write)
    write_atomically(old, "new content")
    assert len(seen) == 3 and set(seen) == {"old content\n"}
    assert old.read_text() == "new content"


def test_a_missing_folder_is_an_error_and_creates_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "file", "x")
    assert list(tmp_path.iterdir()) == []


def test_two_threads_writing_one_path_leave_one_whole_content(tmp_path):
    path = tmp_path / "shared"
    contents = [b"a" * 300_000, b"b" * 200_000]
    seen: set[bytes] = set()
    start = threading.Barrier(3)

    def write(data: bytes):
        start.wait()
        for _ in range(30):
            write_atomically(path, data)

    def read():
        start.wait()
        for _ in range(60):
            if path.exists():
                seen.add(path.read_bytes())

    threads = [threading.Thread(target=write, args=(c,)) for c in contents] + [threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert path.read_bytes() in contents
    assert seen <= set(contents)  # a reader never saw a mix or half of one
    assert [p.name for p in tmp_path.iterdir()] == ["shared"]


# --- the writers that use it keep their modes ------------------------------------------------------------------

def test_a_csv_keeps_the_mode_the_teacher_gave_it(tmp_path, umask):
    dest = tmp_path / "export.csv"
    write_rows(dest, ["student"], [{"student": "=ada"}])
    assert _mode(dest) == 0o640
    os.chmod(dest, 0o600)
    write_rows(dest, ["student"], [{"student": "bob ✓"}])
    assert _mode(dest) == 0o600 and read_rows(dest) == [{"student": "bob ✓"}]


def test_the_catalogue_and_a_feedback_page_are_readable_by_all_whatever_the_umask(tmp_path, umask):
    write_catalogue(tmp_path / CATALOGUE, "abc", [AssignmentEntry("a1", "A1", 1, ())])
    page = pages.publish(tmp_path, "s3cret", ["nb"], "<p>one</p>")[0]
    page2 = pages.publish(tmp_path, "s3cret", ["nb"], "<p>two</p>")[0]
    assert page == page2 and page.read_text() == "<p>two</p>"
    assert _mode(tmp_path / CATALOGUE) == _mode(page) == 0o644
    assert sorted(p.name for p in page.parent.iterdir()) == [page.name]


def test_the_footprint_cache_is_the_users_own_and_a_failed_write_is_ignored(tmp_path, monkeypatch):
    cache = tmp_path / "cache" / "torch-footprint.json"
    monkeypatch.setattr(footprint, "measure", lambda: Footprint(700, 250))
    assert footprint.footprint(cache) == Footprint(700, 250)
    assert _mode(cache) == 0o600 and list(json.loads(cache.read_text()).values()) == [
        {"address_mb": 700, "resident_mb": 250}]
    monkeypatch.setattr(atomic.os, "replace", lambda src, dst: (_ for _ in ()).throw(OSError(errno.EROFS, "ro")))
    cache.write_text("{}")
    assert footprint.footprint(cache) == Footprint(700, 250)  # measured, not kept: no error
    assert cache.read_text() == "{}" and [p.name for p in cache.parent.iterdir()] == [cache.name]
