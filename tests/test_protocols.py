"""The typed seams: every executor kind is an ``Executor`` and the verdict store a ``Store``, the Protocols their
callers annotate with (mypy checks the annotations; these check the same shapes at run time, both ways)."""
from graders.engine.executors import Executor, executor_for
from graders.engine.executors.dask import Dask
from graders.engine.executors.local import Pool, Serial
from graders.model.store import Store, VerdictStore

KINDS: tuple[type[Executor], ...] = (Serial, Pool, Dask)  # mypy: each kind has the Protocol's shape


def test_each_local_kind_is_an_executor():
    pool = Pool(2)  # its processes start on first use: none here
    try:
        assert isinstance(Serial(), Executor) and isinstance(pool, Executor)
        assert pool.capacity == 4 and pool.in_flight == 0 and pool.wait() == []
    finally:
        pool.close()
    assert type(executor_for(None, 1)) is Serial and type(executor_for("local://", 3)) is Pool and len(KINDS) == 3


def test_a_thing_without_the_executors_shape_is_not_one():
    class Half:  # submits and waits, but cannot be warmed or closed
        capacity, in_flight = 1, 0

        def submit(self, job):
            pass

        def wait(self):
            return []

    assert not isinstance(Half(), Executor)


def test_the_verdict_store_is_a_store_and_a_mapping_is_not():
    assert isinstance(VerdictStore(), Store)
    assert not isinstance({}, Store)  # get and `in`, but no put: it would keep anything, settled or not
