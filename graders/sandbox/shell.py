"""The process that runs a submitted notebook's cells for its feedback: an IPython shell, forked warm.

A Jupyter kernel is IPython's ``InteractiveShell`` behind ZeroMQ sockets; starting one per notebook
(a process, its sockets, a client waiting for it) took longer than grading the notebook. Feedback
needs only what each cell printed, displayed, returned or raised, so this process is that shell
without the messaging: the grader sends one cell at a time (``run``) and gets its outputs back as
nbformat outputs. It is forked from the grader's warm server (IPython and torch already imported)
into a jail of its own, like every process that runs student code, or started through
``Sandbox.wrap`` as ``python -m graders.sandbox.shell FD``.

Nothing it sends decides a mark: the verdicts come from graders.checks, in other processes. The
grader reads its replies against deadlines, caps them and checks their shape
(graders.sandbox.shell_session); the caps here only keep a flood from filling this process's memory.

- stdout and stderr, of Python (``print``) and of C code or programs (``os.system``, a library's
  warning): stream outputs, consecutive writes to one stream merged;
- shell lines (``!ls``, ``x = !ls``, ``%pip``, ``%conda``) are not run: the jail has no terminal for them and
  feedback has nothing to install; each says so in one line on stderr (``SHELL_SKIPPED``), and the cell goes on;
- ``%matplotlib inline`` (or no backend) shows figures inline, as in a kernel; a GUI backend or event loop
  (``%matplotlib qt``, ``%gui tk``) cannot open here: one line says figures are shown inline instead
  (``GUI_INLINE``), and the cell goes on;
- ``display`` and rich results: ``display_data`` and ``execute_result`` with every format IPython
  computes (matplotlib figures through its inline backend, as in a kernel);
- an exception: an ``error`` output with IPython's traceback;
- a cell past its budget: interrupted (SIGINT, a ``KeyboardInterrupt``), as nbclient interrupts a
  kernel; the grader kills the whole jail if the cell does not give up.
"""
from __future__ import annotations

import builtins
import importlib
import io
import os
import signal
import socket
import sys
import threading

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.text import LSString, SList
from traitlets import Type
from traitlets.config import Config

from graders.sandbox.protocol import CellRun, Failed, Role, encode_reply, hello, read_request, serve_requests
from graders.sandbox.wire import Message, send_frame

INLINE = "module://matplotlib_inline.backend_inline"  # what ipykernel sets: figures appear as outputs
FD_FILES = {1: ".vecgrade-stdout", 2: ".vecgrade-stderr"}  # where C-level output waits for the cell's end
SHELL_SKIPPED = "shell commands do not run while grading: `{cmd}` was skipped"
GUI_INLINE = "a `{gui}` window cannot open while grading: figures are shown inline"
INLINE_GUIS = (None, "inline", "auto")  # what ``%matplotlib`` may ask for and still show figures as a kernel does


class Outputs:
    """What the cell running now has output, within ``limit`` characters in all: past it, ``cut`` is set and
    nothing more is kept (the grader cuts outputs to its own limits; more would only fill this memory)."""

    def __init__(self, limit: int = 1 << 20):
        self.limit = limit
        self.items: list[dict] = []
        self.updates: list[dict] = []  # display updates of outputs of earlier cells
        self.size = 0
        self.cut = False
        self.clear_pending = False

    def add(self, output: dict) -> None:
        if self.clear_pending:
            self.items.clear()
            self.clear_pending = False
        size = len(repr(output))
        if self.size + size > self.limit:
            self.cut = True
            return
        self.items.append(output)
        self.size += size

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        room = self.limit - self.size
        if len(text) > room:
            text, self.cut = text[:max(0, room)], True
            if not text:
                return
        last = self.items[-1] if self.items and not self.clear_pending else None
        if last is not None and last.get("output_type") == "stream" and last.get("name") == name:
            last["text"] += text
            self.size += len(text)
        else:
            self.add({"output_type": "stream", "name": name, "text": text})

    def update(self, display_id: str, data: dict, metadata: dict) -> None:
        for item in self.items:
            if item.get("transient", {}).get("display_id") == display_id:
                item.update(data=data, metadata=metadata)
                return
        if len(self.updates) < 1000:
            self.updates.append({"display_id": display_id, "data": data, "metadata": metadata})

    def clear(self, wait: bool) -> None:
        if wait:
            self.clear_pending = True
        else:
            self.items.clear()


