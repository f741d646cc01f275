"""Probes for the grad_accumulation exercise. They run INSIDE the sandbox.

The judge sends the starting parameters and the micro-batches (float64 tensors);
the probe builds the model (``_model``), an SGD optimizer that records its calls
(``probekit.RecordingSGD``, the update of torch.optim.SGD) and runs the candidate's train_with_accumulation. It returns
plain data: the losses returned (``losses``), the optimizer's calls in order, the gradients the
optimizer saw at each step and the parameters at the end. Probes never judge.

The model and the optimizer record in a ``probekit.Ledger`` each finds by its identity: nothing
recorded lives on an object the candidate is handed.
"""

from __future__ import annotations

import torch
from torch import nn

import grad_accum
from grader.sandbox import probekit
from grader.sandbox.probekit import RecordingSGD


class _Model(nn.Sequential):
    """nn.Sequential(Linear(3, 4), Tanh, Linear(4, 2)) in float64, keeping each forward's batch size in its ledger."""

    def __init__(self):
        super().__init__(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        self.double()

    def forward(self, x):
        found = probekit.attached(self)
        if found is not None:
            found[0].keep("forward_sizes", int(x.shape[0]) if isinstance(x, torch.Tensor) and x.dim() else -1)
        return super().forward(x)


def _model(params: dict, ledger: probekit.Ledger) -> nn.Module:
    """The model holding ``params``, recording in ``ledger``."""
    return ledger.attach(probekit.load_parameters(_Model(), params))


def _plain(value):
    """The returned value: a list of floats; anything not a float (the list itself included) opaque."""
    if type(value) is not list:
        return probekit.opaque(value)
    return [v if type(v) is float else probekit.opaque(v) for v in value]


def accumulate(params, batches, accumulation_steps, *, lr=0.1, momentum=0.0, loss="mse",
               stale=None, generator=False):
    """Run train_with_accumulation on the probes' model with a RecordingSGD.

    batches: [[inputs, targets], ...]. stale: gradients put in .grad before the call.
    generator: pass the batches as a one-pass generator instead of a list.
    """
    ledger = probekit.Ledger()
    model = _model(params, ledger)
    if stale is not None:
        for name, p in model.named_parameters():
            p.grad = stale[name].clone()
    optimizer = RecordingSGD(model, lr=lr, momentum=momentum, ledger=ledger)
    loss_fn = nn.MSELoss() if loss == "mse" else nn.CrossEntropyLoss()
    pairs = [(x, y) for x, y in batches]
    source = (pair for pair in pairs) if generator else pairs
    returned = grad_accum.train_with_accumulation(model, optimizer, loss_fn, source, accumulation_steps)
    return {
        "losses": _plain(returned),
        "events": list(ledger.events),
        "forward_sizes": list(ledger.kept.get("forward_sizes", [])),
        "step_grads": list(ledger.kept.get("step_grads", [])),
        "params": probekit.parameters(model),
    }


def refusal(params, batches, accumulation_steps, *, stale):
    """What train_with_accumulation touched before it raised, for the check of "raise before touching
    the model, the optimizer or batches".

    The model holds ``params`` and the ``stale`` gradients; ``batches`` comes as a generator that counts
    the micro-batches pulled from it. Returns {"raised": False} when the call did not raise (the refusal
    itself is another call's business), else the optimizer's calls, the model's forward calls, the
    micro-batches pulled, and the parameters and their .grad after the error.
    """
    ledger = probekit.Ledger()
    model = _model(params, ledger)
    for name, p in model.named_parameters():
        p.grad = stale[name].clone()
    optimizer = RecordingSGD(model, lr=0.1, ledger=ledger)
    pulled: list[int] = []

    def source():
        for x, y in batches:
            pulled.append(1)
            yield x, y

    try:
        grad_accum.train_with_accumulation(model, optimizer, nn.MSELoss(), source(), accumulation_steps)
    except Exception:
        return {
            "raised": True,
            "events": list(ledger.events),
            "forward_calls": len(ledger.kept.get("forward_sizes", [])),
            "pulled": len(pulled),
            "params": probekit.parameters(model),
            "grads": probekit.gradients(model),
        }
    return {"raised": False}
