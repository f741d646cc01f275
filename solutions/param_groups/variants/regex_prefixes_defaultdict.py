"""Variant (written from the README alone): each prefix compiled to a regular expression anchored on whole
components (re.escape(prefix) followed by a dot or the end), the winning prefix found with max() over the
matching ones by length, groups gathered in a collections.defaultdict keyed by (lr, weight_decay)."""

from __future__ import annotations

import re
from collections import defaultdict


def _pattern(prefix):
    return re.compile(re.escape(prefix) + r"(\.|$)")


def _matches(pattern, name):
    return pattern.match(name) is not None


def _check_prefixes(prefixes, names):
    for prefix in prefixes:
        pattern = _pattern(prefix)
        if not any(_matches(pattern, name) for name in names):
            raise ValueError(f"prefix {prefix!r} matches no parameter of the model")


def freeze(model, prefixes):
    prefixes = list(prefixes)
    named = list(model.named_parameters())
    _check_prefixes(prefixes, [name for name, _ in named])
    patterns = [_pattern(p) for p in prefixes]
    for name, param in named:
        if any(_matches(p, name) for p in patterns):
            param.requires_grad = False


def param_groups(model, lr_by_prefix, weight_decay, *, default_lr):
    named = list(model.named_parameters())
    _check_prefixes(lr_by_prefix, [name for name, _ in named])
    patterns = {prefix: _pattern(prefix) for prefix in lr_by_prefix}
    groups = defaultdict(list)
    for name, param in named:
        if not param.requires_grad:
            continue
        hits = [prefix for prefix, pattern in patterns.items() if _matches(pattern, name)]
        lr = lr_by_prefix[max(hits, key=len)] if hits else default_lr
        decay = weight_decay if param.ndim >= 2 else 0.0
        groups[(lr, decay)].append(param)
    return [{"params": params, "lr": lr, "weight_decay": decay} for (lr, decay), params in groups.items()]
