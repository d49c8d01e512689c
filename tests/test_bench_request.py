"""A timed request keeps only the outputs the grader samples: the rest are freed as they are produced, as a caller
that uses each result once would, so k large outputs never all sit in memory inside the measured window."""
import pytest
import torch

from graders.sandbox.worker import NotPlain, Worker

# each call records how many earlier outputs are still alive when it starts
TRACKED = ("import torch, weakref\n"
           "REFS = []\n"
           "ALIVE = []\n"
           "def f(a):\n"
           "    ALIVE.append(sum(r() is not None for r in REFS))\n"
           "    out = a * 2\n"
           "    REFS.append(weakref.ref(out))\n"
           "    return out\n")


def worker_with(source):
    worker = Worker()
    assert worker.load_cell("cell 1", source, 30) == {"error": None}
    return worker


def calls(k, size=4):
    return [((torch.full((size,), float(i)),), {}) for i in range(k)]


def test_a_timed_request_returns_the_sampled_outputs_in_order_and_frees_the_others():
    worker = worker_with(TRACKED)
    reply = worker.bench("f", calls(8), [5, 1, 5])
    assert [int(o[0]) for o in reply["outs"]] == [10, 2, 10]
    # before call i, only the sampled outputs of the calls before it are alive (1 from call 2 on, 2 from call 6 on)
    assert worker.namespace["ALIVE"] == [0, 0, 1, 1, 1, 1, 2, 2]
    del reply
    assert sum(r() is not None for r in worker.namespace["REFS"]) == 0


def test_large_unsampled_outputs_do_not_accumulate():
    worker = worker_with(TRACKED.replace("a * 2", "a.repeat(1 << 18)"))  # 1 MiB per output
    worker.bench("f", calls(64), [0])
    assert max(worker.namespace["ALIVE"]) == 1  # only the sampled one (the old request held all 63 before)


def test_every_output_is_still_refused_when_not_plain_even_if_it_is_not_sampled():
    source = ("import torch\n"
              "class Sub(torch.Tensor):\n"
              "    pass\n"
              "N = [0]\n"
              "def f(a):\n"
              "    N[0] += 1\n"
              "    return a.as_subclass(Sub) if N[0] == 3 else a + 1\n")
    worker = worker_with(source)
    with pytest.raises(NotPlain, match="not a plain torch.Tensor"):
        worker.bench("f", calls(6), [0])
    assert worker.namespace["N"] == [3]  # refused at once: no later call ran
