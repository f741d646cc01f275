"""Variant (written from the README alone): names looked up in dict(model.named_modules()), one
functools.partial hook per layer, handles kept in a list and removed in __exit__; outputs copied by a
small recursive helper."""

from __future__ import annotations

import functools

import torch
from torch import nn


def _snapshot(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_snapshot(v) for v in value)
    return value


class ActivationCapture:
    def __init__(self, model: nn.Module, layer_names: list[str]):
        modules = dict(model.named_modules())
        self._targets = []
        for name in layer_names:
            if name not in modules:
                raise ValueError(f"no submodule named {name!r} in the model")
            self._targets.append((name, modules[name]))
        self.activations: dict = {}
        self._handles = []

    def _record(self, name, module, inputs, output):
        self.activations[name] = _snapshot(output)

    def __enter__(self) -> "ActivationCapture":
        try:
            for name, module in self._targets:
                self._handles.append(module.register_forward_hook(functools.partial(self._record, name)))
        except BaseException:
            self._remove()
            raise
        return self

    def _remove(self):
        while self._handles:
            self._handles.pop().remove()

    def __exit__(self, exc_type, exc, tb):
        self._remove()
        return False
