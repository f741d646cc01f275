"""Reference: freeze by prefix and build optimizer groups keyed by (lr, weight decay)."""

from __future__ import annotations

from typing import Iterable

from torch import nn


def _matches(prefix: str, name: str) -> bool:
    """A prefix matches whole dotted components: 'encoder' matches 'encoder.0.w', not 'encoder_norm.w'."""
    return name == prefix or name.startswith(prefix + ".")


def _check_prefixes(names: list[str], prefixes: Iterable[str]) -> None:
    for prefix in prefixes:
        if not any(_matches(prefix, name) for name in names):
            raise ValueError(f"prefix {prefix!r} matches no parameter of the model")


def freeze(model: nn.Module, prefixes: Iterable[str]) -> None:
    prefixes = list(prefixes)
    named = list(model.named_parameters())
    _check_prefixes([name for name, _ in named], prefixes)  # all checked before anything changes
    for name, p in named:
        if any(_matches(prefix, name) for prefix in prefixes):
            p.requires_grad_(False)


def param_groups(model: nn.Module, lr_by_prefix: dict[str, float], weight_decay: float,
                 *, default_lr: float) -> list[dict]:
    named = list(model.named_parameters())  # a tied parameter once, under its first name
    _check_prefixes([name for name, _ in named], lr_by_prefix)
    groups: dict[tuple[float, float], dict] = {}
    for name, p in named:
        if not p.requires_grad:
            continue
        matching = [prefix for prefix in lr_by_prefix if _matches(prefix, name)]
        lr = lr_by_prefix[max(matching, key=len)] if matching else default_lr
        decay = weight_decay if p.ndim >= 2 else 0.0
        group = groups.setdefault((lr, decay), {"params": [], "lr": lr, "weight_decay": decay})
        group["params"].append(p)
    return list(groups.values())
