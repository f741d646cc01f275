"""Probes for the lora_linear exercise. They run INSIDE the sandbox.

Each probe takes plain data (sizes, numbers, CPU tensors), builds an nn.Linear
holding the weight and bias it is given, wraps it in the candidate's LoRALinear
and returns plain data: dicts of tensors, numbers, strings and booleans. Probes
never judge anything; the hidden checks (judge side) compute the expected values
themselves.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

import lora
from grader.sandbox import probekit


def _plain(value):
    """A tensor detached and cloned, None as it is; anything else opaque."""
    return None if value is None else probekit.tensor(value)


def _base(weight, bias) -> nn.Linear:
    out_features, in_features = weight.shape
    base = nn.Linear(in_features, out_features, bias=bias is not None, dtype=weight.dtype)
    with torch.no_grad():
        base.weight.copy_(weight)
        if bias is not None:
            base.bias.copy_(bias)
    return base


def _layer(weight, bias, r, alpha, A, B):
    """(base, the candidate's LoRALinear(base, r, alpha) with A and B copied into lora_A / lora_B in place,
    None), or (None, None, the probe's answer) when the layer holds no tensors of those shapes to copy into."""
    base = probekit.seeded(_base, weight, bias)
    layer = lora.LoRALinear(base, r, alpha)
    for name, value in (("lora_A", A), ("lora_B", B)):
        target = getattr(layer, name, None)
        if not isinstance(target, torch.Tensor):
            return None, None, {"returned": f"a layer whose {name} is {probekit.describe(target)}, not a tensor"}
        if tuple(target.shape) != tuple(value.shape):
            return None, None, {"returned": f"a layer whose {name} has shape {tuple(target.shape)}, "
                                            f"expected {tuple(value.shape)}"}
    with torch.no_grad():
        layer.lora_A.copy_(A)
        layer.lora_B.copy_(B)
    return base, layer, None


@contextlib.contextmanager
def _uninitialised_memory_is_nan():
    """While constructing: memory a tensor factory leaves uninitialised (``torch.empty``) reads as NaN.

    The README promises an init that makes lora_A finite and not all zeros; a layer that
    forgets it keeps whatever ``torch.empty`` returned, which is often finite by luck. With
    deterministic algorithms on (``warn_only``: nothing a candidate calls is refused for
    it) and ``torch.utils.deterministic.fill_uninitialized_memory``, that memory is NaN
    every time, so the init check sees the missing init deterministically; any real init
    overwrites it. The previous global settings are put back.
    """
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fill
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def lora_init(weight, bias, r, alpha):
    """LoRALinear(base, r, alpha): nothing returned but True (for the error checks)."""
    lora.LoRALinear(_base(weight, bias), r, alpha)
    return True


def lora_build(weight, bias, r, alpha, x):
    """Construct the layer and describe it, before any change.

    Returns: same_base (layer.base is base), frozen (requires_grad of the given
    base's weight and bias), same_tensors (layer.base.weight/bias are the base's own
    tensors), trainable ([name, numel] with requires_grad), state_keys, A, B (initial
    values), out (layer(x)) and base_out (base(x)), both under no_grad. Constructed with
    uninitialised memory reading as NaN (an adapter left as ``torch.empty`` shows).
    """
    base = probekit.seeded(_base, weight, bias)
    weight_param, bias_param = base.weight, base.bias
    with _uninitialised_memory_is_nan():
        layer = lora.LoRALinear(base, r, alpha)
    inner = getattr(layer, "base", None)
    with torch.no_grad():
        out, base_out = layer(x), base(x)
    return {
        "same_base": inner is base,
        "same_tensors": inner is base and base.weight is weight_param and base.bias is bias_param,
        "frozen": [bool(p.requires_grad) for p in (weight_param, bias_param) if p is not None],
        "trainable": [[n, p.numel()] for n, p in layer.named_parameters() if p.requires_grad],
        "state_keys": [str(k) for k in layer.state_dict()],
        "A": _plain(getattr(layer, "lora_A", None)),
        "B": _plain(getattr(layer, "lora_B", None)),
        "out": _plain(out),
        "base_out": _plain(base_out),
    }


def lora_forward(weight, bias, r, alpha, A, B, x, *, grad_out=None, new_weight=None, new_bias=None):
    """Set A and B, then out = layer(x).

    With grad_out: sum(out * grad_out).backward(), and the .grad of lora_A, lora_B
    and the base's weight and bias come back. With new_weight (and new_bias): these
    are copied into the base's own weight and bias in place afterwards, and
    "out_after" = layer(x) again.
    """
    base, layer, problem = _layer(weight, bias, r, alpha, A, B)
    if problem is not None:
        return problem
    report = {}
    if grad_out is None:
        with torch.no_grad():
            report["out"] = _plain(layer(x))
    else:
        out = layer(x)
        report["out"] = _plain(out)
        (out * grad_out).sum().backward()
        report["grads"] = {
            "lora_A": _plain(layer.lora_A.grad),
            "lora_B": _plain(layer.lora_B.grad),
            "base.weight": _plain(base.weight.grad),
            "base.bias": _plain(base.bias.grad) if base.bias is not None else None,
        }
    if new_weight is not None:
        with torch.no_grad():
            base.weight.copy_(new_weight)
            if new_bias is not None:
                base.bias.copy_(new_bias)
            report["out_after"] = _plain(layer(x))
    return report


def lora_merge(weight, bias, r, alpha, A, B, x):
    """Set A and B, then merged = layer.merge(), and describe both before and after.

    Returns: cls (the merged object's class, "module.qualname"), in/out_features,
    weight, bias (None when it has none), merged_out = merged(x), out_before and
    out_after = layer(x) before and after merge(), base_weight/base_bias after
    merge(), and out_after_edit = layer(x) after merged's weight and bias were
    changed in place (+1).
    """
    base, layer, problem = _layer(weight, bias, r, alpha, A, B)
    if problem is not None:
        return problem
    with torch.no_grad():
        out_before = _plain(layer(x))
        merged = layer.merge()
        out_after = _plain(layer(x))
        kind = type(merged)
        report = {
            "cls": f"{kind.__module__}.{kind.__qualname__}",
            "in_features": getattr(merged, "in_features", None),
            "out_features": getattr(merged, "out_features", None),
            "weight": _plain(getattr(merged, "weight", None)),
            "bias": _plain(getattr(merged, "bias", None)),
            "merged_out": _plain(merged(x)) if isinstance(merged, nn.Module) else None,
            "out_before": out_before,
            "out_after": out_after,
            "base_weight": _plain(base.weight),
            "base_bias": _plain(base.bias),
        }
        for p in (getattr(merged, "weight", None), getattr(merged, "bias", None)):
            if isinstance(p, torch.Tensor):
                p.add_(1.0)
        report["out_after_edit"] = _plain(layer(x))
    return report


def lora_merged_tensors(weight, bias, r, alpha, A, B, *, grad_enabled=False):
    """Set A and B, then merged = layer.merge(): its weight and bias (None when it has none), nothing run.

    For the dtype of the merged layer: merged(x) is not called, so a merged layer in another dtype than
    the base comes back as such instead of failing inside the probe. merge() runs under torch.no_grad(),
    or with autograd on when ``grad_enabled`` (as the README's example calls it).
    """
    _, layer, problem = _layer(weight, bias, r, alpha, A, B)
    if problem is not None:
        return problem
    with torch.set_grad_enabled(grad_enabled):
        merged = layer.merge()
    return {"weight": _plain(getattr(merged, "weight", None)), "bias": _plain(getattr(merged, "bias", None))}
