"""The local pool's end: a finished run leaves no thread or process of it behind; an interrupted one does not wait."""
import multiprocessing
import threading
import time
from concurrent.futures.process import _ExecutorManagerThread

import pytest

from graders.engine.executors.local import Pool


def _managers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if isinstance(t, _ExecutorManagerThread) and t.is_alive()]


def test_closing_a_finished_pool_ends_its_thread_and_processes():
    pool = Pool(1)
    assert pool._pool().submit(sum, [1, 2]).result(timeout=120) == 3
    assert _managers()  # control: a pool at work has its manager thread
    pool.close()
    # nothing left for the interpreter's exit hook to race with (it wrote into the closed wake-up pipe: EBADF)
    assert _managers() == [] and multiprocessing.active_children() == []


@pytest.mark.timing
def test_closing_an_interrupted_pool_does_not_wait_for_its_jobs():
    pool = Pool(1)
    pool._pool().submit(sum, [0]).result(timeout=120)  # started
    running = pool._pool().submit(time.sleep, 30)
    pool.running[running] = (None, False)  # as `submit` records a job in flight
    start = time.perf_counter()
    pool.close()
    assert time.perf_counter() - start < 10
    for child in multiprocessing.active_children():  # the sleeper, left by the interrupted run
        child.terminate()
        child.join()


def test_spreading_calls_over_the_pool_gives_each_result_and_none_for_a_call_that_failed():
    pool = Pool(2)
    try:
        assert pool.spread(divmod, [(7, 2), (1, 0), (9, 3)]) == [(3, 1), None, (3, 0)]  # 1 / 0 raised
    finally:
        pool.close()
