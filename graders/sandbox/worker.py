"""The process that runs untrusted code: one exercise's program, or the loop and reference.

Two roles, one module:

- the *template* (``python -m graders.sandbox.worker FD``) imports torch and
  the counting machinery once, warms them up, and then only forks: one child
  per exercise, on the grader's request. It runs no student code itself, and
  under the jail it is PID 1 of the namespace, so a child can neither signal
  it nor outlive it; it kills a child when the grader asks.
- a *child* serves one socket: it loads the cells it is given one by one,
  each with a time budget, and calls functions. It holds no expected output,
  no reference (when it serves a student) and no random state, and it sends
  back raw outputs only, each checked to be a plain tensor before anything
  reads it: no flags, identities or verdicts of its own. Its time is what
  the grader reads on the kernel's CPU clock of this process.
  In-place and view requirements are observed by the grader in memory it
  owns (see ``graders.sandbox.shared``).

Everything it sends goes through ``graders.sandbox.wire``: plain data only.
"""
from __future__ import annotations
import __future__

import functools
import linecache
import mmap
import os
import signal
import socket
import sys
import threading
import time
import types

from graders.model.errors import VecgradeError
from graders.sandbox.exits import ProcessExit
from graders.sandbox.protocol import (
    HELLO,
    ErrorCode,
    Failed,
    Killed,
    Op,
    Raised,
    Role,
    Started,
    dispatch,
    encode_reply,
    hello,
    read_request,
    serve_requests,
)
from graders.sandbox.wire import Message, WireError, send_frame

MAX_ERROR = 300  # characters of a student's exception message that reach feedback


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:MAX_ERROR]


class Undefined(VecgradeError, LookupError):
    """No function of the requested name is defined in the child's namespace (``ErrorCode.NOT_DEFINED``)."""


def raised(exc: BaseException) -> Raised | Failed:
    """The reply for a request that raised ``exc``: its first line, and its ``ErrorCode``; a request the child
    could not read (``WireError``: another op, another version) was not answered, ``Failed``."""
    if isinstance(exc, WireError):
        return {"error": _error_text(exc)}
    code = ErrorCode.NOT_DEFINED if isinstance(exc, Undefined) else ErrorCode.RAISED
    return {"error": _error_text(exc), "code": code}


class CellTimeout(BaseException):
    """A cell ran past its budget while loading (BaseException: `except Exception` does not swallow it)."""


class CountLimit(BaseException):
    """The counted call passed the bound: its work is already known to be too much."""


def _alarm(signum, frame):
    raise CellTimeout


