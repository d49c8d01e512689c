"""A grading job as data: one ``GradingRequest`` in, one ``GradingOutcome`` out, both JSON round-trippable.

A request says everything one student's grading needs and nothing of another's: the submission (its folder, or
its files inline for an executor that shares no folder with the course), the assignment's definitions and its
release's cells as the gradebook holds them (teacher data, the same in every request of a run), the settings the
grading steps read, the hidden cases' seed, the reference's measurements, and the verdicts already settled in
this run (program key -> verdicts: a job finds its own programs there by the keys it computes itself).

An outcome says what became of the submission (``SubmissionStatus``), why, with a wording for the student where
it differs, each exercise's verdicts and program key, the graded notebooks (JSON text) and where the time went.
The coordinator (graders.engine.coordinator) builds requests from paths and reads outcomes; it never parses,
keys or walks a student's content (graders.engine.job does, inside the student's own job).
"""
from __future__ import annotations

import base64
import dataclasses
import importlib
import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from traitlets.config import Config

from graders.model.errors import VecgradeError
from graders.model.verdict import Reason, Verdict

Verdicts = dict[str, dict[str, Verdict]]  # exercise -> part -> verdict


class SubmissionStatus(str, Enum):
    """What became of one submission's job: ``graded`` (every part decided: record it), ``not_graded`` (a part could
    not be graded: nothing is recorded, the reason says why) or ``refused`` (before any code ran)."""
    GRADED = "graded"
    NOT_GRADED = "not_graded"
    REFUSED = "refused"


# -- settings: the nbgrader config a job's steps read, as data ------------------------------------------------------
_CLASS = "__class__"


class Unshippable(VecgradeError, ValueError):
    """A setting that is not data (a function, an object): it cannot travel with a job."""


def _encode(value: Any) -> Any:
    if isinstance(value, type):
        return {_CLASS: f"{value.__module__}:{value.__qualname__}"}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    raise Unshippable(type(value).__name__)


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {_CLASS}:
            module, _, name = value[_CLASS].partition(":")
            found: Any = importlib.import_module(module)
            for part in name.split("."):
                found = getattr(found, part)
            return found
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def settings_of(config: Config) -> dict[str, dict[str, Any]]:
    """``config`` as data: every setting that is data or a class (a pipeline step); the others (the feedback
    exporter's filters, say) are for the course's own apps and stay behind."""
    out: dict[str, dict[str, Any]] = {}
    for section, values in config.items():
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            try:
                out.setdefault(section, {})[name] = _encode(value)
            except Unshippable:
                continue
    return out


def config_of(settings: dict[str, dict[str, Any]]) -> Config:
    """The ``Config`` that ``settings_of`` turned into data."""
    config = Config()
    for section, values in settings.items():
        for name, value in values.items():
            config[section][name] = _decode(value)
    return config


# -- the reference's measurements (graders.checks.submission.GradingRun.measured), as data --------------------------
def measured_to_json(by_machine: dict) -> dict:
    """``{machine: {"calibrations": {key: Calibration}, "reference_times": {key: (s, at)}}}`` with its tuple keys
    and dataclasses as lists and dicts."""
    out = {}
    for machine, measured in by_machine.items():
        out[machine] = {
            "calibrations": [[list(k), dataclasses.asdict(c)] for k, c in measured.get("calibrations", {}).items()],
            "reference_times": [[list(k), list(v)] for k, v in measured.get("reference_times", {}).items()]}
    return out


def measured_from_json(data: dict) -> dict:
    from graders.checks.timing import Calibration  # torch: only where a job runs
    out = {}
    for machine, measured in data.items():
        out[machine] = {
            "calibrations": {tuple(k): Calibration(**c) for k, c in measured.get("calibrations", [])},
            "reference_times": {tuple(k): tuple(v) for k, v in measured.get("reference_times", [])}}
    return out


def verdicts_to_json(verdicts: dict[str, dict[str, Verdict]]) -> dict:
    return {name: {part: v.to_json() for part, v in parts.items()} for name, parts in verdicts.items()}


