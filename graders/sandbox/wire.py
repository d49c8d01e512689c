"""The message format between the grader and a worker: a JSON header plus raw tensor bytes.

Why not pickle: unpickling what a student's process sends would run the
student's code inside the grader. Why not ``torch.save``: it costs about
0.3 ms a message, which would blur the timings of fast answers. Decoding
here builds only plain containers, numbers, strings and plain tensors, and
keeps each tensor's strides and storage offset, so non-contiguous inputs
arrive non-contiguous.

``Calls`` (the k calls of one timed request) travel column by column: the
tensors at one argument position, when they share dtype and layout, as one
buffer that the reader cuts into k views. Decoding 1024 inputs then costs one
``frombuffer`` and 1024 ``as_strided`` calls instead of 1024 of everything:
the inputs are decoded inside the timed window, so their cost must be small
next to the compute it measures.
"""
from __future__ import annotations

import json
import mmap
import os
import select
import socket
import struct
import time

import torch

from graders.model.errors import VecgradeError
from graders.sandbox.sealed import IN_FD, map_sealed

_DTYPES = {str(d): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
    torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)}


class WireError(VecgradeError, ValueError):
    """A message that does not follow the format."""


_ALIGN = 64  # where the first buffer of a message starts
Message = bytes | bytearray | memoryview | mmap.mmap  # a message as read: decoded in place where writable


class Calls(list):
    """The calls of one request, ``[(args, kwargs), ...]``; decoded as a plain list of the same."""


def _flat_extent(x: torch.Tensor) -> tuple[int, int]:
    """(storage offset, elements of storage from its start to the last one ``x`` uses)."""
    if not x.numel():
        return 0, 0
    offset = int(x.storage_offset())
    return offset, offset + 1 + sum((int(s) - 1) * int(st) for s, st in zip(x.shape, x.stride(), strict=True))


def _layout(x) -> tuple | None:
    if type(x) is not torch.Tensor or not x.numel():
        return None
    return (x.dtype, tuple(x.shape), x.stride(), *_flat_extent(x))


def _region_of(x: torch.Tensor, regions) -> tuple[int, int] | None:
    """(region index, byte offset of element 0) when ``x`` lives in one of the shared ``regions``."""
    if not regions or x.numel() == 0 and x.untyped_storage().data_ptr() == 0:
        return None
    ptr = x.untyped_storage().data_ptr()
    for i, base in enumerate(regions):
        start = base.data_ptr()
        if start <= ptr < start + base.numel():
            return i, ptr - start + x.storage_offset() * x.element_size()
    return None


