"""Variant: validates in the constructor by walking the dotted path with getattr, and keeps
the hook removals on a contextlib.ExitStack that __exit__ closes; a hook per layer built by a
closure over the name; the copy is taken with clone() then detach().

Correct: must earn full marks.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn


def _resolve(model: nn.Module, name: str) -> nn.Module:
    module = model
    for part in name.split("."):
        module = getattr(module, part, None)
        if not isinstance(module, nn.Module):
            raise ValueError(f"{name!r} does not name a submodule of the model")
    return module


def _copy(out):
    if isinstance(out, torch.Tensor):
        return out.clone().detach()
    if isinstance(out, tuple):
        return tuple(_copy(o) for o in out)
    return out


class ActivationCapture:
    def __init__(self, model: nn.Module, layer_names: list[str]):
        self.layers = [(name, _resolve(model, name)) for name in layer_names]
        self.activations: dict = {}
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> "ActivationCapture":
        for name, layer in self.layers:
            def hook(module, inputs, output, name=name):
                self.activations[name] = _copy(output)

            self._stack.callback(layer.register_forward_hook(hook).remove)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._stack.close()
        return False
