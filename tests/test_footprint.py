"""The jail's limits hold the student's work on top of what the installed torch needs, measured, not hard-coded
(graders.sandbox.footprint): whatever torch build pip installed, ``Sandbox.memory_mb`` means the same."""
import ast
import json
import resource
import subprocess
import sys

import pytest

from graders.sandbox import footprint, policy
from graders.sandbox.footprint import UNKNOWN, Footprint
from graders.sandbox.policy import Sandbox

FAKE = Footprint(address_mb=3500, resident_mb=400)


@pytest.fixture
def fake_torch(monkeypatch):
    """This process's torch footprint, as a CUDA build's might be."""
    monkeypatch.setattr(policy, "torch_footprint", lambda: FAKE)


def test_the_installed_torch_is_measured_in_a_fresh_process():
    found = footprint.measure()
    assert found is not None and 100 < found.resident_mb < found.address_mb, found


def test_a_python_without_torch_has_no_footprint(tmp_path):
    assert footprint.measure(python="/bin/false") is None
    assert footprint.measure(python=str(tmp_path / "missing")) is None


def test_a_build_is_measured_once_and_then_read_from_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache" / "torch-footprint.json"
    monkeypatch.setattr(footprint, "measure", lambda: Footprint(700, 250))
    assert footprint.footprint(cache) == Footprint(700, 250)
    assert json.loads(cache.read_text()) == {footprint.torch_key(): {"address_mb": 700, "resident_mb": 250}}
    monkeypatch.setattr(footprint, "measure", lambda: pytest.fail("measured again"))
    assert footprint.footprint(cache) == Footprint(700, 250)


def test_another_build_or_a_broken_cache_is_measured_anew(tmp_path, monkeypatch):
    cache = tmp_path / "torch-footprint.json"
    cache.write_text(json.dumps({"/other/python /other/torch 2.13.0+cpu 1": {"address_mb": 1, "resident_mb": 1}}))
    monkeypatch.setattr(footprint, "measure", lambda: Footprint(3600, 450))
    assert footprint.footprint(cache) == Footprint(3600, 450)
    assert len(json.loads(cache.read_text())) == 2  # both builds kept
    cache.write_text("{not json")
    assert footprint.footprint(cache) == Footprint(3600, 450)
    cache.write_text(json.dumps({footprint.torch_key(): {"address_mb": "lots"}}))
    assert footprint.footprint(cache) == Footprint(3600, 450)


def test_without_torch_or_a_measurement_the_footprint_is_unknown_and_nothing_is_kept(tmp_path, monkeypatch):
    cache = tmp_path / "torch-footprint.json"
    monkeypatch.setattr(footprint, "measure", lambda: None)
    assert footprint.footprint(cache) == UNKNOWN and not cache.exists()
    monkeypatch.setattr(footprint, "torch_key", lambda: None)
    monkeypatch.setattr(footprint, "measure", lambda: pytest.fail("nothing to measure"))
    assert footprint.footprint(cache) == UNKNOWN


def test_a_cache_that_cannot_be_written_costs_a_measurement_only(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(footprint, "measure", lambda: Footprint(700, 250))
    assert footprint.footprint(tmp_path / "file" / "torch-footprint.json") == Footprint(700, 250)


def test_the_limits_add_torchs_footprint_to_memory_mb(fake_torch, tmp_path):
    box = Sandbox(memory_mb=1000)
    assert box.limits(10).memory_bytes == (1000 + 3500) * 1024 ** 2
    args = box.jail_args(str(tmp_path))
    assert args[args.index("--address-mb") + 1] == "4500"  # each process's address space
    assert args[args.index("--memory-mb") + 1] == "1400"  # the jail's cgroup: real memory
    assert Sandbox(memory_mb=2000).limits(10).memory_bytes == 5500 * 1024 ** 2  # control: it follows memory_mb


@pytest.mark.skipif(not Sandbox().status()[0], reason="no sandbox here")
def test_a_jailed_process_gets_the_address_space_limit_and_a_process_over_it_fails(fake_torch, tmp_path):
    # maps BLOCK MB without touching it: the address-space limit holds it or not, the cgroup never sees it
    code = ("import mmap, resource\ntry:\n    block = mmap.mmap(-1, BLOCK << 20)\n    held = True\nexcept OSError:\n"
            "    held = False\nprint({'limit': resource.getrlimit(resource.RLIMIT_AS)[0] >> 20, 'held': held})\n")
    box = Sandbox(memory_mb=100)

    def run(block_mb: int, given_mb: int | None = None) -> dict:
        given = None if given_mb is None else lambda: resource.setrlimit(resource.RLIMIT_AS, (given_mb << 20,) * 2)
        out = subprocess.run(box.wrap([sys.executable, "-c", code.replace("BLOCK", str(block_mb))],
                                      scratch=str(tmp_path)), capture_output=True, text=True, timeout=120,
                             preexec_fn=given)
        assert out.returncode == 0, out.stderr[-2000:]
        return ast.literal_eval(out.stdout.strip().splitlines()[-1])

    assert run(3000) == {"limit": 3600, "held": True}  # under torch's (fake) 3500 MB and the 100 for work
    assert run(3700)["held"] is False  # past them
    assert resource.getrlimit(resource.RLIMIT_AS)[0] != 3600 << 20  # the grader's own is untouched
    assert run(10, given_mb=2048)["limit"] == 2048  # a lower limit the grader started it with is never raised
