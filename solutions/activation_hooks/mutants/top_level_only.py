"""Mutant: looks names up among the model's direct children only: nested names such as
'encoder.0' are rejected as unknown.

Should be caught by: test_captures_named_layers, test_unknown_name_raises (a nested
name is no longer found), and every check that names a nested layer.
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
                self._layers[name] = dict(model.named_children())[name]
            except KeyError:
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
        for handle in self._handles:  # runs whether or not the block raised
            handle.remove()
        self._handles.clear()
        return False  # never swallow the block's exception
