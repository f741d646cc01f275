"""The gradient_checkpointing blocks, used by both zones: the checks compute the plain forward with
them, the probes hand them to the candidate's checkpointed_forward.

Each block is ``x + dropout(tanh(linear(x)))`` in float64, so every block's output has x's
shape and is a new tensor. A block holds nothing the probes measure: the probes build a
subclass of their own (``make_blocks(..., block=...)``) that records each call in a ledger
the candidate cannot reach (``grader.sandbox.instruments``).
"""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    """x + dropout(tanh(linear(x)))."""

    def __init__(self, width: int, p: float):
        super().__init__()
        self.linear = nn.Linear(width, width, dtype=torch.float64)
        self.drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(torch.tanh(self.linear(x)))


def make_blocks(n: int, width: int, p: float, *, block: type[Block] = Block) -> nn.ModuleList:
    """n blocks in training mode (dropout active when p > 0); parameters named "<i>.linear.weight"/"<i>.linear.bias"."""
    return nn.ModuleList(block(width, p) for _ in range(n)).train()


def load(blocks: nn.ModuleList, params: dict, *, requires_grad: bool = True) -> nn.ModuleList:
    """Copy ``params`` ({name: tensor}) into the blocks' parameters; set their requires_grad."""
    with torch.no_grad():
        for name, p in blocks.named_parameters():
            p.copy_(params[name])
            p.requires_grad_(requires_grad)
    return blocks
