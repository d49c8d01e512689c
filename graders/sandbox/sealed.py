"""A message handed over as memory, not copied through the socket: how a timed request's inputs reach a worker.

A timed request carries the inputs of k calls (up to tens of MB). Sent through
the socket, the kernel copies them into the worker, and that copy falls inside
the measured window (the worker's CPU clock runs while it reads): a fixed
cost per call that pulls every speed factor toward 1 (``docs/design/measure.md``).

Instead the grader writes the encoded message once into a memfd and seals it
(no write, no resize, no further seal: nobody, the worker included, can change
it again), then sends only a frame header whose length has ``IN_FD`` set, with
the memfd (SCM_RIGHTS). The worker maps it private and writable: reading an
input maps the grader's pages (the kernel faults them in 64 KB at a time), and
a function that writes into its inputs writes into its own copy of the pages
it touches, as it would write into its own memory. The same sealed message is
sent as is to every worker timed on it (the reference's and the student's).

Nothing is staged outside the window: the worker receives, maps and decodes
the message after the grader has read its CPU clock, as it did with the socket.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import socket
import struct
import weakref

IN_FD = 1 << 63  # set in a frame's length: the message is the whole of the first fd sent with the header
_HEADER = struct.Struct("<Q")  # the frame header of ``graders.sandbox.wire``
_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


class SealedMessage:
    """``data`` written into a memfd sealed against any change; ``fd`` stays open (close-on-exec) until ``close``
    or until the object is collected."""

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.length = len(data)
        self.fd = os.memfd_create("vecgrade-request", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        self._closer = weakref.finalize(self, os.close, self.fd)
        view, pos = memoryview(data), 0
        while pos < self.length:  # plain writes: a writable shared mapping would forbid F_SEAL_WRITE
            pos += os.write(self.fd, view[pos:])
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, _SEALS)

    def close(self) -> None:
        self._closer()


def send_sealed(sock: socket.socket, message: SealedMessage, timeout: float | None = None) -> None:
    """Send ``message`` as a frame header with ``IN_FD`` set and the memfd beside it."""
    sock.settimeout(timeout)
    socket.send_fds(sock, [_HEADER.pack(IN_FD | message.length)], [message.fd])


def map_sealed(fd: int, length: int) -> mmap.mmap:
    """The worker's side: ``length`` bytes of a sealed memfd, mapped private and writable (writes go to this
    process's own copy of a page), then ``fd`` closed. Raises ValueError when ``fd`` is not a fully sealed memfd
    of at least ``length`` bytes: only a message nobody can change is read in place."""
    try:
        sealed = fcntl.fcntl(fd, fcntl.F_GET_SEALS) & _SEALS == _SEALS
        if not sealed or not 0 < length <= os.fstat(fd).st_size:
            raise ValueError("a message in shared memory must be a sealed memfd of its length")
        return mmap.mmap(fd, length, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    except OSError as exc:
        raise ValueError(f"a message in shared memory could not be mapped: {exc.strerror}") from None
    finally:
        os.close(fd)
