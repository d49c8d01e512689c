"""Every exception class the kit defines derives from ``VecgradeError`` (graders.model.errors), except the
signals raised through a student's code, which must stay out of a student's ``except Exception``."""
import importlib
import inspect
import pickle
import pkgutil

import pytest

import graders
from graders.course.export import RosterError
from graders.course.results import NoGradebook
from graders.model.errors import VecgradeError
from graders.pipeline.refusals import EmptyNotebookError
from graders.sandbox.session import Deadline

# BaseException on purpose: a student's `except Exception` must not swallow them (see graders.model.errors)
THROUGH_STUDENT_CODE = {"graders.sandbox.worker.CellTimeout", "graders.sandbox.worker.CountLimit",
                        "graders.student.selfcheck._StillRunning"}
# SystemExit on purpose: raised while nbgrader_config.py loads, where traitlets logs and ignores an Exception
STOPS_THE_PROCESS = {"graders.pipeline.nbgrader_seam.NbgraderUntestedError"}


def kit_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of the package, by its dotted name."""
    found = {}
    for info in pkgutil.walk_packages(graders.__path__, "graders."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def strays(classes: dict[str, type[BaseException]], allowed: set[str]) -> list[str]:
    """The names of ``classes`` outside the root that ``allowed`` does not excuse."""
    return sorted(name for name, cls in classes.items() if not issubclass(cls, VecgradeError) and name not in allowed)


def test_every_exception_of_the_kit_has_the_one_root():
    found = kit_exceptions()
    assert len(found) > 30 and "graders.sandbox.processes.WorkerFailure" in found  # the walk saw the package
    assert strays(found, THROUGH_STUDENT_CODE | STOPS_THE_PROCESS) == []
    for name in THROUGH_STUDENT_CODE:
        assert not issubclass(found[name], Exception), name


def test_a_class_without_the_root_is_found():
    class Loose(Exception):
        pass

    class Rooted(VecgradeError):
        pass

    assert strays({"x.Loose": Loose, "x.Rooted": Rooted}, set()) == ["x.Loose"]
    assert strays({"x.Loose": Loose}, {"x.Loose"}) == []


def test_the_standard_bases_stay_for_callers_that_catch_them():
    from nbgrader.converters.base import NbGraderException  # nbgrader reports its own exceptions' messages

    assert issubclass(RosterError, ValueError) and issubclass(NoGradebook, FileNotFoundError)
    assert issubclass(EmptyNotebookError, NbGraderException)
    with pytest.raises(VecgradeError, match="gone"):
        raise NoGradebook("gone")


def test_an_error_with_fields_survives_a_trip_between_processes():
    back = pickle.loads(pickle.dumps(Deadline("late", cpu=1.5)))
    assert isinstance(back, VecgradeError) and str(back) == "late" and back.cpu == 1.5