def encode(obj, regions=()) -> bytes:
    """``regions``: uint8 tensors over memory both sides map (memfds); a tensor that lives there
    travels as a place in that memory, not as bytes, and the reader rebuilds it from its own mapping."""
    buffers: list[bytes] = []

    def column(values: list):
        """One argument position of every call: stacked in one buffer when the layouts agree."""
        layouts = {_layout(v) for v in values}
        if len(layouts) != 1 or None in layouts:
            return {"__each": [enc(v) for v in values]}
        layout = layouts.pop()
        assert layout is not None, "checked above"
        dtype, size, stride, offset, extent = layout
        flat = torch.cat([torch.as_strided(v.detach(), (extent,), (1,), 0) for v in values])
        buffers.append(flat.contiguous().view(torch.uint8).numpy().tobytes())
        return {"__stack": len(buffers) - 1, "dtype": str(dtype), "size": list(size), "stride": list(stride),
                "offset": offset, "extent": extent}

    def calls(x: Calls):
        arity = {len(args) for args, _ in x}
        names = {tuple(sorted(kwargs)) for _, kwargs in x}
        if len(arity) > 1 or len(names) > 1:
            return [enc((tuple(args), dict(kwargs))) for args, kwargs in x]
        width = arity.pop() if arity else 0
        keys: tuple = names.pop() if names else ()
        return {"__calls": len(x), "args": [column([args[p] for args, _ in x]) for p in range(width)],
                "kwargs": [[k, column([kwargs[k] for _, kwargs in x])] for k in keys]}

    def enc(x):
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, Calls):
            return calls(x)
        if isinstance(x, torch.Tensor):
            x = torch.Tensor.as_subclass(x.detach(), torch.Tensor)
            place = _region_of(x, regions)
            if place is not None:
                return {"__view": place[0], "dtype": str(x.dtype), "size": list(x.shape),
                        "stride": list(x.stride()), "byte_offset": place[1]}
            # the storage from its start, so the offset survives too (code reading storage_offset() sees it)
            offset, extent = _flat_extent(x)
            flat = torch.as_strided(x, (extent,), (1,), 0).contiguous()
            buffers.append(flat.view(torch.uint8).numpy().tobytes() if extent else b"")
            return {"__t": len(buffers) - 1, "dtype": str(x.dtype), "size": list(x.shape),
                    "stride": list(x.stride()), "offset": offset}
        if isinstance(x, tuple):
            return {"__tuple": [enc(v) for v in x]}
        if isinstance(x, list):
            return [enc(v) for v in x]
        if isinstance(x, dict):
            return {"__dict": [[str(k), enc(v)] for k, v in x.items()]}
        return {"__kind": type(x).__name__}

    header = json.dumps(enc(obj)).encode()
    # trailing spaces (JSON ignores them) so that the first buffer starts 64-byte aligned in the message: the
    # reader can then use it in place, without a copy
    header += b" " * (-(8 + len(header) + 8 * len(buffers)) % _ALIGN)
    parts = [struct.pack("<II", len(header), len(buffers)), header]
    parts += [struct.pack("<Q", len(b)) for b in buffers]
    return b"".join(parts + buffers)


class Opaque(str):
    """Stands for a value that is not data (a function, a module, a custom object)."""


MAX_DEPTH = 100  # containers inside containers a message may nest; deeper is malformed (bounds the reader's stack)
MAX_CALLS = 1 << 14  # calls one message may claim in all; far above any timed request (checks.timing.MAX_K)
_ERRORS = (struct.error, ValueError, TypeError, KeyError, IndexError, RuntimeError, OverflowError)


def decode(data: Message, regions=()):
    """The value ``encode`` made of ``data``, with tensors over ``regions`` (this side's own mappings).

    Every malformed message -- truncated, oversized counts, wrong types, nesting past ``MAX_DEPTH``, tensors
    that reach outside their buffer -- raises ``WireError`` and nothing else, in time and memory bounded by
    ``len(data)``: a tensor is a view of the message's own bytes when they are writable and aligned for its
    dtype (a message as ``recv_frame`` returns it), else of one copy of its buffer, or of a shared region; each
    buffer backs one tensor or one column (as ``encode`` writes them), so a short header cannot fan one
    buffer out into millions of views; the calls of a whole message count against one ``MAX_CALLS``.
    """
    try:
        reader = _Reader(data, regions)
        return reader.value(reader.root, 0)
    except WireError:
        raise
    except _ERRORS as exc:  # RecursionError (the JSON parser's own bound) is a RuntimeError
        raise WireError(f"malformed message: {type(exc).__name__}: {exc}"[:200]) from None


def _count(v, limit: int | None = None) -> int:
    """``v`` when it is a plain int in ``[0, limit]`` (bools, floats and strings are malformed)."""
    if type(v) is not int or v < 0 or limit is not None and v > limit:
        raise WireError(f"malformed count {v!r}"[:80])
    return v


def _shape(v) -> tuple[int, ...]:
    if type(v) is not list or not all(type(n) is int for n in v):
        raise WireError("malformed shape")
    return tuple(v)


