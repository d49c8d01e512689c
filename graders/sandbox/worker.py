"""The process that runs untrusted code: a student's cells, or the loop and reference.

It holds no expected output, no reference code (when it serves a student) and
no random state: it gets arguments, calls a function, and sends back what
came out. Everything it sends goes through ``graders.sandbox.wire``, which carries
plain data only: a tensor subclass or any other object the student's code
returns arrives at the grader as a plain tensor or as a type name, and can
neither run code there nor answer a comparison.

Run as ``python -m graders.sandbox.worker FD``; FD is a socket the parent passed in.
"""
from __future__ import annotations

import linecache
import os
import sys

from graders.sandbox.wire import decode, encode

MAX_ERROR = 300  # characters of a student's exception message that reach feedback


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:MAX_ERROR]


def _shares_storage(a, b) -> bool:
    import torch
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


class Worker:
    def __init__(self):
        self.namespace: dict = {"__name__": "__main__"}

    # each handler returns a dict of plain values
    def load(self, cells):
        from IPython.core.inputtransformer2 import TransformerManager
        transformer = TransformerManager()
        errors = []
        for label, source in cells:
            try:
                source = transformer.transform_cell(source)
                filename = f"<{label}>"
                # like IPython: keep the cell's source, so inspect (and TorchScript) can read it
                linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                code = compile(source, filename, "exec")
                exec(code, self.namespace)
            except BaseException as exc:  # noqa: BLE001 - a student's cell may raise anything
                if isinstance(exc, KeyboardInterrupt):
                    raise
                errors.append(f"{label}: {_error_text(exc)}")
        return {"errors": errors}

    def _function(self, name):
        fn = self.namespace.get(name)
        if not callable(fn):
            raise LookupError(f"no function `{name}` is defined")
        return fn

    def call(self, name, args, kwargs, return_args=False):
        fn = self._function(name)
        out = fn(*args, **kwargs)
        reply = {"out": out, "same_as_arg0": bool(args) and out is args[0],
                 "shares_arg0": bool(args) and _shares_storage(out, args[0])}
        if return_args:
            reply["args_after"] = list(args)
        return reply

    def batch(self, name, calls):
        """Several calls in one request, for timing: outputs only."""
        fn = self._function(name)
        return {"outs": [fn(*args, **kwargs) for args, kwargs in calls]}

    def count(self, name, args, kwargs):
        """ATen ops dispatched and Python lines run by one call."""
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        ops: dict[str, int] = {}

        class Counter(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                key = str(func.overloadpacket.__name__)
                ops[key] = ops.get(key, 0) + 1
                return func(*args, **(kwargs or {}))

        lines = [0]

        def tracer(frame, event, arg):
            name = frame.f_code.co_filename
            if not name.startswith("<") or name.startswith("<frozen"):
                return None  # library code: its work shows up as ATen ops
            if event == "line":
                lines[0] += 1
            return tracer

        fn = self._function(name)
        # warm-up on copies: lazy imports and caches are not the function's work
        fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args], **kwargs)
        sys.settrace(tracer)
        try:
            with Counter():
                fn(*args, **kwargs)
        finally:
            sys.settrace(None)
        return {"ops": ops, "lines": lines[0]}


def serve(conn) -> None:
    worker = Worker()
    while True:
        try:
            op, payload = decode(conn.recv_bytes())
        except EOFError:
            return
        try:
            reply = {"ok": getattr(worker, op)(**payload)}
            data = encode(reply)
        except BaseException as exc:  # noqa: BLE001 - report, never die on a student's error
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                data = encode({"error": _error_text(exc), "exit": True})
            else:
                data = encode({"error": _error_text(exc)})
        conn.send_bytes(data)


def main() -> None:
    from multiprocessing.connection import Connection
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    torch.set_num_threads(1)
    conn = Connection(int(sys.argv[1]))
    # a forked child would share the grader's socket: it dies at once instead
    os.register_at_fork(after_in_child=lambda: os._exit(70))
    # what the student prints must not reach the protocol: stdout and stderr go nowhere
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    serve(conn)


if __name__ == "__main__":
    main()
