"""How running_stats drives a module, used by both zones on different modules.

The probes prepare the candidate's RunningNorm with it, the checks nn.BatchNorm1d
(the reference, forbidden to the candidate, not to the judge): the same steps in
the same order, so the two can be compared.
"""

from __future__ import annotations

import torch
from torch import nn

STATS = ("running_mean", "running_var", "num_batches_tracked")


def prepared(m: nn.Module, *, weight=None, bias=None, dtype=None, load=None) -> nn.Module:
    """``m`` in this order: ``.to(dtype)`` when dtype is given; ``load_state_dict(load, strict=True)``
    when load is given; weight and bias copied into its parameters (no_grad) when given."""
    if dtype is not None:
        m = m.to(dtype)
    if load is not None:
        m.load_state_dict(load, strict=True)
    with torch.no_grad():
        if weight is not None:
            m.weight.copy_(weight)
        if bias is not None:
            m.bias.copy_(bias)
    return m
