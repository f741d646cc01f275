"""Parameter groups: implement freeze and param_groups below. See README.md for the full contract."""

from __future__ import annotations

from typing import Iterable

from torch import nn


def freeze(model: nn.Module, prefixes: Iterable[str]) -> None:
    """Set requires_grad = False on every parameter whose name a prefix matches.

    A prefix matches a name of model.named_parameters() on whole dotted components:
    name == prefix or name.startswith(prefix + "."). A prefix that matches no name
    raises ValueError naming it, before anything is frozen.
    """
    raise NotImplementedError("freeze")


def param_groups(model: nn.Module, lr_by_prefix: dict[str, float], weight_decay: float,
                 *, default_lr: float) -> list[dict]:
    """Optimizer groups [{"params": [...], "lr": ..., "weight_decay": ...}, ...].

    - only parameters with requires_grad=True, each in exactly one group;
    - lr: the longest matching prefix of lr_by_prefix wins; no match: default_lr;
    - weight_decay for ndim >= 2 parameters, 0.0 for ndim <= 1 (biases, norms);
    - a prefix matching no parameter name raises ValueError naming it.
    """
    raise NotImplementedError("param_groups")
