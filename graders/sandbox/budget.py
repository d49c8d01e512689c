"""The notebook's time budget: what the student's own processes spent, and whose a spent budget is.

One ``NotebookBudget`` per graded notebook (``notebook_timeout`` seconds; ``GradingRun.grade`` makes it) is handed
to every ``WorkerSession`` that runs the notebook's code (graders.sandbox.session) and to every exercise's checks
(graders.checks.parts). The sessions ``charge`` it with the program's time of each thing the student's code does:
loading every cell and module, for every exercise (and again for a sibling or a child forked anew), and every call,
count and timed request. The program's time of a request is measured from the kernel (``clock.ProgramClock``): its
wall time less the time its process waited in the run queue, so sleeping and computing are the program's and the
machine's load is not. Starting a jail or a process, and the grader's own work (the reference, comparisons) are
never charged.

Each load's and request's limit is cut to what is left (``limit``), plus ``GRACE`` so that a program that sleeps
or spins through a cut limit is seen to have spent the budget whatever the kernel's wake-up delay. Whose a spent
budget is:

- the program spent it (``spent >= seconds``): ``OutOfTime``, the rest of the notebook's parts fail with
  ``Reason.OUT_OF_TIME``, a verdict never shared (it depends on the rest of the notebook);
- the wall time of the program's loads and requests passed ``WALL_FACTOR`` times the budget while the program had
  spent less (a machine so loaded the program cannot get its time; the grader's own work is not counted), or a
  limit the budget cut ran out while the program had spent less than what was left (its load kept the program off
  the CPU): ``MachineOutOfTime``, ``Reason.BUDGET``, not graded.

Where the kernel does not report a process's run-queue wait (``clock.run_queue_wait``), a request's whole wall time
is the program's (``exact`` is False, and the message says so): a sleeping program must not escape its budget, so
on such a machine its load is charged to the program.
"""
from __future__ import annotations

from graders.sandbox.processes import WorkerFailure

__all__ = ["GRACE", "WALL_FACTOR", "MachineOutOfTime", "NotebookBudget", "OutOfTime"]

WALL_FACTOR = 3.0  # the wall-clock cap, in budgets: past it, what is left of the budget is the machine's fault
MIN_LIMIT = 0.01  # a limit is never 0 (a timer of 0 is no timer)
GRACE = 0.5  # seconds a cut limit has past what is left, so that a program that runs through it is seen to spend it


class OutOfTime(WorkerFailure):
    """The notebook's own code used up the notebook's time budget: the program's doing (``Reason.OUT_OF_TIME``)."""


class MachineOutOfTime(WorkerFailure):
    """The grading machine's time ran out before the program had spent its budget (``Reason.BUDGET``)."""


class NotebookBudget:
    """``seconds`` of the program's own time for one notebook, within ``WALL_FACTOR`` times as much wall time of its
    loads and requests (the wall-clock cap). ``spent``: the program's seconds charged so far, ``wall``: the wall
    seconds of the loads and requests they were measured in; ``exact``: every charge was measured with the run-queue
    wait (False: some counted all their wall time, see ``clock.ProgramClock``)."""

    def __init__(self, seconds: float, wall_factor: float | None = None):
        self.seconds = float(seconds)
        self.wall_cap = (WALL_FACTOR if wall_factor is None else wall_factor) * self.seconds
        self.spent, self.wall, self.exact = 0.0, 0.0, True

    def charge(self, seconds: float, exact: bool = True, wall: float | None = None) -> None:
        """Add ``seconds`` of the program's own time, measured over ``wall`` seconds (default: as many)."""
        self.spent += max(0.0, seconds)
        self.wall += max(0.0, seconds if wall is None else wall)
        self.exact = self.exact and exact

    @property
    def spent_out(self) -> bool:
        return self.spent >= self.seconds

    @property
    def wall_left(self) -> float:
        """Wall seconds left to the cap."""
        return self.wall_cap - self.wall

    @property
    def capped(self) -> bool:
        return self.wall_left <= 0

    def left(self) -> float:
        """Seconds of the program's time left; ``OutOfTime`` when it spent them, ``MachineOutOfTime`` when the wall
        clock passed the cap first."""
        if self.spent_out:
            raise self.out_of_time()
        if self.capped:
            raise self.machine_out_of_time(f"its loads and requests took {self.wall:.3g} s of wall "
                                           f"time, the cap of {self.wall_cap / self.seconds:g} times the budget")
        return self.seconds - self.spent

    def limit(self, seconds: float) -> float:
        """The limit of one load or request allowed ``seconds``: cut to what is left (plus ``GRACE``) and to the
        wall clock's cap; raises as ``left`` does."""
        return max(MIN_LIMIT, min(seconds, self.left() + GRACE, self.wall_left))

    def settle(self, cut: bool) -> None:
        """After a load or request ran out its limit (``cut``: the budget had cut that limit): raise whose it is
        when it is the budget's (the program spent it: ``OutOfTime``; the wall cap passed, or a cut limit ran out
        while the program had time left: ``MachineOutOfTime``). Returns for a whole limit run out with the budget
        left: the load's or request's own deadline, the answer's."""
        if self.spent_out:
            if cut:
                raise self.out_of_time()
            return
        if self.capped:
            raise self.machine_out_of_time(f"its loads and requests took {self.wall:.3g} s of wall "
                                           f"time, the cap of {self.wall_cap / self.seconds:g} times the budget")
        if cut:
            raise self.machine_out_of_time("a limit the budget had cut to what was left ran out while the code had "
                                           "run less than that")

    def out_of_time(self) -> OutOfTime:
        how = "" if self.exact else " (measured as wall time: this kernel does not report a process's run-queue wait)"
        return OutOfTime(f"the notebook's code used up its time budget: it ran {self.spent:.3g} s of the "
                         f"{self.seconds:g} s allowed{how}, loading its cells and modules and answering calls, "
                         "counts and timed requests, before this part was decided")

    def machine_out_of_time(self, why: str) -> MachineOutOfTime:
        return MachineOutOfTime(f"not graded: the grading machine was too busy, its load kept the notebook's code from "
                                f"its time ({why}; the code had run {self.spent:.3g} s of the {self.seconds:g} s "
                                "allowed)")
