"""Judge-side helpers for the activation_hooks checks: the models, weights, reference captures.

The architectures are shared.py's, which the probes build too (the judge cannot import
the probes: they import the candidate). The judge draws the weights, sends them in as a state_dict,
and computes what every named layer returns with its own hooks on its own copy.
"""

from __future__ import annotations

import torch
from torch import nn

from grader.judge import Opaque, Tolerance, Tolerances, expect_close, expect_tensor
from shared import ARCHS

#: Tiny layers (at most 6 features): float32 rounding stays ~1e-7, so 1e-6 tells any real difference.
TOL = Tolerances(float32=Tolerance(atol=1e-6, rtol=1e-6))


#: Names every layer of "net" that forward runs (nested ones included), in no particular order.
NET_LAYERS = ["encoder", "encoder.0", "encoder.1", "encoder.2", "head"]


def model(arch: str, seed: int) -> tuple[nn.Module, dict]:
    """The judge's copy of ``arch`` with weights drawn from ``seed``, and those weights as a state_dict."""
    torch.manual_seed(seed)
    m = ARCHS[arch]()
    return m, {k: v.detach().clone() for k, v in m.state_dict().items()}


def inputs(seed: int, rows: list[int]) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(n, 4, generator=g) for n in rows]


def _copy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value


def reference(m: nn.Module, names: list[str], x: torch.Tensor) -> tuple[dict, torch.Tensor]:
    """What each named layer returns for x (copied at once), and the model's output."""
    seen, handles = {}, []
    for name in names:
        hook = (lambda n: lambda mod, args, out: seen.__setitem__(n, _copy(out)))(name)
        handles.append(m.get_submodule(name).register_forward_hook(hook))
    try:
        with torch.no_grad():
            out = m(x)
    finally:
        for h in handles:
            h.remove()
    return seen, out


# -------------------------------------------------------------------- comparisons


def check_value(got, want, where: str) -> None:
    """A captured value: a detached tensor equal to the reference, or a tuple of them."""
    if isinstance(want, tuple):
        if not isinstance(got, dict) or "tuple" not in got:
            raise AssertionError(f"{where}: expected a tuple of {len(want)} (the layer's output), got {_kind(got)}")
        if len(got["tuple"]) != len(want):
            raise AssertionError(f"{where}: expected a tuple of {len(want)}, got one of {len(got['tuple'])}")
        for i, (g, w) in enumerate(zip(got["tuple"], want)):
            check_value(g, w, f"{where}[{i}]")
        return
    if not isinstance(got, dict) or "tensor" not in got:
        raise AssertionError(f"{where}: expected a tensor (the layer's latest output), got {_kind(got)}")
    value = expect_tensor(got["tensor"], shape=tuple(want.shape), dtype=want.dtype, name=where)
    expect_close(value, want, where, tol=TOL)


def check_detached(got, where: str) -> None:
    if isinstance(got, dict) and "tuple" in got:
        for i, g in enumerate(got["tuple"]):
            check_detached(g, f"{where}[{i}]")
        return
    if isinstance(got, dict) and "tensor" in got and (got["requires_grad"] or got["grad_fn"] is not None):
        raise AssertionError(f"{where} is attached to the autograd graph (requires_grad="
                             f"{got['requires_grad']}, grad_fn={got['grad_fn']}): store it detached")


def check_activations_dict(got, where: str) -> dict:
    """``activations`` is a dict (anything else fails here, before a check reads it as one)."""
    if not isinstance(got, dict):
        raise AssertionError(f"{where}: activations must be a dict, got {_kind(got)}")
    return got


def check_activations(got, want: dict, where: str) -> None:
    """Exactly the expected names, each with the expected value."""
    check_activations_dict(got, where)
    if sorted(got) != sorted(want):
        raise AssertionError(f"{where}: activations must have the keys {sorted(want)}, got {sorted(got)}")
    for name, value in want.items():
        check_value(got[name], value, f"{where}: activations[{name!r}]")


def check_no_hooks_left(before: dict, after: dict, where: str) -> None:
    """Every module holds as many forward hooks and pre-hooks as before the capture."""
    left = {name: after.get(name) for name in before if after.get(name) != before[name]}
    if left:
        shown = ", ".join(f"{n}: {after[n][0] - before[n][0]} forward hook(s), "
                          f"{after[n][1] - before[n][1]} pre-hook(s)" for n in sorted(left))
        raise AssertionError(f"{where}: hooks were left behind (more or fewer than before): {shown}")


def _kind(value) -> str:
    if isinstance(value, dict):
        for key in ("tensor", "tuple", "list"):
            if key in value:
                return f"a {key}"
        return "a dict"
    if isinstance(value, Opaque):  # what the probe could not send as it is: a type name and a repr
        return f"a {value.type_name}"
    return repr(value)[:80]
