"""JailSpec is the one source of a jail's settings: every other form of them (traits, command line, wire data,
Limits) is derived from it and comes back to it; one rlimit function, one environment builder."""
import dataclasses
import json
import os
import resource

import pytest

from graders.checks.vocabulary import Timeouts
from graders.pipeline.verdicts import TrustedVerdicts
from graders.sandbox import jail
from graders.sandbox.policy import Sandbox
from graders.sandbox.spec import MB, PASSED_ENV, JailSpec, Limits, Where, environment, set_rlimits
from graders.sandbox.wire import decode, encode

SPEC = JailSpec(memory_mb=512, cpu_s=7, file_mb=3, nproc=9, pids=11, uid=123_456, cgroup=True, userns=False,
                cwd="/w", home="/h", expose=("/a", "/b c"), expose_rw=("/h",), hide=("/a/x",), env=("K=v=w",))


def test_every_default_is_the_specs():
    defaults = jail.parser().parse_args(["--", "true"])
    assert jail.spec_of(defaults) == JailSpec()
    box = Sandbox()
    assert (box.memory_mb, box.cpu_s, box.file_mb, box.nproc, box.pids) == (
        JailSpec.memory_mb, JailSpec.cpu_s, JailSpec.file_mb, JailSpec.nproc, JailSpec.pids)
    assert Limits() == Limits(JailSpec.memory_mb * MB, JailSpec.cpu_s, JailSpec.file_mb * MB)
    verdicts = TrustedVerdicts()
    assert (verdicts.call_timeout, verdicts.cell_timeout, verdicts.load_timeout) == (
        Timeouts.call, Timeouts.cell, Limits.start_timeout)


def test_the_command_line_and_the_wire_give_back_the_same_spec():
    assert jail.spec_of(jail.parser().parse_args([*SPEC.to_argv(), "--", "true"])) == SPEC
    assert JailSpec.from_wire(decode(encode(("template", {"jail": SPEC.to_wire()})))[1]["jail"]) == SPEC
    assert JailSpec.from_wire(SPEC.to_wire()) == SPEC


@pytest.mark.parametrize("data", [
    None, [], {}, {**SPEC.to_wire(), "extra": 1}, {k: v for k, v in SPEC.to_wire().items() if k != "uid"},
    {**SPEC.to_wire(), "memory_mb": "512"}, {**SPEC.to_wire(), "memory_mb": -1},
    {**SPEC.to_wire(), "cgroup": 1}, {**SPEC.to_wire(), "expose": "/a"}, {**SPEC.to_wire(), "expose": [1]},
    {**SPEC.to_wire(), "home": 5},
])
def test_anything_but_a_spec_is_refused(data):
    with pytest.raises(ValueError):
        JailSpec.from_wire(data)


def test_the_sandbox_renders_its_spec_as_the_jails_options(tmp_path):
    box = Sandbox(memory_mb=1000, hide=[str(tmp_path / "hidden")])
    spec = box.jail_spec(str(tmp_path), uid=200_000)
    # memory_mb is the student's work on top of torch's footprint: the cgroup adds torch's resident memory, the
    # address space torch's address space (graders.sandbox.footprint)
    assert spec.memory_mb == box.group_mb() >= 1000 and spec.address_mb == box.address_mb() > spec.memory_mb
    assert spec.home == spec.cwd == str(tmp_path) and spec.expose_rw == (str(tmp_path),)
    assert os.path.realpath(tmp_path / "hidden") in spec.hide and spec.uid == 200_000
    args = box.jail_args(str(tmp_path), uid=200_000)
    assert jail.spec_of(jail.parser().parse_args([*args, "--", "true"])) == spec


def test_the_environment_keeps_nothing_of_the_graders_but_what_it_names():
    source = {"PATH": "/p", "PYTHONPATH": "/pp", "SECRET": "s", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    outside = environment(Where.OUTSIDE, "/h", source=source)
    assert outside["PATH"] == "/p" and outside["PYTHONPATH"] == "/pp" and "SECRET" not in outside
    assert outside["HOME"] == outside["TMPDIR"] == "/h" and outside["OMP_NUM_THREADS"] == "1"
    inside = environment(Where.INSIDE, "/h", ("K=v=w",), source=source)
    assert "SECRET" not in inside and "PYTHONPATH" not in inside and inside["PATH"] != "/p"
    assert inside["MPLBACKEND"] == "Agg" and inside["K"] == "v=w" and inside["HOME"] == "/h"
    assert set(inside) - set(PASSED_ENV) - {"K"} == set(environment(Where.INSIDE, "/h", source={}))


def _limits_in_a_child(apply) -> list[int]:
    """The soft rlimits (AS, CPU, FSIZE, CORE) a forked child has after ``apply``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            apply()
            got = [resource.getrlimit(r)[0] for r in (resource.RLIMIT_AS, resource.RLIMIT_CPU,
                                                      resource.RLIMIT_FSIZE, resource.RLIMIT_CORE)]
            os.write(write, json.dumps(got).encode())
        finally:
            os._exit(0)
    os.close(write)
    data = os.read(read, 1000)
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(data)


def test_one_rlimit_function_serves_the_spec_and_limits():
    spec = dataclasses.replace(JailSpec(), memory_mb=8192, cpu_s=50, file_mb=2, userns=True)
    assert _limits_in_a_child(spec.rlimits) == [8192 * MB, 50, 2 * MB, 0]
    assert _limits_in_a_child(Limits(8192 * MB, 40, 3 * MB).apply) == [8192 * MB, 40, 3 * MB, 0]
    assert _limits_in_a_child(lambda: set_rlimits(8192 * MB, 30, MB)) == [8192 * MB, 30, MB, 0]
    assert _limits_in_a_child(lambda: None) != [8192 * MB, 30, MB, 0]  # control: the child starts without them
