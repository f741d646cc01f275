"""Probes for the activation_hooks exercise. They run INSIDE the sandbox.

Each probe builds one of three small models (``shared.ARCHS``, which the judge
builds too, and sends the weights in as a state_dict), drives the candidate's
ActivationCapture around it and returns plain data: what was captured (tensors
detached here, with their autograd flags recorded first), the model's outputs,
and how many hooks every module holds. Probes never judge anything.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules import module as module_internals

import hooks
from grader.sandbox import probekit
from shared import ARCHS


def _model(arch: str, weights) -> nn.Module:
    model = probekit.seeded(ARCHS[arch])
    if weights is not None:
        model.load_state_dict(weights, strict=True)
    return model


def _plain(value):
    """A captured value as plain data, its autograd state recorded before detaching."""
    if type(value) is torch.Tensor:
        return {"tensor": value.detach().clone(), "requires_grad": bool(value.requires_grad),
                "grad_fn": None if value.grad_fn is None else type(value.grad_fn).__name__}
    if isinstance(value, tuple):
        return {"tuple": [_plain(v) for v in value]}
    if isinstance(value, list):
        return {"list": [_plain(v) for v in value]}
    return probekit.opaque(value)


def _activations(cap):
    value = getattr(cap, "activations", None)
    if not isinstance(value, dict):
        return probekit.opaque(value)
    return {str(k): _plain(v) for k, v in value.items()}


def _hooks(model: nn.Module) -> dict:
    """Every module's [forward hooks, forward pre-hooks] counts, and the global ones under '<global>'."""
    counts = {name or "<model>": [probekit.count_entries(m._forward_hooks), probekit.count_entries(m._forward_pre_hooks)]
              for name, m in model.named_modules()}
    counts["<global>"] = [probekit.count_entries(getattr(module_internals, "_global_forward_hooks", {})),
                          probekit.count_entries(getattr(module_internals, "_global_forward_pre_hooks", {}))]
    return counts


def capture(arch, weights, names, inputs, *, after=None):
    """Forward every x of ``inputs`` inside ``with ActivationCapture(model, names)``.

    Returns the activations before any forward ("initial") and after each forward
    ("snapshots"), the outputs, whether __enter__ returned the capture itself, the
    hook counts before, inside and after the block, the activations right after the
    block, and, with ``after`` given, after one more forward made outside the block.
    """
    model = _model(arch, weights)
    report = {"hooks_before": _hooks(model), "snapshots": [], "outputs": []}
    cap = hooks.ActivationCapture(model, names)
    report["initial"] = _activations(cap)
    with cap as entered:
        report["entered_is_self"] = entered is cap
        report["hooks_inside"] = _hooks(model)
        for x in inputs:
            report["outputs"].append(model(x).detach())
            report["snapshots"].append(_activations(cap))
    report["hooks_after"] = _hooks(model)
    report["on_exit"] = _activations(cap)
    if after is not None:
        report["output_after"] = model(after).detach()
        report["after_forward"] = _activations(cap)
    return report


def capture_grads(arch, weights, names, x, grad_out):
    """Inside the block: out = model(x), then sum(out * grad_out).backward().

    Returns the output, whether it requires grad, and the gradients of x and of every
    parameter (None where none arrived).
    """
    model = _model(arch, weights)
    x.requires_grad_(True)
    with hooks.ActivationCapture(model, names):
        out = model(x)
        connected = isinstance(out, torch.Tensor) and out.requires_grad
        if connected:
            (out * grad_out).sum().backward()
    grads = {n: (None if p.grad is None else p.grad.detach().clone()) for n, p in model.named_parameters()}
    return {"out": out.detach(), "requires_grad": connected,
            "x_grad": None if x.grad is None else x.grad.detach().clone(), "grads": grads}


def capture_raising(arch, weights, names, x):
    """One forward inside the block, then a LookupError raised inside it.

    Returns what escaped the with statement (or None), the hook counts before and
    after, and the activations after the block.
    """
    model = _model(arch, weights)
    before = _hooks(model)
    cap = hooks.ActivationCapture(model, names)
    escaped = None
    try:
        with cap:
            model(x)
            raise LookupError("raised inside the with block")
    except Exception as e:  # noqa: BLE001 (reported as data)
        escaped = probekit.raised(e)
    return {"escaped": escaped, "hooks_before": before, "hooks_after": _hooks(model),
            "activations": _activations(cap)}


def capture_unknown(arch, names, x):
    """ActivationCapture(model, names), entered, one forward: what was raised, and the hooks left."""
    model = _model(arch, None)
    before = _hooks(model)
    raised = None
    try:
        with hooks.ActivationCapture(model, names):
            model(x)
    except Exception as e:  # noqa: BLE001 (reported as data)
        raised = probekit.raised(e)
    return {"raised": raised, "hooks_before": before, "hooks_after": _hooks(model)}


def capture_with_own_hook(arch, weights, names, owner, x):
    """The model's owner registered a forward hook on ``owner`` before capturing; it must survive.

    Returns the hook counts before and after the block, and how many times the
    owner's hook ran: inside the block, then after one more forward outside it.
    """
    model = _model(arch, weights)
    calls = []
    owned = model.get_submodule(owner)
    owned.register_forward_hook(lambda m, a, o: calls.append(1))  # not an instrument: the hook the capture must keep
    before = _hooks(model)
    with hooks.ActivationCapture(model, names):
        model(x)
    inside = len(calls)
    model(x)
    return {"hooks_before": before, "hooks_after": _hooks(model), "calls_inside": inside,
            "calls_after": len(calls)}
