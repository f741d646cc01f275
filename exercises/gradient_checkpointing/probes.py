"""Probes for the gradient_checkpointing exercise. They run INSIDE the sandbox.

Each probe builds the blocks of ``shared.py`` with the judge's parameters, calls the
candidate's checkpointed_forward under a seed the judge chose, and returns plain data:
the output, the gradients after ``out.backward(grad_out)``, the blocks' call log (index
and grad mode of every call, split into forward and backward), the CPU RNG state after
the forward and after the backward, what the forward left alive once it returned (bytes
of the floating-point storages it made, however they are held: saved for backward by
autograd, through any saved-tensor hooks, on a ctx, in a list), and which of the outputs
the blocks returned during the forward are still alive then (weak references to their
storages, read after a garbage collection, before backward).

Everything measured is kept in a ``probekit.Ledger`` that each block finds by its identity,
never on the blocks the candidate is handed (``grader.sandbox.instruments``).
Probes never judge anything; the checks compare with the plain loop, computed judge-side.
"""

from __future__ import annotations

import contextlib

import torch

import checkpointing
import shared
from grader.sandbox import probekit


class _Recorded(shared.Block):
    """A block that notes [its index, grad enabled] of every call, and a weak reference to what it returns,
    in the ledger it was attached to (the index is the attachment's tag, not an attribute)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        found = probekit.attached(self)
        if found is not None:
            found[0].note([found[1], torch.is_grad_enabled()])
        out = super().forward(x)
        if found is not None:
            found[0].watch(found[1], out, storage=True)
        return out


def run(n, width, p, params, x, grad_out, segments, *, seed, container="list", x_requires_grad=True,
        params_require_grad=True, no_grad=False, backward=True, collect=False):
    """torch.manual_seed(seed); out = checkpointed_forward(blocks, x, segments); out.backward(grad_out).

    The backward runs when ``backward`` is set and out is a tensor of grad_out's shape that
    requires grad. Returns {"out", "out_requires_grad", "x_requires_grad", "x_after", "x_grad",
    "grads", "calls_forward", "calls_backward", "saved_bytes", "saved_storages",
    "alive_after_forward", "rng_after_forward", "rng_after_backward", "backward_ran"};
    saved_bytes and saved_storages: the floating-point storages the forward made that are alive once
    it returned (the output included; x and the parameters are not the forward's); alive_after_forward is [[block index, still alive], ...], one per block call of the
    forward. Both after a garbage collection: a full one when ``collect`` is set (only the check that
    reads liveness asks: one costs ~0.15 s), else of what the call just made.
    """
    ledger = probekit.Ledger()
    blocks = shared.load(shared.make_blocks(n, width, p, block=_Recorded), params, requires_grad=params_require_grad)
    for index, block in enumerate(blocks):
        ledger.attach(block, index)
    given = blocks if container == "modulelist" else list(blocks)
    xin = x.clone().requires_grad_(x_requires_grad)
    torch.manual_seed(seed)
    with probekit.Allocations() as made, (torch.no_grad() if no_grad else contextlib.nullcontext()):
        out = checkpointing.checkpointed_forward(given, xin, segments)
    rng_after_forward = torch.get_rng_state()
    if not isinstance(out, torch.Tensor):
        return probekit.returned_instead(out)
    calls_forward = list(ledger.events)
    alive_after_forward = ledger.alive(collect=collect)
    ledger.forget_watched()
    saved_bytes, saved_storages = made.alive_bytes(exclude=[xin, *blocks.parameters()], collect=collect)
    report = {"out": probekit.tensor(out), "out_requires_grad": bool(out.requires_grad),
              "calls_forward": calls_forward, "saved_bytes": saved_bytes,
              "saved_storages": saved_storages, "alive_after_forward": alive_after_forward,
              "rng_after_forward": rng_after_forward,
              "backward_ran": False, "rng_after_backward": None}
    del ledger.events[:]
    if backward and out.requires_grad and out.shape == grad_out.shape:
        out.backward(grad_out.to(out.dtype))
        report["backward_ran"] = True
        report["rng_after_backward"] = torch.get_rng_state()
    report.update({"calls_backward": list(ledger.events), "x_requires_grad": bool(xin.requires_grad),
                   "x_after": xin.detach().clone(), "x_grad": probekit.tensor(xin.grad) if xin.grad is not None else None,
                   "grads": probekit.gradients(blocks)})
    return report