def verdicts_from_json(data: dict) -> dict[str, dict[str, Verdict]]:
    out: dict[str, dict[str, Verdict]] = {}
    for name, parts in data.items():
        decoded = {part: Verdict.from_json(v) for part, v in parts.items()}
        out[name] = {part: v for part, v in decoded.items() if v is not None}
    return out


@dataclass
class GradingRequest:
    """One student's submission of one assignment to grade (see the module's docstring).

    ``folder``: the submission's folder, where the job's process can read it; ``files``: its files instead,
    relative path -> bytes (for an executor on another machine: ``with_files``). ``master``: the release's cells,
    ``graders.pipeline.master.release_cells``. ``known``: program key -> part -> verdict, settled in this run."""
    student: str
    assignment: str
    definitions: dict[str, str]
    settings: dict[str, dict[str, Any]]
    seed: int
    master: dict[str, Any] = field(default_factory=dict)
    folder: str | None = None
    files: dict[str, bytes] | None = None
    known: dict[str, dict[str, Verdict]] = field(default_factory=dict)
    measured: dict = field(default_factory=dict)
    warm_up: bool = False  # grading only to warm a process up: nothing of it is kept
    shown: str = ""  # the folder as the teacher reads it (``submitted/ada/broadcasting/``), for refusals

    def config(self) -> Config:
        return config_of(self.settings)

    def to_json(self) -> dict:
        return {"student": self.student, "assignment": self.assignment, "definitions": self.definitions,
                "settings": self.settings, "seed": self.seed, "master": self.master, "folder": self.folder,
                "files": None if self.files is None else
                {k: base64.b64encode(v).decode() for k, v in self.files.items()},
                "known": verdicts_to_json(self.known), "measured": measured_to_json(self.measured),
                "warm_up": self.warm_up, "shown": self.shown}

    @classmethod
    def from_json(cls, data: dict) -> GradingRequest:
        files = data.get("files")
        return cls(data["student"], data["assignment"], dict(data["definitions"]), dict(data["settings"]),
                   int(data["seed"]), dict(data.get("master") or {}), data.get("folder"),
                   None if files is None else {k: base64.b64decode(v) for k, v in files.items()},
                   verdicts_from_json(data.get("known") or {}), measured_from_json(data.get("measured") or {}),
                   bool(data.get("warm_up")), str(data.get("shown", "")))


@dataclass
class GradingOutcome:
    """What became of one request (see the module's docstring). ``notebooks``: notebook id -> the graded notebook
    (JSON text), only when ``status`` is graded; ``verdicts``: exercise -> part -> verdict; ``keys``: exercise ->
    program key; ``computed``: the exercises whose settled verdicts this job computed itself (the coordinator
    shares those); ``seconds``: where the job's time went (``kernel``, ``verdicts``, ``total``)."""
    student: str
    assignment: str
    status: SubmissionStatus
    reason: Reason | None = None
    message: str = ""
    for_student: str = ""
    notebooks: dict[str, str] = field(default_factory=dict)
    verdicts: Verdicts = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    computed: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def graded(self) -> bool:
        return self.status is SubmissionStatus.GRADED

    def to_json(self) -> dict:
        return {"student": self.student, "assignment": self.assignment, "status": self.status.value,
                "reason": None if self.reason is None else self.reason.value, "message": self.message,
                "for_student": self.for_student, "notebooks": self.notebooks,
                "verdicts": verdicts_to_json(self.verdicts), "keys": self.keys, "computed": self.computed,
                "seconds": self.seconds}

    @classmethod
    def from_json(cls, data: dict) -> GradingOutcome:
        reason = data.get("reason")
        return cls(data["student"], data["assignment"], SubmissionStatus(data["status"]),
                   None if reason is None else Reason(reason), data.get("message", ""), data.get("for_student", ""),
                   dict(data.get("notebooks") or {}), verdicts_from_json(data.get("verdicts") or {}),
                   dict(data.get("keys") or {}), list(data.get("computed") or []),
                   {k: float(v) for k, v in (data.get("seconds") or {}).items()})


def round_trip(value: GradingRequest | GradingOutcome) -> Any:
    """``value`` through JSON text and back (what an executor that ships text does; the tests check equality)."""
    return type(value).from_json(json.loads(json.dumps(value.to_json())))
