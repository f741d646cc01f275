"""Probes for the flash_attention exercise. They run INSIDE the sandbox, on its GPU.

``forward`` runs the candidate's attention_forward on copies of the judge's q, k, v on the GPU
and returns the output as a CPU copy. ``peak_memory`` builds the large inputs of the memory
checks itself (``shared.values``: too large to send) and measures, with the CUDA caching
allocator's own statistics, how much GPU memory the call allocated at its peak beyond what was
allocated before it. Probes return plain data and never judge.

The peak is reset through ``torch._C._cuda_resetPeakMemoryStats``, the function the public
``torch.cuda.reset_peak_memory_stats`` calls: the public one is forbidden to the candidate (it
would forge this measure) and so removed from the sandbox before their module loads; ``torch._C``
is outside every submission's subset.
"""

from __future__ import annotations

import torch

import flash_attention
import shared
from grader.sandbox import probekit

#: Bytes the probe allocates and frees right after resetting the peak: a peak below base + this after
#: the call means the statistic was reset while the candidate's code ran.
SENTINEL = 2**20


def _device() -> torch.device:
    return torch.device("cuda", torch.cuda.current_device())


def _copy(value):
    """A tensor as a CPU copy (the judge's zone has no GPU to read from); anything else described."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    return probekit.opaque(value)


def forward(q, k, v, causal, block_size):
    """attention_forward(q, k, v, causal=causal, block_size=block_size) on GPU copies of the judge's tensors.

    Returns {"out": the output (CPU copy), "device": its device type, "unchanged": [q, k, v as they were]}."""
    dev = _device()
    qd, kd, vd = (t.to(dev, copy=True) for t in (q, k, v))  # the judge's own q, k, v stay as they came
    out = flash_attention.attention_forward(qd, kd, vd, causal=causal, block_size=block_size)
    torch.cuda.synchronize(dev)
    return {"out": _copy(out), "device": out.device.type if isinstance(out, torch.Tensor) else None,
            "unchanged": [bool(torch.equal(after.cpu(), before)) for after, before in ((qd, q), (kd, k), (vd, v))]}


def _warm_up(q: torch.Tensor, k: torch.Tensor) -> None:
    """A small matmul in q's dtype and in float32 on this stream: cuBLAS's workspaces come from the caching
    allocator, once per stream, and belong to no one's call."""
    few = min(2, q.shape[-2], k.shape[-2])
    for dtype in {q.dtype, torch.float32}:
        a, b = q[..., :few, :].to(dtype), k[..., :few, :].to(dtype)
        (a @ b.transpose(-2, -1)).sum()


def peak_memory(seed, shape, dtype, causal, block_size, rows):
    """One large call: q (B, H, Lq, D), k and v (B, H, Lk, D) of ``dtype`` built from ``seed`` by shared.values.

    Returns {"peak": GPU bytes allocated at the call's peak beyond those allocated before it (the output
    included), "peak_reset": whether the sentinel left in the peak statistic was gone afterwards,
    "rows": out[:, :, rows] (CPU copy; the whole answer described when it is no such tensor)}."""
    b, h, lq, lk, d = shape
    dt = getattr(torch, dtype)
    dev = _device()
    q = shared.values(seed, 0, (b, h, lq, d), dt).to(dev)
    k = shared.values(seed, 1, (b, h, lk, d), dt).to(dev)
    v = shared.values(seed, 2, (b, h, lk, d), dt).to(dev)
    _warm_up(q, k)
    torch.cuda.synchronize(dev)
    base = torch.cuda.memory_allocated(dev)
    torch._C._cuda_resetPeakMemoryStats(dev.index)
    sentinel = torch.empty(SENTINEL, dtype=torch.uint8, device=dev)
    del sentinel
    out = flash_attention.attention_forward(q, k, v, causal=causal, block_size=block_size)
    torch.cuda.synchronize(dev)
    peak = torch.cuda.max_memory_allocated(dev)
    index = torch.tensor(rows)
    fits = isinstance(out, torch.Tensor) and out.dim() == 4 and out.shape[2] > int(index.max())
    return {"peak": max(0, int(peak) - int(base)), "peak_reset": bool(peak < base + SENTINEL),
            "rows": _copy(out[:, :, index.to(out.device)]) if fits else probekit.opaque(out)}
