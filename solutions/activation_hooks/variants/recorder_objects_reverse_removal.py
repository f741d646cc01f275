"""Variant (written from the README alone): one small recorder object per layer (a callable class, not a
closure), the names checked against the set of named_modules() before anything is resolved, and the hooks
removed in reverse order of registration inside a try/finally; copies made by an explicit stack-free
recursion that rebuilds tuples."""

from __future__ import annotations

import torch
from torch import nn


def detached_copy(value):
    if torch.is_tensor(value):
        return value.detach().clone()
    if type(value) is tuple:
        return tuple(map(detached_copy, value))
    return value


class _Recorder:
    def __init__(self, store: dict, name: str):
        self.store = store
        self.name = name

    def __call__(self, module, inputs, output):
        self.store[self.name] = detached_copy(output)


class ActivationCapture:
    def __init__(self, model: nn.Module, layer_names: list[str]):
        known = {name for name, _ in model.named_modules()}
        missing = [name for name in layer_names if name not in known]
        if missing:
            raise ValueError(f"unknown layer name(s): {', '.join(missing)}")
        self.model = model
        self.targets = [(name, model.get_submodule(name)) for name in layer_names]
        self.activations: dict = {}
        self.handles: list = []

    def __enter__(self) -> "ActivationCapture":
        for name, layer in self.targets:
            self.handles.append(layer.register_forward_hook(_Recorder(self.activations, name)))
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            while self.handles:
                self.handles.pop().remove()
        finally:
            self.handles = []
        return None
