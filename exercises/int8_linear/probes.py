"""Probes for the int8_linear exercise. They run INSIDE the sandbox.

Each probe builds an nn.Linear holding the weight and bias the judge sent, calls the
candidate's ``QuantLinear.from_float`` on it and returns plain data: the layer's
buffers, parameters and state_dict, what forward and dequantize return, and how many
bytes of tensors the layer holds. Anything that is not what the contract promised comes
back as an opaque description. Probes never judge.
"""

from __future__ import annotations

import gc
import weakref

import torch
from torch import nn

import int8_linear
from grader.sandbox import probekit


def _linear(weight, bias) -> nn.Linear:
    out_features, in_features = weight.shape
    linear = nn.Linear(in_features, out_features, bias=bias is not None)
    with torch.no_grad():
        linear.weight.copy_(weight)
        if bias is not None:
            linear.bias.copy_(bias)
    return linear


def _quantised(weight, bias):
    linear = _linear(weight, bias)
    return linear, int8_linear.QuantLinear.from_float(linear)


def _maybe_tensor(value):
    return None if value is None else probekit.tensor(value)


def _tensors(module: nn.Module):
    """Every tensor the module holds, once per storage: (where, tensor)."""
    found = []
    for name, t in module.named_parameters():
        found.append((f"parameter {name}", t))
    for name, t in module.named_buffers():
        found.append((f"buffer {name}", t))
    for name, t in module.state_dict(keep_vars=True).items():
        found.append((f"state_dict[{name!r}]", t))
    for mod_name, mod in module.named_modules():
        for attr, value in vars(mod).items():
            values = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                if isinstance(v, torch.Tensor):
                    found.append((f"attribute {mod_name + '.' if mod_name else ''}{attr}", v))
    return found


def _bytes(module: nn.Module) -> dict:
    """{"total": bytes of the distinct storages, "tensors": [[where, dtype, shape, storage bytes], ...]}."""
    seen, rows, total = set(), [], 0
    for where, t in _tensors(module):
        storage = t.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        rows.append([where, str(t.dtype), list(t.shape), int(storage.nbytes())])
        if key not in seen:
            seen.add(key)
            total += int(storage.nbytes())
    return {"total": total, "tensors": rows}


def build(weight, bias):
    """from_float(linear): the layer's attributes, buffers, parameters and state_dict, and the linear after."""
    linear, q = _quantised(weight, bias)
    if not isinstance(q, nn.Module):
        return probekit.returned_instead(q)
    return {
        "features": [probekit.opaque(v) if type(v) is not int else v
                     for v in (getattr(q, "in_features", None), getattr(q, "out_features", None))],
        "weight_int8": _maybe_tensor(getattr(q, "weight_int8", None)),
        "scale": _maybe_tensor(getattr(q, "scale", None)),
        "bias": _maybe_tensor(getattr(q, "bias", None)),
        "buffers": sorted(name for name, _ in q.named_buffers()),
        "parameters": sorted(name for name, _ in q.named_parameters()),
        "state_dict": {k: probekit.tensor(v) for k, v in q.state_dict().items()},
        "requires_grad": sorted(name for name, t in list(q.named_parameters()) + list(q.named_buffers())
                                if t.requires_grad),
        "linear_after": [linear.weight.detach().clone(), _maybe_tensor(linear.bias)],
    }


def run(weight, bias, xs):
    """forward on each x and dequantize(), with the state_dict before and after the forwards."""
    _, q = _quantised(weight, bias)
    before = {k: probekit.tensor(v) for k, v in q.state_dict().items()}
    outputs = [probekit.tensor(q(x)) for x in xs]
    return {"outputs": outputs, "dequantize": probekit.tensor(q.dequantize()), "state_before": before,
            "state_after": {k: probekit.tensor(v) for k, v in q.state_dict().items()}}


def memory(weight, bias, x):
    """Whether the linear layer's weight outlives the layer, and the bytes the QuantLinear holds."""
    linear = _linear(weight, bias)
    ref = weakref.ref(linear.weight)
    q = int8_linear.QuantLinear.from_float(linear)
    del linear
    gc.collect()
    report = {"weight_alive": ref() is not None, "built": _bytes(q)}
    q(x)
    report["after_forward"] = _bytes(q)
    return report


def round_trip(weight, bias, xs):
    """Load from_float's state_dict into QuantLinear(in, out[, bias=False]); outputs of both layers, and of the
    original after the linear layer's weight and bias were changed in place. With a bias, the constructor's
    ``bias`` is left at its default (the prompt's is True)."""
    linear, q = _quantised(weight, bias)
    state = q.state_dict()
    given = {} if bias is not None else {"bias": False}
    fresh = int8_linear.QuantLinear(weight.shape[1], weight.shape[0], **given)
    fresh.load_state_dict(state, strict=True)
    report = {"fresh": [probekit.tensor(fresh(x)) for x in xs], "original": [probekit.tensor(q(x)) for x in xs]}
    with torch.no_grad():
        linear.weight.add_(1.0)
        if linear.bias is not None:
            linear.bias.add_(1.0)
    report["after_linear_changed"] = [probekit.tensor(q(x)) for x in xs]
    return report
