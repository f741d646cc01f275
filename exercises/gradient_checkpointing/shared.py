"""The gradient_checkpointing blocks, used by both zones: the checks compute the plain forward with
them, the probes hand them to the candidate's checkpointed_forward.

Each block is ``x + dropout(tanh(linear(x)))`` in float64, so every block's output has x's
shape and is a new tensor. A block appends ``[its index, torch.is_grad_enabled()]`` to
``calls`` (a list shared by all the blocks of a model) every time its forward runs: that log
is how the checks see when, and in which grad mode, each block ran. Given ``outputs`` (a list
shared the same way), a block also appends ``(its index, a weak reference to the storage of
the tensor it returns)``: the probe reads from it which outputs are still alive after the
forward (a weak reference to the storage, so a view or a ``detach()`` of the output kept
somewhere keeps it alive too).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.multiprocessing.reductions import StorageWeakRef


class Block(nn.Module):
    """x + dropout(tanh(linear(x))), logging each call."""

    def __init__(self, index: int, width: int, p: float, calls: list | None = None, outputs: list | None = None):
        super().__init__()
        self.index = index
        self.linear = nn.Linear(width, width, dtype=torch.float64)
        self.drop = nn.Dropout(p)
        self.calls = calls
        self.outputs = outputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.calls is not None:
            self.calls.append([self.index, torch.is_grad_enabled()])
        out = x + self.drop(torch.tanh(self.linear(x)))
        if self.outputs is not None:
            self.outputs.append((self.index, StorageWeakRef(out.untyped_storage())))
        return out


def make_blocks(n: int, width: int, p: float, calls: list | None = None, outputs: list | None = None) -> nn.ModuleList:
    """n blocks in training mode (dropout active when p > 0); parameters named "<i>.linear.weight"/"<i>.linear.bias"."""
    return nn.ModuleList(Block(i, width, p, calls, outputs) for i in range(n)).train()


def load(blocks: nn.ModuleList, params: dict, *, requires_grad: bool = True) -> nn.ModuleList:
    """Copy ``params`` ({name: tensor}) into the blocks' parameters; set their requires_grad."""
    with torch.no_grad():
        for name, p in blocks.named_parameters():
            p.copy_(params[name])
            p.requires_grad_(requires_grad)
    return blocks
