"""Mutant: keeps the first output of each layer: later forwards in the block do not overwrite it.

Should be caught by: test_latest_forward_wins.
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
            if name not in self.activations:
                self.activations[name] = _copy(output)

        return hook

    def __enter__(self) -> "ActivationCapture":
        for name, layer in self._layers.items():
            self._handles.append(layer.register_forward_hook(self._hook(name)))
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        for handle in self._handles:  # runs whether or not the block raised
            handle.remove()
        self._handles.clear()
        return False  # never swallow the block's exception
