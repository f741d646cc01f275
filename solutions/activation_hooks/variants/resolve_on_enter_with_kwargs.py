"""Variant: resolves the names from a dict of named_modules() in __enter__ (all of them before
any hook is registered), registers hooks with with_kwargs=True through functools.partial, and
copies outputs with a recursive map over tuples.

Correct: must earn full marks (the ValueError comes from __enter__, with no hook left).
"""

from __future__ import annotations

import functools

import torch
from torch import nn


def _snapshot(value):
    if isinstance(value, tuple):
        return tuple(map(_snapshot, value))
    if torch.is_tensor(value):
        return value.detach().clone()
    return value


class ActivationCapture:
    def __init__(self, model: nn.Module, layer_names: list[str]):
        self.model = model
        self.names = list(layer_names)
        self.activations = {}
        self.handles = []

    def _record(self, name, module, args, kwargs, output):
        self.activations[name] = _snapshot(output)

    def __enter__(self):
        modules = dict(self.model.named_modules())
        missing = [n for n in self.names if n not in modules]
        if missing:
            raise ValueError(f"unknown layer name(s): {', '.join(missing)}")
        for name in self.names:
            hook = functools.partial(self._record, name)
            self.handles.append(modules[name].register_forward_hook(hook, with_kwargs=True))
        return self

    def __exit__(self, *exc_info):
        while self.handles:
            self.handles.pop().remove()
        return None
