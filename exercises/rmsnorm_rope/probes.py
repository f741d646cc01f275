"""Probes for the rmsnorm_rope exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, CPU tensors), builds the candidate's module, runs it
and returns plain data: dicts of tensors, numbers and strings. Probes never judge anything;
the hidden checks (judge side) compare what comes back with values they compute themselves.

This exercise forbids nn.RMSNorm and F.rms_norm (and the ops behind them), and the worker
charges a check for any call of them made while a probe runs, whoever makes it: the probes
never touch them.
"""

from __future__ import annotations

import torch
from torch import nn

import rmsnorm_rope
from grader.sandbox import probekit
from grader.sandbox.probekit import tensor as _plain


def _rmsnorm(dim, eps):
    """RMSNorm(dim), or RMSNorm(dim, eps=eps): ``eps=None`` leaves the candidate's default."""
    kwargs = {} if eps is None else {"eps": eps}
    return probekit.seeded(rmsnorm_rope.RMSNorm, dim, **kwargs)


def _rope(head_dim, base):
    """RotaryEmbedding(head_dim), or RotaryEmbedding(head_dim, base=base): ``base=None`` leaves the default."""
    kwargs = {} if base is None else {"base": base}
    return probekit.seeded(rmsnorm_rope.RotaryEmbedding, head_dim, **kwargs)


# ------------------------------------------------------------------------- RMSNorm


def rmsnorm_build(dim, eps=None):
    """Construct RMSNorm(dim[, eps]) and describe its parameters and its ``weight`` attribute."""
    m = _rmsnorm(dim, eps)
    params = [[name, list(p.shape), isinstance(p, nn.Parameter), bool(p.requires_grad)]
              for name, p in m.named_parameters()]
    return {"is_module": isinstance(m, nn.Module), "params": params, "weight": _plain(getattr(m, "weight", None))}


def rmsnorm_forward(dim, eps, weight, x, *, grad_out=None):
    """Build RMSNorm(dim[, eps]), ``.to(x.dtype)``, copy ``weight`` into ``norm.weight``; return norm(x).

    Also returns x after the call (``x_after``). With ``grad_out`` given, the result holds the
    gradients of sum(out * grad_out) w.r.t. x and the module's weight (``grad_x``, ``grad_weight``).
    """
    m = _rmsnorm(dim, eps).to(x.dtype)
    with torch.no_grad():
        m.weight.copy_(weight)
    backward = grad_out is not None
    if backward:
        x.requires_grad_(True)
    out = m(x)
    report = {"out": _plain(out), "x_after": _plain(x)}
    if backward:
        grads, why = probekit.backward_grads([(out, grad_out)], {"x": x, "weight": m.weight})
        report.update(grad_x=grads["x"], grad_weight=grads["weight"], no_grad_reason=why)
    return report


# ---------------------------------------------------------------------- RotaryEmbedding


def rope_build(head_dim, base=None):
    """Construct RotaryEmbedding(head_dim[, base]) (the checks expect some sizes to raise)."""
    m = _rope(head_dim, base)
    return {"is_module": isinstance(m, nn.Module)}


def rope_forward(head_dim, base, q, k, v, positions=None, *, grad_q=None, grad_k=None):
    """Build RotaryEmbedding(head_dim[, base]) and call it: rope(q, k, v) or rope(q, k, v, positions).

    Returns the three outputs (``q``, ``k``, ``v``) and the inputs after the call
    (``q_after``, ``k_after``, ``v_after``). With ``grad_q`` and ``grad_k`` given, q and k
    require grad and the result also holds the gradients of sum(q_rot * grad_q) +
    sum(k_rot * grad_k) w.r.t. q and k (``grad_q``, ``grad_k``).
    """
    m = _rope(head_dim, base)
    backward = grad_q is not None
    if backward:
        q.requires_grad_(True)
        k.requires_grad_(True)
    result = m(q, k, v) if positions is None else m(q, k, v, positions)
    if not (isinstance(result, (tuple, list)) and len(result) == 3):
        return probekit.returned_instead(result)
    q_rot, k_rot, v_out = result
    report = {"q": _plain(q_rot), "k": _plain(k_rot), "v": _plain(v_out),
              "q_after": _plain(q), "k_after": _plain(k), "v_after": _plain(v)}
    if backward:
        grads, why = probekit.backward_grads([(q_rot, grad_q), (k_rot, grad_k)], {"q": q, "k": k})
        report.update(grad_q=grads["q"], grad_k=grads["k"], no_grad_reason=why)
    return report
