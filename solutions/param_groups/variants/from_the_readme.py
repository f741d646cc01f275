"""Variant: written from the README alone, as a candidate would (the second, independent solution):
a helper that matches on split components, groups keyed by (lr, weight_decay) in a plain dict."""

from typing import Iterable

from torch import nn


def _match(prefix: str, name: str) -> bool:
    p, n = prefix.split("."), name.split(".")
    return n[:len(p)] == p


def _validate(model: nn.Module, prefixes) -> None:
    names = [n for n, _ in model.named_parameters()]
    for prefix in prefixes:
        if not any(_match(prefix, n) for n in names):
            raise ValueError(f"Prefix '{prefix}' does not match any parameter")


def freeze(model: nn.Module, prefixes: Iterable[str]) -> None:
    prefixes = list(prefixes)
    _validate(model, prefixes)
    for name, param in model.named_parameters():
        if any(_match(pre, name) for pre in prefixes):
            param.requires_grad_(False)


def param_groups(model: nn.Module, lr_by_prefix: dict[str, float], weight_decay: float,
                 *, default_lr: float) -> list[dict]:
    _validate(model, lr_by_prefix.keys())
    buckets = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        best = None
        for pre in lr_by_prefix:
            if _match(pre, name) and (best is None or len(pre) > len(best)):
                best = pre
        lr = default_lr if best is None else lr_by_prefix[best]
        wd = 0.0 if param.ndim <= 1 else weight_decay
        buckets.setdefault((lr, wd), []).append(param)
    return [{"params": ps, "lr": lr, "weight_decay": wd} for (lr, wd), ps in buckets.items()]