def _counter_class():
    from torch.utils._python_dispatch import TorchDispatchMode

    class Counter(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            """torch wraps a mode's ``__torch_dispatch__`` in ``torch._disable_dynamo`` unless this says False, and
            that wrapper's first call imports torch._dynamo: 1.2 s in every grading process's template, for a
            compiler the checked subset never reaches (``torch.compile`` is a finding)."""
            return False

        def __init__(self, ops: dict, cap: int):
            super().__init__()
            self.ops, self.cap, self.total = ops, cap, 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            key = str(func.overloadpacket.__name__)
            self.ops[key] = self.ops.get(key, 0) + 1
            self.total += 1
            if self.total > self.cap:
                raise CountLimit
            return func(*args, **(kwargs or {}))

    return Counter


def _discard(*args, **kwargs) -> None:
    """``print`` and ``display`` in the grading child."""


class NotPlain(VecgradeError):
    """An output that is not a plain ``torch.Tensor`` (a subclass, a proxy): it could run code of its own when
    read, after the clock or the counter has stopped, so it is refused before anything touches it."""


def plain(out, containers: bool = False):
    """``out`` itself when it is an exact ``torch.Tensor`` (``type()`` runs no code of the object's), or, with
    ``containers``, plain numbers, strings, None and tuples, lists and dicts of those; else ``NotPlain``."""
    import torch
    kind = type(out)
    if kind is torch.Tensor:
        return out
    if containers and (out is None or kind in (bool, int, float, str)):
        return out
    if containers and kind in (tuple, list):
        for item in out:
            plain(item, containers)
        return out
    if containers and kind is dict:
        for key, item in out.items():
            plain(key, containers)
            plain(item, containers)
        return out
    raise NotPlain(f"returned a `{kind.__name__}`, not a plain torch.Tensor (subclasses and other objects are "
                   "refused: return the tensor itself)")


# annotations stay strings: the checker never sees them evaluated, so the child never evaluates them either
_COMPILE_FLAGS = __future__.annotations.compiler_flag


class Worker:
    def __init__(self):
        # what the student prints or displays goes nowhere here (the kernel shows it in feedback): formatting a
        # tensor for a print would only add time and ATen ops to the work being measured
        self.namespace: dict = {"__name__": "__main__", "print": _discard, "display": _discard}
        self.filenames: set[str] = set()  # the cells' own code: the only lines that count
        self.regions: list = []  # this request's shared argument memory

    # each handler returns a dict of plain values
    def load_cell(self, label, source, budget):
        """Run one cell as given (plain Python: the grader sends exactly the code it checked, at the cell's own
        line numbers); a cell that runs past ``budget`` seconds is stopped, and loading goes on."""
        return self._run(label, source, budget, self.namespace)

    def load_module(self, name, label, source, budget):
        """Run a module of the student's own (``helpers.py`` beside the notebook) into a fresh module registered
        in ``sys.modules``, before the cells load, so that they import it as the kernel did."""
        module = types.ModuleType(name)
        module.__dict__.update(print=_discard, display=_discard)
        sys.modules[name] = module
        return self._run(label, source, budget, module.__dict__)

    def _run(self, label, source, budget, namespace):
        filename = f"<{label}>"
        self.filenames.add(filename)
        signal.signal(signal.SIGALRM, _alarm)
        try:
            # like IPython: keep the cell's source, so inspect (and TorchScript) can read it
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            code = compile(source, filename, "exec", flags=_COMPILE_FLAGS, dont_inherit=True)
            signal.setitimer(signal.ITIMER_REAL, budget)
            try:
                exec(code, namespace)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except CellTimeout:
            return {"error": f"{label}: stopped after {budget:g} s"}
        except BaseException as exc:  # noqa: BLE001 - a student's cell may raise anything
            return {"error": f"{label}: {_error_text(exc)}"}
        return {"error": None}

    def _function(self, name):
        fn = self.namespace.get(name)
        if not callable(fn):
            raise Undefined(f"no function `{name}` is defined")
        return fn

    def call(self, name, args, kwargs):
        return {"out": plain(self._function(name)(*args, **kwargs), containers=True)}

    def bench(self, name, calls, which):
        """One timed request: the grader reads this process's CPU clock before sending it and after the reply, so
        decoding the inputs (they arrive with the request), the calls and encoding the outputs at ``which`` (the
        sample it checks) are all inside the measured window; every output is checked to be a plain tensor.

        Only the sampled outputs are kept: every other one is dropped as soon as it is checked, as a caller that
        uses each result once would, so the window holds the compute and not k outputs' worth of fresh memory
        (whose page faults dominated the time of answers with large outputs)."""
        fn = self._function(name)
        wanted = set(which)
        kept: dict[int, object] = {}
        for i, (args, kwargs) in enumerate(calls):
            out = plain(fn(*args, **kwargs))
            if i in wanted:
                kept[i] = out
            del out  # the last reference to an unsampled output: freed before the next call
        return {"outs": [kept[i] for i in which]}

    def count(self, name, warm, args, kwargs, cap):
        """ATen ops dispatched and cell lines run by one call, on every thread; stops past ``cap``. The warm-up
        call (lazy imports and caches are not the function's work) runs on other inputs (``warm``), so a cache
        keyed on the inputs' values cannot make the counted call free."""
        fn = self._function(name)
        plain(fn(*warm, **kwargs))
        ops: dict[str, int] = {}
        lines = [0]
        threads = set()
        files = frozenset(self.filenames)

        def tracer(frame, event, arg):
            if frame.f_code.co_filename not in files:
                return None  # library code: its work shows up as ATen ops
            if event == "line":
                lines[0] += 1
                threads.add(threading.get_ident())
                if lines[0] > cap:
                    raise CountLimit
            return tracer

        before = threading.active_count()
        out, stopped = None, False
        threading.settrace(tracer)
        sys.settrace(tracer)
        try:
            with _counter_class()(ops, cap):
                out = fn(*args, **kwargs)
                plain(out)  # inside the counter: a subclass is refused before any of its code could run unseen
        except CountLimit:
            stopped = True
        finally:
            sys.settrace(None)
            threading.settrace(None)
        extra = max(len(threads) - 1, threading.active_count() - before)
        return {"ops": ops, "lines": lines[0], "threads": extra, "stopped": stopped, "out": out}


def _shared_regions(fds: list[int]) -> list:
    import torch
    regions = []
    for fd in fds:
        size = os.fstat(fd).st_size
        region = mmap.mmap(fd, size)
        os.close(fd)
        regions.append(torch.frombuffer(region, dtype=torch.uint8))
    return regions


def serve(sock: socket.socket) -> None:
    serve_requests(sock, functools.partial(_handle, Worker()))


def _handle(worker: Worker, data: Message, fds: list[int]) -> bytes:
    """One request, answered as bytes; its inputs and outputs are freed before the reply goes out, so that none
    of their cost falls into the next request's timed window."""
    regions = []
    try:
        regions = _shared_regions(fds)
        asked = read_request(data, Role.CHILD, regions)
        return encode_reply({"ok": getattr(worker, asked.op.value)(**asked.payload)}, regions)
    except NotPlain as exc:
        return encode_reply({"refused": str(exc)})
    except BaseException as exc:  # noqa: BLE001 - report, never die on a student's error
        return encode_reply(raised(exc))


# -- the template ------------------------------------------------------------------------------------
def _warm_up() -> None:
    """Pay once, in the template, what every child would pay: lazy imports, the counter's dispatch-mode machinery,
    the first calls' caches (torch._dynamo stays unimported: see ``_counter_class``)."""
    import torch
    worker = Worker()
    worker.load_cell("warm-up", "import torch\ndef f(a):\n    return (a[:, None] * a[None]).softmax(-1).sum()\n", 30)
    worker.count("f", (torch.randn(4, 3),), (torch.randn(4, 3),), {}, 10_000)
    worker.bench("f", [((torch.randn(4, 3),), {})] * 2, [0])
    worker.load_cell("warm-up", "", 1)


def _child(conn_fd: int) -> None:
    # a fork of the child would share the grader's socket: it dies at once instead
    os.register_at_fork(after_in_child=lambda: os._exit(ProcessExit.FORKED_GRADING_CHILD))
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sock = socket.socket(fileno=conn_fd)
    try:
        # before any student code: the grader's end receives this with the kernel's record of who sent it
        # (SO_PASSCRED), which is how it learns this process's pid outside the jail, for its CPU clock
        sock.sendall(HELLO)
        serve(sock)
    finally:
        os._exit(ProcessExit.OK)


def _quiet_display() -> None:
    """``from IPython.display import display``, as common in a notebook as the bare name, binds the same discard
    in the children of this template (a feedback shell, forked elsewhere, keeps the real one)."""
    try:
        import IPython.display
    except (ImportError, OSError):  # no IPython here: the import fails in the child as in any Python
        return
    IPython.display.display = _discard


def template(control: socket.socket) -> None:
    """Fork a child per ``spawn`` request (its socket arrives with the request); kill one on ``kill``."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    _quiet_display()

    def spawn(payload: dict, fds: list[int]) -> Started | None:
        if len(fds) != 1:
            return None
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(fds[0])
        os.close(fds[0])
        return {"pid": pid}

    def kill(payload: dict, fds: list[int]) -> Killed:
        try:
            os.kill(int(payload["pid"]), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return {"killed": True}

    serve_requests(control, dispatch(Role.TEMPLATE, {Op.SPAWN: spawn, Op.KILL: kill}))


def warm_start(*warm_ups) -> socket.socket:
    """Start-up of a warm process (template or fork server): torch single-threaded, the counter warmed up,
    ``warm_ups`` called, "ready" sent on the control socket (argv[1]); returns that socket."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    control = socket.socket(fileno=int(sys.argv[1]))
    start = time.perf_counter()
    _warm_up()
    for warm_up in warm_ups:
        warm_up()
    send_frame(control, encode_reply(hello(time.perf_counter() - start)))
    return control


def main() -> None:
    template(warm_start())


if __name__ == "__main__":
    main()
