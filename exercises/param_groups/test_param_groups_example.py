"""Example tests for the param_groups exercise. Run: pytest exercises/param_groups/test_param_groups_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import pytest
import torch
from torch import nn

from param_groups import freeze, param_groups


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 8), nn.LayerNorm(8), nn.Linear(8, 2))


def _by_name(model, groups):
    """{parameter name: (lr, weight_decay)} read from the groups; each parameter at most once."""
    names = {id(p): n for n, p in model.named_parameters()}
    out = {}
    for g in groups:
        for p in g["params"]:
            assert names[id(p)] not in out, "a parameter is in two groups"
            out[names[id(p)]] = (g["lr"], g["weight_decay"])
    return out


def test_the_example_in_the_readme():
    model = _model()
    freeze(model, ["0"])
    assert not model[0].weight.requires_grad and model[1].weight.requires_grad

    groups = param_groups(model, {"1": 1e-4, "3": 1e-3}, weight_decay=0.01, default_lr=5e-4)
    assert _by_name(model, groups) == {
        "1.weight": (1e-4, 0.01), "1.bias": (1e-4, 0.0),
        "2.weight": (5e-4, 0.0), "2.bias": (5e-4, 0.0),      # LayerNorm: no decay, default lr
        "3.weight": (1e-3, 0.01), "3.bias": (1e-3, 0.0),
    }                                                         # 0.weight is frozen: in no group
    torch.optim.AdamW(groups)                                 # accepted as is


def test_longest_prefix_and_whole_components():
    model = nn.Module()
    model.enc = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    model.enc_norm = nn.LayerNorm(2)
    groups = param_groups(model, {"enc": 0.5, "enc.1": 0.25}, 0.0, default_lr=0.125)
    lrs = {name: lr for name, (lr, _) in _by_name(model, groups).items()}
    assert lrs["enc.0.weight"] == 0.5 and lrs["enc.1.weight"] == 0.25
    assert lrs["enc_norm.weight"] == 0.125                    # "enc" does not match "enc_norm"


def test_unknown_prefixes():
    model = _model()
    with pytest.raises(ValueError, match="7"):
        freeze(model, ["7"])
    assert all(p.requires_grad for p in model.parameters())
    with pytest.raises(ValueError, match="4"):
        param_groups(model, {"4": 1e-3}, 0.01, default_lr=5e-4)
