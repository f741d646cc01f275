"""Mutant: never removes its hooks: __exit__ does nothing, and later forwards keep capturing.

Should be caught by: test_hooks_removed_on_exit, test_hooks_removed_on_exception,
test_keeps_the_models_own_hooks.
"""

from __future__ import annotations

import torch
from torch import nn


def _copy(value):
    """A detached copy: the graph is not kept, and later in-place changes in the model do not show."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    return value


class ActivationCapture:
    """with ActivationCapture(model, ["encoder.0", "head"]) as cap: model(x); then cap.activations."""

    def __init__(self, model: nn.Module, layer_names: list[str]):
        self.model = model
        self.layer_names = list(layer_names)
        self.activations: dict[str, object] = {}
        self._handles: list = []
        self._layers = {}
        for name in self.layer_names:  # resolve every name before any hook exists
            try:
                self._layers[name] = model.get_submodule(name)
            except AttributeError:
                raise ValueError(f"model has no submodule named {name!r}") from None

    def _hook(self, name: str):
        def hook(module, args, output):
            self.activations[name] = _copy(output)  # returns None: the output is left as it is

        return hook

    def __enter__(self) -> "ActivationCapture":
        for name, layer in self._layers.items():
            self._handles.append(layer.register_forward_hook(self._hook(name)))
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        return False
