"""Probes for the gradient_checkpointing exercise. They run INSIDE the sandbox.

Each probe builds the blocks of ``shared.py`` with the judge's parameters, calls the
candidate's checkpointed_forward under a seed the judge chose, and returns plain data:
the output, the gradients after ``out.backward(grad_out)``, the blocks' call log (index
and grad mode of every call, split into forward and backward), the CPU RNG state after
the forward and after the backward, what autograd packed for backward during the
forward (distinct floating-point storages, the parameters left out), and which of the
outputs the blocks returned during the forward are still alive once it has returned
(weak references to their storages, read after a garbage collection, before backward).
Probes never judge anything; the checks compare with the plain loop, computed judge-side.
"""

from __future__ import annotations

import contextlib
import gc

import torch
from torch import nn

import checkpointing
import shared
from grader.sandbox import probekit


class _SavedBytes:
    """saved_tensors_hooks that note every floating-point storage packed, except the parameters'."""

    def __init__(self, blocks: nn.Module):
        self.skip = {p.untyped_storage().data_ptr() for p in blocks.parameters()}
        self.storages: dict[int, int] = {}
        self.packed = 0

    def pack(self, t):
        self.packed += 1
        if t.is_floating_point():
            storage = t.untyped_storage()
            if storage.data_ptr() not in self.skip:
                self.storages[storage.data_ptr()] = storage.nbytes()
        return t

    @staticmethod
    def unpack(t):
        return t

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack)


def run(n, width, p, params, x, grad_out, segments, *, seed, container="list", x_requires_grad=True,
        params_require_grad=True, no_grad=False, backward=True, collect=False):
    """torch.manual_seed(seed); out = checkpointed_forward(blocks, x, segments); out.backward(grad_out).

    The backward runs when ``backward`` is set and out is a tensor of grad_out's shape that
    requires grad. Returns {"out", "out_requires_grad", "x_requires_grad", "x_after", "x_grad",
    "grads", "calls_forward", "calls_backward", "saved_bytes", "saved_storages",
    "alive_after_forward", "rng_after_forward", "rng_after_backward", "backward_ran"};
    alive_after_forward is [[block index, still alive], ...], one per block call of the forward, after a
    garbage collection when ``collect`` is set (only the check that reads it asks: one costs ~0.15 s).
    """
    calls: list = []
    outputs: list = []
    blocks = shared.load(shared.make_blocks(n, width, p, calls, outputs), params, requires_grad=params_require_grad)
    given = blocks if container == "modulelist" else list(blocks)
    xin = x.clone().requires_grad_(x_requires_grad)
    saved = _SavedBytes(blocks)
    torch.manual_seed(seed)
    with saved.hooks(), (torch.no_grad() if no_grad else contextlib.nullcontext()):
        out = checkpointing.checkpointed_forward(given, xin, segments)
    rng_after_forward = torch.get_rng_state()
    if not isinstance(out, torch.Tensor):
        return probekit.returned_instead(out)
    calls_forward = [list(c) for c in calls]
    if collect:
        gc.collect()  # what only a reference cycle holds is not kept for backward
    alive_after_forward = [[index, not ref.expired()] for index, ref in outputs]
    del outputs[:]
    report = {"out": probekit.tensor(out), "out_requires_grad": bool(out.requires_grad),
              "calls_forward": calls_forward, "saved_bytes": sum(saved.storages.values()),
              "saved_storages": len(saved.storages), "alive_after_forward": alive_after_forward,
              "rng_after_forward": rng_after_forward,
              "backward_ran": False, "rng_after_backward": None}
    del calls[:]
    if backward and out.requires_grad and out.shape == grad_out.shape:
        out.backward(grad_out.to(out.dtype))
        report["backward_ran"] = True
        report["rng_after_backward"] = torch.get_rng_state()
    report.update({"calls_backward": [list(c) for c in calls], "x_requires_grad": bool(xin.requires_grad),
                   "x_after": xin.detach().clone(), "x_grad": probekit.tensor(xin.grad) if xin.grad is not None else None,
                   "grads": probekit.gradients(blocks)})
    return report
