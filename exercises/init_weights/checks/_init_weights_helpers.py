"""Judge-side helpers for the init_weights checks: the probes' model and the expected laws.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from grader.judge import expect_tensor

STD_TOLERANCE = 0.10  # relative; the smallest conv has 6912 weights: 10% is about 12 standard errors

# The probes' zoo (probes.py:_zoo): name -> weight shape.
LINEARS = {"linear": (64, 256), "linear_wide": (512, 32)}
CONVS = {"conv1d": (128, 32, 5), "conv2d": (64, 16, 3, 3), "conv3d": (32, 8, 3, 3, 3)}
NESTED_LINEARS = {"block.body.0.0": (5, 6)}
NESTED_CONVS = {"block.body.1": (4, 2, 3, 3)}
BIAS_FREE_LINEARS = {"0": (30, 40)}
BIAS_FREE_CONVS = {"1": (6, 3, 2), "2": (4, 2, 3, 3), "3": (3, 2, 2, 2, 2)}

#: state_dict entries that must stay exactly as they were (shapes), by module.
NORMS = {
    "bn1": {"weight": (4,), "bias": (4,), "running_mean": (4,), "running_var": (4,)},
    "bn2": {"weight": (3,), "bias": (3,), "running_mean": (3,), "running_var": (3,)},
    "ln": {"weight": (6,), "bias": (6,)},
    "gn": {"weight": (4,), "bias": (4,)},
}
OTHERS = {
    "emb": {"weight": (10, 4)},
    "deconv": {"weight": (3, 5, 2), "bias": (5,)},
    "gate": {"weight": (3, 4), "bias": (4,)},
    "block.gate": {"weight": (3, 4), "bias": (4,)},
}
NORM_DEFAULTS = {"weight": 1.0, "bias": 0.0, "running_mean": 0.0, "running_var": 1.0}
SENTINEL = 5.0


def entries(modules: dict) -> dict:
    """{'module.name': shape} for a NORMS/OTHERS-like table."""
    return {f"{m}.{k}": shape for m, table in modules.items() for k, shape in table.items()}


def preset_values(modules: dict, seed: int) -> dict:
    """Unusual values (not 0 or 1) for the entries: positive where a variance is expected."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in entries(modules).items():
        value = torch.rand(shape, generator=g) * 3 + 0.5
        out[name] = value if name.endswith("running_var") else value * torch.sign(torch.randn(shape, generator=g))
    return out


def sentinel_values(linears: dict, convs: dict, *, bias: bool = True) -> dict:
    """Weights (and biases) of these layers set to SENTINEL, so that an untouched one shows."""
    out = {}
    for name, shape in {**linears, **convs}.items():
        out[f"{name}.weight"] = torch.full(shape, SENTINEL)
        if bias:
            out[f"{name}.bias"] = torch.full((shape[0],), SENTINEL)
    return out


def state_of(result) -> dict:
    if not isinstance(result, dict) or not isinstance(result.get("state"), dict):
        raise AssertionError(f"the probe returned {result!r}, expected a dict with the model's state")
    return result["state"]


def weight(state: dict, name: str, shape: tuple) -> Tensor:
    return expect_tensor(state.get(f"{name}.weight"), shape=shape, dtype=torch.float32, name=f"{name}.weight")


# ------------------------------------------------------------------------ the laws


def xavier_bound(shape: tuple) -> float:
    fan_out, fan_in = shape
    return math.sqrt(6.0 / (fan_in + fan_out))


def kaiming_fan_out_std(shape: tuple) -> float:
    return math.sqrt(2.0 / (shape[0] * math.prod(shape[2:])))