def _view(x: dict, regions) -> torch.Tensor:
    """A tensor over the reader's OWN mapping of a shared region, after checking it fits inside."""
    dtype = _DTYPES.get(x["dtype"]) if isinstance(x["dtype"], str) else None
    i, offset = _count(x["__view"]), _count(x["byte_offset"])
    if dtype is None or not i < len(regions):
        raise WireError("malformed shared view")
    base = regions[i]
    size = dtype.itemsize
    size_, stride = _shape(x["size"]), _shape(x["stride"])
    if offset % size or base.numel() % size or min(stride, default=0) < 0 or min(size_, default=0) < 0 \
            or len(size_) != len(stride):
        raise WireError("malformed shared view")
    reach = 1 + sum((n - 1) * st for n, st in zip(size_, stride, strict=True)) if all(size_) else 0
    extent = offset // size + reach
    if extent * size > base.numel():
        raise WireError("shared view outside its memory")
    return base.view(dtype).as_strided(size_, stride, offset // size)


class _Reader:
    """One message split into its JSON header (``root``) and its buffers, with the regions its views may
    use; ``value`` rebuilds one header node."""

    def __init__(self, data: Message, regions) -> None:
        hlen, nbuf = struct.unpack_from("<II", data, 0)
        self.root = json.loads(bytes(data[8:8 + hlen]))
        pos = 8 + hlen
        lengths = struct.unpack_from(f"<{nbuf}Q", data, pos)
        pos += 8 * nbuf
        if pos + sum(lengths) > len(data):
            raise WireError("buffers past the end of the message")
        self.view = memoryview(data)
        self.spans: list[tuple[int, int]] = []  # each buffer's place in ``data``
        for n in lengths:
            self.spans.append((pos, n))
            pos += n
        self.regions = regions
        self.used: set[int] = set()
        self.calls_left = MAX_CALLS

    def value(self, x, depth: int):
        if depth > MAX_DEPTH:
            raise WireError(f"nested deeper than {MAX_DEPTH}")
        if isinstance(x, list):
            return [self.value(v, depth + 1) for v in x]
        if not isinstance(x, dict):
            return x
        if "__calls" in x:
            return self.calls(x, depth)
        if "__t" in x:
            return self.tensor(x)
        if "__view" in x:
            return _view(x, self.regions)
        if "__tuple" in x:
            return tuple(self.value(v, depth + 1) for v in x["__tuple"])
        if "__dict" in x:
            return {k: self.value(v, depth + 1) for k, v in x["__dict"]}
        if "__kind" in x:
            return Opaque(str(x["__kind"]))
        raise WireError("malformed message")

    def buffer(self, i, dtype_name) -> torch.Tensor:
        """Buffer ``i`` as a flat tensor of the named dtype."""
        dtype = _DTYPES.get(dtype_name) if isinstance(dtype_name, str) else None
        if dtype is None:
            raise WireError(f"unknown dtype {dtype_name!r}"[:80])
        i = _count(i, len(self.spans) - 1)
        if i in self.used:
            raise WireError(f"buffer {i} used twice")
        self.used.add(i)
        pos, n = self.spans[i]
        if not n:
            return torch.empty(0, dtype=dtype)
        raw = self.view[pos:pos + n]
        flat = None if raw.readonly else torch.frombuffer(raw, dtype=torch.uint8)
        if flat is None or flat.data_ptr() % dtype.itemsize:
            # a copy where the message cannot be used in place: read-only, or not aligned for the dtype
            flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
        return flat.view(dtype)

    def tensor(self, x: dict) -> torch.Tensor:
        flat = self.buffer(x["__t"], x["dtype"])
        return flat.as_strided(_shape(x["size"]), _shape(x["stride"]), _count(x.get("offset", 0)))

    def calls(self, x: dict, depth: int) -> list:
        n = _count(x["__calls"], self.calls_left)
        self.calls_left -= n
        args = [self.column(spec, n, depth) for spec in x["args"]]
        kwargs = [(str(k), self.column(spec, n, depth)) for k, spec in x["kwargs"]]
        return [(tuple(a[i] for a in args), {k: v[i] for k, v in kwargs}) for i in range(n)]

    def column(self, spec: dict, n: int, depth: int) -> list:
        """One argument position of ``n`` calls: each value on its own, or ``n`` views of one stacked buffer."""
        if "__each" in spec:
            values = [self.value(v, depth + 1) for v in spec["__each"]]
            if len(values) != n:
                raise WireError("malformed calls")
            return values
        flat = self.buffer(spec["__stack"], spec["dtype"])
        size, stride = _shape(spec["size"]), _shape(spec["stride"])
        offset, extent = _count(spec["offset"]), _count(spec["extent"])
        if extent <= 0 or flat.numel() != n * extent:
            raise WireError("malformed calls")
        return [flat.as_strided(size, stride, i * extent + offset) for i in range(n)]


# -- framing: a length, then the message; the reader never waits past its deadline ------------------
_LEN = struct.Struct("<Q")


def send_frame(sock: socket.socket, data: bytes, fds=(), timeout: float | None = None) -> None:
    """Send one message (and ``fds`` with its first byte, SCM_RIGHTS)."""
    sock.settimeout(timeout)
    frame = _LEN.pack(len(data)) + data
    sent = socket.send_fds(sock, [frame], list(fds)) if fds else sock.send(frame)
    if sent < len(frame):  # (an empty send to a peer that has read it all and closed would raise EPIPE)
        sock.sendall(memoryview(frame)[sent:])


def recv_frame(sock: socket.socket, deadline: float, max_bytes: int) -> bytearray:
    """One whole message, read without blocking past ``deadline`` (time.monotonic()).

    A peer that sends a header and then stops costs the reader its deadline, not forever.
    Raises TimeoutError at the deadline, EOFError when the peer closed, WireError when too large.
    """
    sock.setblocking(False)
    head = _read_exactly(sock, _LEN.size, deadline)
    (length,) = _LEN.unpack(head)
    if length > max_bytes:
        raise WireError(f"a reply of {length} bytes, more than the {max_bytes} allowed")
    return _read_exactly(sock, length, deadline)  # as read: a bytes() of it would be one more full copy


def _read_exactly(sock: socket.socket, n: int, deadline: float) -> bytearray:
    buf = bytearray(n)
    view, pos = memoryview(buf), 0
    while pos < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            continue
        try:
            got = sock.recv_into(view[pos:])
        except (BlockingIOError, InterruptedError):
            continue
        if got == 0:
            raise EOFError
        pos += got
    return buf


class Inbox:
    """The worker side's receive buffer, kept from one message to the next. A message is read into memory an
    earlier one already touched, so a timed request's inputs cost one copy inside its measured window, not also
    fresh pages (zeroed and faulted in: about as much again). What a message decodes to is a view of this memory
    until the next message arrives."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def room(self, n: int) -> memoryview:
        """``n`` bytes to read the next message into (grown when too small; kept otherwise)."""
        if len(self._buf) < n:
            self._buf = bytearray(n)  # the old one lives on only in what still views it
        return memoryview(self._buf)[:n]


def recv_frame_with_fds(sock: socket.socket, max_fds: int = 64,
                        inbox: Inbox | None = None) -> tuple[Message, list[int]]:
    """Blocking read of one message and the fds sent with it (the worker's side), into ``inbox`` when given (the
    message is then valid until the next read into it), else into a new buffer; never copied again. A message
    handed over in a sealed memfd (``graders.sandbox.sealed``) is that memfd mapped private, its fd not among
    the fds returned; one that cannot be mapped raises WireError."""
    sock.setblocking(True)
    head, fds, _, _ = socket.recv_fds(sock, _LEN.size, max_fds, socket.MSG_WAITALL)
    if len(head) < _LEN.size:
        raise EOFError
    (length,) = _LEN.unpack(head)
    if length & IN_FD:
        if not fds:
            raise WireError("a message in shared memory came without its memfd")
        try:
            return map_sealed(fds[0], length & ~IN_FD), fds[1:]
        except ValueError as exc:
            for fd in fds[1:]:
                os.close(fd)
            raise WireError(str(exc)) from None
    buf = inbox.room(length) if inbox is not None else bytearray(length)
    view, pos = memoryview(buf), 0
    while pos < length:
        got = sock.recv_into(view[pos:])
        if got == 0:
            raise EOFError
        pos += got
    return buf, fds
