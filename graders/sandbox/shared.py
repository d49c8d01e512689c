"""Arguments in memory the grader owns: how in-place and view requirements are observed, not reported.

Each tensor argument of a "correct" call is copied into its own memfd, which
the grader maps and passes to the worker with SCM_RIGHTS. The worker maps the
same pages and calls the function on tensors over them. Afterwards the
grader reads the arguments from its own mapping (did the function change
``a`` in place?), and an output that lives in that memory comes back as a
place in it (region, offset, strides), which the grader rebuilds from its own
mapping: whatever the worker claims, the values compared are the ones the
grader reads in its own memory.
"""
from __future__ import annotations

import mmap
import os

import torch

_ALIGN = 64  # every region holds whole elements of any dtype


def _extent(t: torch.Tensor) -> int:
    """Elements of storage from its start up to the last one ``t`` uses."""
    if t.numel() == 0:
        return 0
    offset = int(t.storage_offset())  # a plain int for a real tensor; the stubs also allow a SymInt
    return offset + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))


class SharedArgs:
    """The tensors of ``args`` copied, layout and all, into memfds; ``args`` are tensors over the grader's mapping."""

    def __init__(self, args: tuple):
        self.fds: list[int] = []
        self.regions: list[torch.Tensor] = []  # uint8 views of the grader's mappings
        self._maps: list[mmap.mmap] = []
        self.args = tuple(self._share(a) if isinstance(a, torch.Tensor) else a for a in args)

    def _share(self, t: torch.Tensor) -> torch.Tensor:
        t = torch.Tensor.as_subclass(t.detach(), torch.Tensor)
        extent = _extent(t)
        nbytes = max(_ALIGN, -(-extent * t.element_size() // _ALIGN) * _ALIGN)
        fd = os.memfd_create("vecgrade-arg", os.MFD_CLOEXEC)
        os.ftruncate(fd, nbytes)
        region = mmap.mmap(fd, nbytes)
        base = torch.frombuffer(region, dtype=torch.uint8)
        if extent:
            flat = torch.as_strided(t, (extent,), (1,), 0)
            base[:extent * t.element_size()].view(t.dtype).copy_(flat)
        self.fds.append(fd)
        self._maps.append(region)
        self.regions.append(base)
        return base.view(t.dtype).as_strided(t.shape, t.stride(), t.storage_offset())

    def region_of(self, out) -> int | None:
        """Which argument's memory ``out`` (as rebuilt by ``wire.decode``) lives in, if any."""
        if not isinstance(out, torch.Tensor):
            return None
        ptr = out.untyped_storage().data_ptr()
        for i, base in enumerate(self.regions):
            if base.untyped_storage().data_ptr() == ptr:
                return i
        return None

    def is_argument(self, out, index: int) -> bool:
        """``out`` is argument ``index`` itself: same memory, offset, shape and strides."""
        arg = [a for a in self.args if isinstance(a, torch.Tensor)][index] if self.regions else None
        return (self.region_of(out) == index and arg is not None and out.shape == arg.shape
                and out.stride() == arg.stride() and out.storage_offset() == arg.storage_offset()
                and out.dtype == arg.dtype)

    def snapshot(self, out):
        """Copies of the arguments as they are now, and of ``out`` when it lives in shared memory."""
        args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in self.args)
        return args, (out.clone() if isinstance(out, torch.Tensor) else out)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        # the tensors over the mappings may outlive this object; the pages go when they do

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
