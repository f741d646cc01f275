"""Variant: prefixes sorted longest first once, then the first hit wins; one group per
(winning prefix or default, decay or not) in order of first appearance, keeping even groups whose
lr happens to equal another's; freeze takes prefixes as any iterable (consumed once into a tuple)
and freezes with a plain attribute assignment."""

from __future__ import annotations

from typing import Iterable

from torch import nn


def _owner(name: str, by_length: list[str]) -> str | None:
    for prefix in by_length:
        if name == prefix or name.startswith(f"{prefix}."):
            return prefix
    return None


def freeze(model: nn.Module, prefixes: Iterable[str]) -> None:
    prefixes = tuple(prefixes)
    names = [n for n, _ in model.named_parameters()]
    for prefix in prefixes:
        if not _owner_any(prefix, names):
            raise ValueError(f"unknown prefix {prefix}")
    by_length = sorted(prefixes, key=len, reverse=True)
    for name, param in model.named_parameters():
        if _owner(name, by_length) is not None:
            param.requires_grad = False


def _owner_any(prefix: str, names: list[str]) -> bool:
    return any(_owner(n, [prefix]) is not None for n in names)


def param_groups(model: nn.Module, lr_by_prefix: dict[str, float], weight_decay: float,
                 *, default_lr: float) -> list[dict]:
    named = list(model.named_parameters())
    for prefix in lr_by_prefix:
        if not _owner_any(prefix, [n for n, _ in named]):
            raise ValueError(f"lr_by_prefix has {prefix!r}, which matches no parameter")
    by_length = sorted(lr_by_prefix, key=len, reverse=True)
    groups: dict[tuple[str | None, bool], dict] = {}
    for name, param in named:
        if not param.requires_grad:
            continue
        owner = _owner(name, by_length)
        decays = param.ndim >= 2
        key = (owner, decays)
        if key not in groups:
            groups[key] = {"params": [],
                           "lr": default_lr if owner is None else lr_by_prefix[owner],
                           "weight_decay": weight_decay if decays else 0.0}
        groups[key]["params"].append(param)
    return list(groups.values())
