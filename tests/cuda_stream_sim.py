"""A model of CUDA streams on the CPU: enough of ``torch.cuda`` to run h2d_overlap's solutions without a GPU.

Time is simulated. The host issues work instantly and waits only where CUDA makes it wait (a
synchronize, a blocking copy, ``.cpu()``). Each stream runs its work in order; the GPU has one
copy engine and one compute engine, each running one piece of work at a time, in the order it
was issued; work on different streams overlaps when the engines allow. Events and
``wait_event``/``wait_stream`` order streams as CUDA does. A kernel that starts before the copy
of its input has finished reads an incomplete batch: its output is marked wrong (NaN), as a real
race would make it. This is the model the h2d_overlap checks assume; it stands in for a GPU, it
does not replace one.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import types

import torch as real_torch


class Clock:
    def __init__(self, copy_s: float, kernel_s: float):
        self.copy_s, self.kernel_s = copy_s, kernel_s
        self.host = 0.0
        self.engine_free = {"copy": 0.0, "compute": 0.0}
        self.streams: list[Stream] = []
        self.default = Stream(self)
        self.current = self.default

    def run(self, stream: Stream, engine: str, duration: float) -> tuple[float, float]:
        start = max(self.host, stream.tail, self.engine_free[engine])
        end = start + duration
        stream.tail = self.engine_free[engine] = end
        return start, end

    def synchronize(self) -> None:
        self.host = max([self.host] + [s.tail for s in self.streams])


class Stream:
    def __init__(self, clock: Clock, device=None):
        self.clock, self.tail = clock, 0.0
        clock.streams.append(self)

    def wait_event(self, event: Event) -> None:
        self.tail = max(self.tail, event.time)

    def wait_stream(self, other: Stream) -> None:
        self.tail = max(self.tail, other.tail)

    def record_event(self, event: Event | None = None) -> Event:
        event = event or Event(self.clock)
        event.time = self.tail
        return event

    def synchronize(self) -> None:
        self.clock.host = max(self.clock.host, self.tail)

    @property
    def cuda_stream(self) -> int:
        return id(self)


class Event:
    def __init__(self, clock: Clock):
        self.clock, self.time = clock, 0.0

    def record(self, stream: Stream | None = None) -> None:
        self.time = (stream or self.clock.current).tail


class Tensor:
    """A tensor of the model: its values (a real CPU tensor), where it is, and when its data is complete."""

    def __init__(self, clock: Clock, value, device: str, ready: float = 0.0, pinned: bool = False):
        self.clock, self.value, self.device_type, self.ready, self.pinned = clock, value, device, ready, pinned

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    device = property(lambda self: types.SimpleNamespace(type=self.device_type))

    def to(self, device, non_blocking: bool = False):
        if str(getattr(device, "type", device)) == "cpu":
            return self.cpu()
        out = Tensor(self.clock, self.value.clone(), "cuda")
        out.copy_(self, non_blocking=non_blocking)
        return out

    def copy_(self, src: Tensor, non_blocking: bool = False):
        clock = self.clock
        _, end = clock.run(clock.current, "copy", clock.copy_s)
        self.value, self.ready = src.value.clone(), end
        if not (non_blocking and src.pinned):  # a blocking copy, or one from pageable memory: the host waits
            clock.host = max(clock.host, end)
        return self

    def cpu(self):
        self.clock.current.synchronize()
        return Tensor(self.clock, self.value.clone(), "cpu", pinned=False)

    def record_stream(self, stream) -> None:
        pass

    def pin_memory(self):
        return Tensor(self.clock, self.value.clone(), "cpu", pinned=True)


def kernel(x: Tensor, fn) -> Tensor:
    """``fn(x.value)`` as one kernel on the current stream; NaN where it read a batch still being copied."""
    clock = x.clock
    start, end = clock.run(clock.current, "compute", clock.kernel_s)
    value = fn(x.value)
    if start < x.ready:  # the kernel read the batch before its copy finished
        value = value * math.nan
    return Tensor(clock, value, "cuda", ready=end)


def fake_torch(clock: Clock) -> types.SimpleNamespace:
    """What h2d_overlap's solutions use of ``torch``, on the model."""

    @contextlib.contextmanager
    def stream(s):
        before, clock.current = clock.current, s
        try:
            yield
        finally:
            clock.current = before

    def empty(*shape, dtype=None, device=None):
        size = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list, real_torch.Size)) else shape
        return Tensor(clock, real_torch.empty(size, dtype=dtype or real_torch.float32), str(getattr(device, "type", device)))

    cuda = types.SimpleNamespace(
        Stream=lambda device=None, **_: Stream(clock, device), Event=lambda **_: Event(clock), stream=stream,
        current_stream=lambda device=None: clock.current, synchronize=lambda device=None: clock.synchronize())
    return types.SimpleNamespace(cuda=cuda, empty=empty, Tensor=Tensor, device=real_torch.device,
                                 float32=real_torch.float32)


def load(source: str, clock: Clock, name: str) -> types.ModuleType:
    """A solution's module with ``import torch`` bound to the model."""
    torch = fake_torch(clock)

    def importer(module, *args, **kwargs):
        return torch if module == "torch" else builtins.__import__(module, *args, **kwargs)

    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": importer}
    exec(compile(source, name, "exec"), module.__dict__)
    return module