CELL = Outputs()


class Stream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` while a cell runs: text goes into the cell's outputs."""

    def __init__(self, name: str, fd: int):
        super().__init__()
        self.name_, self.fd = name, fd

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        CELL.stream(self.name_, text)
        return len(text)

    def fileno(self) -> int:  # C code and programs write here; read back at the cell's end
        return self.fd

    def isatty(self) -> bool:
        return False


class Publisher(DisplayPublisher):
    """``display(...)``: a display_data output (or an update of an earlier one, by its display id)."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        display_id = (transient or {}).get("display_id")
        if update and display_id is not None:
            CELL.update(str(display_id), dict(data), dict(metadata or {}))
            return
        output = {"output_type": "display_data", "data": dict(data), "metadata": dict(metadata or {})}
        if display_id is not None:
            output["transient"] = {"display_id": str(display_id)}
        CELL.add(output)

    def clear_output(self, wait=False) -> None:
        CELL.clear(bool(wait))


class ResultHook(DisplayHook):
    """The value of a cell's last expression: an execute_result output, as a kernel sends it."""

    def start_displayhook(self) -> None:
        self.pending: tuple[dict, dict] | None = None

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        self.pending = (dict(format_dict), dict(md_dict or {}))

    def finish_displayhook(self) -> None:
        pending, self.pending = getattr(self, "pending", None), None
        if pending is not None:
            CELL.add({"output_type": "execute_result", "data": pending[0], "metadata": pending[1],
                      "execution_count": self.prompt_count})


class Shell(InteractiveShell):
    """IPython's shell with a kernel's outputs: tracebacks and results become outputs, not terminal text."""

    displayhook_class = Type(ResultHook)
    display_pub_class = Type(Publisher)

    def _showtraceback(self, etype, evalue, stb) -> None:
        CELL.add({"output_type": "error", "ename": str(etype.__name__), "evalue": str(evalue),
                  "traceback": [str(line) for line in stb]})

    def init_environment(self) -> None:  # as ipykernel: no pager can work here
        os.environ.update(PAGER="cat", GIT_PAGER="cat")

    def system(self, cmd) -> None:  # type: ignore[override]
        """``!cmd``, ``%pip``, ``%conda``: one line, never run (see the module's docstring)."""
        print(SHELL_SKIPPED.format(cmd=" ".join(str(cmd).split())[:80]), file=sys.stderr)
        self.user_ns["_exit_code"] = 1

    system_piped = system_raw = system  # type: ignore[assignment]

    def getoutput(self, cmd, split=True, depth=0):
        """``x = !cmd``, ``!!cmd``, ``%sx``: the line, and no output."""
        self.system(cmd)
        return SList() if split else LSString("")

    def enable_gui(self, gui=None) -> None:
        """``%gui``, and the last step of ``%matplotlib``: no event loop runs here; inline needs none."""
        if gui not in INLINE_GUIS:
            print(GUI_INLINE.format(gui=gui), file=sys.stderr)

    def enable_matplotlib(self, gui=None):
        """``%matplotlib [backend]``: inline, as in a kernel; a GUI backend says so in one line and is inline too."""
        if gui not in INLINE_GUIS:
            print(GUI_INLINE.format(gui=gui), file=sys.stderr)
            gui = "inline"
        return super().enable_matplotlib(gui)


def _config() -> Config:
    config = Config()
    config.HistoryManager.enabled = False  # no history database: nothing to write, nothing to read back
    return config


class Runner:
    """The notebook's shell in this process; ``run`` is one cell."""

    def __init__(self):
        os.environ.setdefault("MPLBACKEND", INLINE)
        sys.argv = [""]
        if sys.path[:1] != [os.getcwd()]:  # forked from the warm server: its own folder came first, not the notebook's
            sys.path.insert(0, os.getcwd())  # a kernel imports the student's modules from there (``python -m``'s rule)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # an interrupt is a KeyboardInterrupt, as in a kernel
        home = os.environ.get("HOME") or os.getcwd()
        for fd, name in FD_FILES.items():  # C-level output and programs' output: a file, read after each cell
            target = os.open(os.path.join(home, name), os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
            os.dup2(target, fd)
            os.close(target)
        sys.stdout, sys.stderr = Stream("stdout", 1), Stream("stderr", 2)
        sys.stdin = open(os.devnull)  # input() raises EOFError: nobody is there to answer
        self.shell = Shell.instance(config=_config())

    def _collect_fds(self) -> None:
        for fd, name in ((1, "stdout"), (2, "stderr")):
            try:
                data = os.pread(fd, CELL.limit, 0)
                os.ftruncate(fd, 0)
            except OSError:
                continue
            CELL.stream(name, data.decode("utf-8", errors="replace"))

    def run(self, source: str, budget: float, limit: int) -> CellRun:
        global CELL
        CELL = Outputs(limit)
        count = None
        # past its budget the cell is interrupted as a kernel is: SIGINT. A timer thread sends it, so the cell's own
        # timers (signal.alarm, setitimer: the self-check's under autograde) neither stop nor move it
        watchdog = threading.Timer(max(0.001, float(budget)), os.kill, (os.getpid(), signal.SIGINT))
        watchdog.daemon = True
        try:
            watchdog.start()
            try:
                result = self.shell.run_cell(source, store_history=True)
                count = result.execution_count
            finally:
                watchdog.cancel()
        except KeyboardInterrupt:  # the interrupt came outside the student's code (IPython's own steps)
            CELL.add({"output_type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": []})
        except BaseException as exc:  # noqa: BLE001 - whatever a cell raised past IPython, it is an output
            CELL.add({"output_type": "error", "ename": type(exc).__name__, "evalue": str(exc)[:300], "traceback": []})
        sys.stdout, sys.stderr = Stream("stdout", 1), Stream("stderr", 2)  # a cell may have replaced them
        self._collect_fds()
        return {"outputs": CELL.items, "updates": CELL.updates, "count": count, "cut": CELL.cut}


def serve(sock: socket.socket) -> None:
    """Answer ``run`` requests on ``sock`` until the grader closes it."""
    runner = Runner()
    send_frame(sock, encode_reply(hello(0.0)))

    def respond(data: Message, fds: list[int]) -> bytes:
        for fd in fds:
            os.close(fd)
        try:
            payload = read_request(data, Role.SHELL).payload  # its one op: run
            reply: CellRun | Failed = runner.run(str(payload["source"]), float(payload["budget"]),
                                                 int(payload["limit"]))
        except BaseException as exc:  # noqa: BLE001 - report, never die on a request
            reply = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        return encode_reply(reply)

    serve_requests(sock, respond)


def warm_up() -> None:
    """In the warm server: pay IPython's lazy imports once (a shell made, used and dropped), and the course
    package's self-check that every notebook's first cell imports; then put back what making the shell changed
    in this process (``__main__``, two builtins), so the processes it forks start clean."""
    importlib.import_module("graders.student.selfcheck")
    main, names = sys.modules.get("__main__"), set(vars(builtins))
    stdout, stderr = sys.stdout, sys.stderr
    try:
        sys.stdout = sys.stderr = io.StringIO()
        shell = Shell.instance(config=_config())
        for source in ("x = 1\nx", "display(x)", "1 / 0", "%time x"):
            shell.run_cell(source)
    finally:
        Shell.clear_instance()
        InteractiveShell.clear_instance()
        sys.stdout, sys.stderr = stdout, stderr
        if main is not None:
            sys.modules["__main__"] = main
        for name in set(vars(builtins)) - names:
            delattr(builtins, name)


def main() -> None:
    """``python -m graders.sandbox.shell FD``: the shell as a program of its own (no warm server)."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    serve(sock)


if __name__ == "__main__":
    main()
