"""Probes for the grad_accumulation exercise. They run INSIDE the sandbox.

The judge sends the starting parameters and the micro-batches (float64 tensors);
the probe builds the model (``_model``), an SGD optimizer that records its calls
(``probekit.RecordingSGD``, the update of torch.optim.SGD) and runs the candidate's train_with_accumulation. It returns
plain data: the losses returned (``losses``), the optimizer's calls in order, the gradients the
optimizer saw at each step and the parameters at the end. Probes never judge.
"""

from __future__ import annotations

import torch
from torch import nn

import grad_accum
from grader.sandbox import probekit
from grader.sandbox.probekit import RecordingSGD


def _model(params: dict) -> nn.Module:
    """nn.Sequential(Linear(3, 4), Tanh, Linear(4, 2)) in float64 holding ``params``."""
    return probekit.load_parameters(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double(), params)


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
    model = _model(params)
    if stale is not None:
        for name, p in model.named_parameters():
            p.grad = stale[name].clone()
    forward_sizes: list[int] = []
    model.register_forward_pre_hook(lambda module, args: forward_sizes.append(int(args[0].shape[0])))
    optimizer = RecordingSGD(model, lr=lr, momentum=momentum)
    loss_fn = nn.MSELoss() if loss == "mse" else nn.CrossEntropyLoss()
    pairs = [(x, y) for x, y in batches]
    source = (pair for pair in pairs) if generator else pairs
    returned = grad_accum.train_with_accumulation(model, optimizer, loss_fn, source, accumulation_steps)
    return {
        "losses": _plain(returned),
        "events": optimizer.events,
        "forward_sizes": forward_sizes,
        "step_grads": optimizer.step_grads,
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
    model = _model(params)
    for name, p in model.named_parameters():
        p.grad = stale[name].clone()
    forward_calls: list[int] = []
    model.register_forward_pre_hook(lambda module, args: forward_calls.append(1))
    optimizer = RecordingSGD(model, lr=0.1)
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
            "events": optimizer.events,
            "forward_calls": len(forward_calls),
            "pulled": len(pulled),
            "params": probekit.parameters(model),
            "grads": probekit.gradients(model),
        }
    return {"raised": False}
