"""The model the param_groups probes build and the checks reason about (both zones import it).

Its parameter names, in model.named_parameters() order (a module's own parameters come
before its submodules'; a tied parameter is listed once):

    scale (4,)  temperature ()  embed.weight (6, 4)
    encoder.0.lin.weight (4, 4)  encoder.0.lin.bias (4,)  encoder.0.lin2.weight (4, 4)
    encoder.0.lin2.bias (4,)  encoder.0.norm.weight (4,)  encoder.0.norm.bias (4,)
    encoder.1.* (as encoder.0)  encoder_norm.weight (4,)  encoder_norm.bias (4,)
    conv.weight (2, 2, 3)  conv.bias (2,)  head.weight (3, 4)  head.bias (3,)

decoder.weight is embed.weight (tied), so it is not listed again. Name traps for a
plain string prefix: "encoder" vs "encoder_norm", "encoder.0.lin" vs "encoder.0.lin2".
"""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.lin2 = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 4)
        self.encoder = nn.Sequential(Block(), Block())
        self.encoder_norm = nn.LayerNorm(4)
        self.conv = nn.Conv1d(2, 2, 3)
        self.head = nn.Linear(4, 3)
        self.scale = nn.Parameter(torch.ones(4))
        self.temperature = nn.Parameter(torch.tensor(1.0))
        self.decoder = nn.Linear(4, 6, bias=False)
        self.decoder.weight = self.embed.weight  # tied: one parameter, two names


def build(values: dict | None = None) -> Net:
    """A Net under a fixed seed; with ``values`` ({name: tensor}), those copied into its parameters."""
    torch.manual_seed(0)
    net = Net()
    if values is not None:
        with torch.no_grad():
            for name, p in net.named_parameters():
                p.copy_(values[name])
    return net


def shapes() -> dict:
    """{name: shape} of every parameter, in named_parameters() order."""
    return {name: tuple(p.shape) for name, p in Net().named_parameters()}
