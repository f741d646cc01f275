"""Probes for the evaluate exercise. They run INSIDE the sandbox.

Each probe builds a small classifier from the weights the check sends, calls the
candidate's evaluate on it and returns plain data: what evaluate returned, and what
the model and loss_fn saw at every call. Probes never judge; the checks compute the
expected loss and accuracy themselves and compare.

The model (``_Net``) is Linear -> Dropout -> Sequential(Dropout): its submodules are
named "lin", "drop", "block" and "block.0" ("" is the model itself). At every forward
it records each module's ``.training`` and ``torch.is_grad_enabled()`` (False under
no_grad and under inference_mode). Each batch's logits, the loss tensor loss_fn
returned for it, and a marker its autograd graph would hold (a tensor a custom Function
saves for backward, held by the graph's node itself and only while a graph exists) are
watched through weak references.

What is recorded, and the probe's settings (which call fails, whether to watch), live in a
``probekit.Ledger`` the model finds by its identity, never on the model the candidate is handed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import evaluate
from grader.sandbox import probekit


class BatchFailure(Exception):
    """The exception the probes' model or loss_fn raises on purpose."""


class _Mark(torch.autograd.Function):
    """x.clone(), whose node saves ``marker`` for backward: the marker's storage lives exactly as long as the
    graph (a saved tensor is the node's own, not an attribute anyone can drop)."""

    @staticmethod
    def forward(ctx, x, marker):
        ctx.save_for_backward(marker)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _modes(model: nn.Module) -> dict:
    return {name: bool(m.training) for name, m in model.named_modules()}


class _Net(nn.Module):
    def __init__(self, weight: torch.Tensor, bias: torch.Tensor):
        super().__init__()
        classes, features = weight.shape
        self.lin = nn.Linear(features, classes)
        self.drop = nn.Dropout(0.5)
        self.block = nn.Sequential(nn.Dropout(0.25))
        with torch.no_grad():
            self.lin.weight.copy_(weight)
            self.lin.bias.copy_(bias)

    def forward(self, x):
        found = probekit.attached(self)
        if found is None:
            return self.block(self.drop(self.lin(x)))
        ledger, settings = found
        k = len(ledger.events)
        ledger.note({"modes": _modes(self), "grad": bool(torch.is_grad_enabled())})
        if settings["fail_at"] == k:
            raise BatchFailure(f"model failed on batch {k}")
        out = self.block(self.drop(self.lin(x)))
        marker = torch.zeros(1)
        out = _Mark.apply(out, marker)
        if settings["watch"]:
            ledger.watch(k, out)
            ledger.watch(k, marker, storage=True)
        return out


def _net(weight, bias, *, fail_at=None, watch=False) -> tuple[_Net, probekit.Ledger]:
    """A _Net holding weight and bias, and the ledger it records in."""
    ledger = probekit.Ledger()
    return ledger.attach(_Net(weight, bias), {"fail_at": fail_at, "watch": watch}), ledger


def _in_modes(net: _Net, modes: dict | None) -> _Net:
    """``net`` in train mode, or each module in the mode ``modes`` names (train where it names none)."""
    if modes is None:
        return net.train()
    for name, m in net.named_modules():
        m.training = bool(modes.get(name, True))
    return net


def _value(v):
    """A returned value: a Python float as itself, a tensor as a copy, anything else opaque."""
    if type(v) in (float, int):
        return v
    if isinstance(v, torch.Tensor):
        return probekit.tensor(v)
    return probekit.opaque(v)


def _result(out):
    if not isinstance(out, dict):
        return probekit.returned_instead(out)
    keys = sorted(k if isinstance(k, str) else repr(k)[:60] for k in list(out)[:10])
    return {"keys": keys,
            "types": {k: type(out[k]).__name__ for k in ("loss", "accuracy") if k in out},
            "values": {k: _value(out[k]) for k in ("loss", "accuracy") if k in out}}


def _alive(ledger: probekit.Ledger) -> list[int]:
    """The batches (forward calls) whose logits, loss or graph marker is still alive, after a garbage collection."""
    return sorted({j for j, alive in ledger.alive() if alive})


def ev_run(weight, bias, batches, *, modes=None, kind="list", fail_model=None, fail_loss=None, watch=False):
    """evaluate(model, batches, loss_fn) on a _Net holding weight and bias.

    batches: [[inputs, targets], ...]; modes: {module name: training} set (each flag
    alone) before the call, default the whole model in train mode; kind: "list" (a
    list of tuples) or "generator" (a generator that records each fetch); fail_model /
    fail_loss: the 0-based forward / loss_fn call that raises BatchFailure; watch: weak
    references to each batch's logits, loss and graph marker, read at each fetch and
    after the call. loss_fn is F.cross_entropy (the batch mean).

    Returns {"result" (absent when evaluate raised), "raised" (with fail_* or watch),
    "modes_before", "modes_after", "calls", "losses" (loss_fn calls), "fetches",
    "exhausted", "alive_after"}.
    """
    torch.manual_seed(0)  # dropout, should a forward run in train mode: the same every time
    net, ledger = _net(weight, bias, fail_at=fail_model, watch=watch)
    net = _in_modes(net, modes)
    before = _modes(net)
    losses: list = []
    fetches: list = []
    state = {"exhausted": False}

    def loss_fn(logits, targets):
        k = len(losses)
        losses.append(k)
        if fail_loss == k:
            raise BatchFailure(f"loss_fn failed on batch {k}")
        loss = F.cross_entropy(logits, targets)
        if watch and ledger.events:
            ledger.watch(len(ledger.events) - 1, loss)  # the batch of the last forward
        return loss

    pairs = [(x, y) for x, y in batches]

    def generate():
        for j, (x, y) in enumerate(pairs):
            fetches.append({"batch": j, "forwards": len(ledger.events),
                            "alive": _alive(ledger) if watch else []})
            yield x.clone(), y.clone()
        state["exhausted"] = True

    source = generate() if kind == "generator" else list(pairs)
    answer = {"modes_before": before}
    catch = fail_model is not None or fail_loss is not None or watch
    try:
        out = evaluate.evaluate(net, source, loss_fn)
    except Exception as e:
        if not catch:
            raise
        answer["raised"] = probekit.raised(e)
    else:
        answer["result"] = _result(out)
        del out
        answer["raised"] = None
    del source
    answer.update(modes_after=_modes(net), calls=list(ledger.events), losses=len(losses), fetches=fetches,
                  exhausted=state["exhausted"], alive_after=_alive(ledger) if watch else [])
    return answer


def ev_empty(kind, modes=None):
    """evaluate on no batches at all: an empty list or a generator that yields nothing.

    What evaluate raised comes back as data, with the modes before and after.
    """
    net, ledger = _net(torch.zeros(2, 2), torch.zeros(2))
    net = _in_modes(net, modes)
    before = _modes(net)

    def nothing():
        return
        yield

    source = nothing() if kind == "generator" else []
    try:
        out = evaluate.evaluate(net, source, F.cross_entropy)
    except Exception as e:
        return {"raised": probekit.raised(e), "modes_before": before, "modes_after": _modes(net)}
    return {"raised": None, "gave": probekit.describe(out), "modes_before": before,
            "modes_after": _modes(net), "calls": len(ledger.events)}
