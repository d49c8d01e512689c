"""The jail, run directly: what confined code can and cannot reach."""
import os
import subprocess
import sys

import pytest

from graders.sandbox.policy import KIT_ROOT, Sandbox

PROBE = r'''
import os, socket
report = {"uid": os.getuid(), "pid": os.getpid(), "cwd": os.getcwd()}
for name, path in (("course", COURSE), ("kit", KIT)):
    report[name] = sorted(os.listdir(path)) if os.path.isdir(path) else None
try:
    socket.create_connection(("127.0.0.1", 22), timeout=2)
    report["net"] = "open"
except OSError as exc:
    report["net"] = type(exc).__name__
for name, path in (("scratch", os.path.join(SCRATCH, "w")), ("outside", os.path.join(COURSE, "w"))):
    try:
        open(path, "w").write("x")
        report[name] = "written"
    except OSError as exc:
        report[name] = type(exc).__name__
print(report)
'''


@pytest.fixture
def sandbox():
    box = Sandbox()
    confined, status = box.status()
    if not confined:
        pytest.skip(status)
    return box


def test_confined_code_sees_only_its_scratch(sandbox, tmp_path):
    course, scratch = tmp_path / "course", tmp_path / "scratch"
    course.mkdir()
    scratch.mkdir()
    (course / "gradebook.db").write_text("secret")
    sandbox.course_root = str(course)
    kit = str(KIT_ROOT)
    code = PROBE.replace("COURSE", repr(str(course))).replace("KIT", repr(kit)).replace("SCRATCH", repr(str(scratch)))
    out = subprocess.run(sandbox.wrap([sys.executable, "-c", code], scratch=str(scratch)),
                         capture_output=True, text=True, timeout=60)
    report = eval(out.stdout.strip().splitlines()[-1])  # our own probe's dict
    assert report["course"] in (None, []) and "gradebook.db" not in str(report)  # hidden: absent or empty
    assert report["net"] != "open"
    assert "assignments" not in (report["kit"] or [])
    assert report["scratch"] == "written" and report["outside"] != "written"
    assert report["pid"] == 1 and report["cwd"] == str(scratch)
    if os.geteuid() == 0:
        assert report["uid"] == 65534


def test_status_explains_when_the_sandbox_is_off():
    box = Sandbox(enabled=False)
    confined, status = box.status()
    assert not confined and status.startswith("sandbox off:")
    assert box.wrap(["true"], scratch="/tmp") == ["true"]
