"""Variant: one group per parameter; the longest prefix is found by walking the name's dotted
components from the full name down (a dict lookup per level), and the known prefixes are every
leading run of components of every name (a set), so matching never compares strings by hand."""

from __future__ import annotations

from typing import Iterable

from torch import nn


def _leading_runs(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(len(parts), 0, -1)]  # longest first


def _known(model: nn.Module) -> set[str]:
    return {run for name, _ in model.named_parameters() for run in _leading_runs(name)}


def freeze(model: nn.Module, prefixes: Iterable[str]) -> None:
    wanted = set(prefixes)
    unknown = sorted(wanted - _known(model))
    if unknown:
        raise ValueError(f"freeze: no parameter under {', '.join(map(repr, unknown))}")
    for name, p in model.named_parameters():
        if wanted.intersection(_leading_runs(name)):
            p.requires_grad = False


def param_groups(model: nn.Module, lr_by_prefix: dict[str, float], weight_decay: float,
                 *, default_lr: float) -> list[dict]:
    unknown = [prefix for prefix in lr_by_prefix if prefix not in _known(model)]
    if unknown:
        raise ValueError(f"param_groups: no parameter under {unknown[0]!r}")
    groups = []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        lr = next((lr_by_prefix[run] for run in _leading_runs(name) if run in lr_by_prefix), default_lr)
        groups.append({"params": [p], "lr": lr, "weight_decay": weight_decay if p.dim() > 1 else 0.0})
    return groups
