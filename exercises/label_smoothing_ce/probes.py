"""Probes for the label_smoothing_ce exercise. They run INSIDE the sandbox.

Each probe takes plain data (CPU tensors, numbers, strings), calls the candidate's
function and returns plain data. Probes never judge anything: the hidden checks
compute the expected values judge-side with F.cross_entropy.

This exercise forbids F.cross_entropy, nn.CrossEntropyLoss, F.nll_loss and
nn.NLLLoss, and the worker charges a check for any call of them made while a probe
runs, so the probes never touch them.
"""

from __future__ import annotations

import torch

import label_smoothing
from grader.sandbox.probekit import tensor as _plain


def ce(logits, target, grad_out=None, **kwargs):
    """label_smoothing_cross_entropy(logits, target, **kwargs); its gradient when grad_out is given.

    The gradient is d(sum(out * grad_out)) / d(logits); grad_out has the output's
    expected shape (a 0-d tensor for "mean" and "sum"). Returns {"out": tensor,
    "grad": tensor or None, "why": str or None}; "why" says why no gradient came back.
    """
    logits = logits.clone().requires_grad_(grad_out is not None)
    out = label_smoothing.label_smoothing_cross_entropy(logits, target, **kwargs)
    result = {"out": _plain(out), "grad": None, "why": None}
    if grad_out is None:
        return result
    if not isinstance(out, torch.Tensor) or out.shape != grad_out.shape:
        result["why"] = "the output is not a tensor of the expected shape"
    elif not out.requires_grad:
        result["why"] = "the output is not connected to the autograd graph"
    else:
        (grad,) = torch.autograd.grad((out * grad_out.to(out.dtype)).sum(), [logits], allow_unused=True)
        result["grad"] = None if grad is None else grad.detach()
        result["why"] = "the output does not depend on logits" if grad is None else None
    return result


def ce_defaults(logits, target):
    """label_smoothing_cross_entropy(logits, target) with every default."""
    return _plain(label_smoothing.label_smoothing_cross_entropy(logits, target))
