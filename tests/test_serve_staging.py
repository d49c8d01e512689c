"""Staging an inbound entry: every cap (names, depth, files, bytes, cells) is counted before anything is copied
or parsed, and only what was counted is copied. Each both ways: the hostile entry refused before any copy, an
honest one staged byte for byte."""
from __future__ import annotations

import io
import os

import nbformat
import pytest

from graders.course.demo import make_course
from graders.pipeline import safecopy
from graders.pipeline.intake import Intake
from graders.pipeline.safecopy import Caps, Refused, stage
from graders.serve import watcher
from graders.serve.service import Service
from graders.serve.watcher import check_notebooks

from tests.testkit.exchange import ME, SOURCE, make_entry, make_nest

# --- stage: every cap counted before anything is copied; only what was counted is copied ---------------

def test_an_honest_entry_is_staged_byte_for_byte_with_its_folders(tmp_path):
    folder = make_entry(tmp_path / "inbound")
    (folder / "data" / "more").mkdir(parents=True)
    (folder / "data" / "more" / "table.csv").write_bytes(b"a,b\n1,2\n")
    stage(folder, tmp_path / "staged", ME, True, Caps(10**8))
    assert (tmp_path / "staged" / "broadcasting.ipynb").read_text() == SOURCE.read_text()
    assert (tmp_path / "staged" / "data" / "more" / "table.csv").read_bytes() == b"a,b\n1,2\n"


def test_twenty_nested_folders_with_long_names_are_refused_before_any_copy(tmp_path):
    folder = make_entry(tmp_path / "inbound")
    make_nest(folder, 20, 250)
    with pytest.raises(Refused) as found:
        stage(folder, tmp_path / "staged", ME, True, Caps(10**8))
    assert "too long" in str(found.value) and "\n" not in str(found.value)
    assert not (tmp_path / "staged").exists()
    folder2 = make_entry(tmp_path / "inbound2")
    make_nest(folder2, 12, 3)  # short names, but deeper than the cap
    with pytest.raises(Refused, match="more than 8 deep"):
        stage(folder2, tmp_path / "staged2", ME, True, Caps(10**8))
    make_nest(make_entry(tmp_path / "inbound3"), 8, 40)  # at the caps: staged
    stage(next((tmp_path / "inbound3").iterdir()), tmp_path / "staged3", ME, True, Caps(10**8))


def test_too_many_files_or_bytes_are_refused_before_any_copy(tmp_path):
    folder = make_entry(tmp_path / "inbound")
    for i in range(120):
        (folder / f"f{i}.txt").write_text("x")
    with pytest.raises(Refused, match="more than 100 files and folders"):
        stage(folder, tmp_path / "staged", ME, True, Caps(10**8, max_files=100))
    assert not (tmp_path / "staged").exists()
    stage(folder, tmp_path / "staged", ME, True, Caps(10**8, max_files=200))  # under the cap: staged
    sparse = make_entry(tmp_path / "sparse")
    with open(sparse / "big.bin", "wb") as f:  # a sparse file: no disk used, 200 MB when copied
        f.truncate(200 * 10**6)
    with pytest.raises(Refused, match="larger than 100 MB"):
        stage(sparse, tmp_path / "staged-sparse", ME, True, Caps(100 * 1024**2))
    assert not (tmp_path / "staged-sparse").exists()


@pytest.mark.parametrize("change", [b"grown" * 1000, None])
def test_a_file_that_changes_between_count_and_copy_is_refused_and_never_copied_past_its_count(
        tmp_path, monkeypatch, change):
    folder = make_entry(tmp_path / "inbound")
    (folder / "data.bin").write_bytes(b"x" * 100)
    survey = safecopy._survey

    def then_change(*args):
        plan = survey(*args)
        if change is None:
            os.truncate(folder / "data.bin", 10)
        else:
            with open(folder / "data.bin", "ab") as f:
                f.write(change)
        return plan

    monkeypatch.setattr(safecopy, "_survey", then_change)
    with pytest.raises(Refused, match="changed while it was being submitted"):
        stage(folder, tmp_path / "staged", ME, True, Caps(10**8))
    assert not (tmp_path / "staged").exists()


def test_a_file_that_grows_during_the_copy_is_read_one_byte_past_its_count_at_most(tmp_path, monkeypatch):
    """The copy asks for the counted size plus one byte, never to the end of the file."""
    folder = make_entry(tmp_path / "inbound")
    (folder / "data.bin").write_bytes(b"x" * 10)
    asked: list[int] = []
    real_read = io.BufferedReader.read

    class Spy(io.BufferedReader):
        def read(self, n=-1):
            asked.append(n)
            if n == 11:  # the student appends while the copy runs
                with open(folder / "data.bin", "ab") as f:
                    f.write(b"y" * 10**6)
            return real_read(self, n)

    opened = os.fdopen
    monkeypatch.setattr(safecopy.os, "fdopen", lambda fd, mode="r", *a, **k: Spy(io.FileIO(fd, "r"))
                        if mode == "rb" else opened(fd, mode, *a, **k))
    with pytest.raises(Refused, match="data.bin` changed while it was being submitted"):
        stage(folder, tmp_path / "staged", ME, True, Caps(10**8))
    assert -1 not in asked and max(asked) <= 10**6 + 1


# --- notebook cells: counted on the JSON, before nbformat validates -------------------------------------

def test_a_notebook_over_max_cells_is_refused_before_nbformat_reads_it(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1") for _ in range(51)])
    (tmp_path / "broadcasting.ipynb").write_text(nbformat.writes(nb))

    def never(*a, **k):
        raise AssertionError("nbformat read a notebook over the cap")

    monkeypatch.setattr(watcher.nbformat, "reads", never)
    with pytest.raises(Refused, match="holds more than 50 cells: delete the cells you do not need"):
        check_notebooks(tmp_path, ["broadcasting"], max_cells=50)
    monkeypatch.undo()
    assert check_notebooks(tmp_path, ["broadcasting"], max_cells=51) == ["broadcasting"]


def test_the_service_caps_are_the_intakes_one_source_for_each_number(tmp_path):
    course = make_course(tmp_path / "course")
    (course.root / "exchange" / "vecgrade" / "inbound").mkdir(parents=True)
    service = Service(course, ["broadcasting"])
    try:
        intake = Intake(config=service.config)
        caps = service.admission.caps
        assert (caps.max_cells, caps.max_files) == (intake.max_cells, intake.max_files)
        assert caps.max_bytes <= intake.max_bytes
    finally:
        service.close()
