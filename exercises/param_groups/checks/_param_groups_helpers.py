"""Judge-side helpers for the param_groups checks: the contract's own answer (which
parameters are frozen, each trainable parameter's lr and weight decay, the parameters
after one SGD or AdamW step) and readers for what the probes report.

Learning rates and weight decays are powers of two, gradients and weights multiples
of 1/8, so the SGD step is exact and the AdamW step is compared with a tight tolerance.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.judge import expect_equal, expect_returned
from shared import shapes

SHAPES = shapes()
NAMES = list(SHAPES)
#: Prefixes the checks draw from: whole modules, nested ones, single parameters, and the
#: traps for a plain string prefix ("encoder" vs "encoder_norm", "encoder.0.lin" vs "encoder.0.lin2").
PREFIXES = ["embed", "encoder", "encoder.0", "encoder.1", "encoder.0.lin", "encoder.1.lin2",
            "encoder.1.norm", "encoder.0.lin.weight", "encoder_norm", "conv", "head", "head.bias",
            "scale", "temperature"]
POWERS = [2.0 ** -k for k in range(1, 12)]
EPS = 1e-8  # AdamW's default eps


def matches(prefix: str, name: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def frozen_by(prefixes) -> dict:
    """{name: requires_grad} after freeze(model, prefixes) on a fresh model."""
    return {name: not any(matches(p, name) for p in prefixes) for name in NAMES}


def expected_groups(lr_by_prefix: dict, weight_decay: float, default_lr: float, frozen=()) -> dict:
    """{name: [lr, weight_decay]} for every trainable parameter."""
    out = {}
    for name in NAMES:
        if name in frozen:
            continue
        matching = [p for p in lr_by_prefix if matches(p, name)]
        lr = lr_by_prefix[max(matching, key=len)] if matching else default_lr
        decay = weight_decay if len(SHAPES[name]) >= 2 else 0.0
        out[name] = [lr, decay]
    return out


def groups_of(answer: dict) -> list:
    """The groups the probe described, non-empty ones, after checking they were a list of dicts."""
    result = expect_returned(answer["result"], function="param_groups",
                             returns='a list of dicts {"params": [...], "lr": ..., "weight_decay": ...}')
    return [g for g in result["groups"] if g.get("params") != []]


def assignment(groups: list, what: str) -> dict:
    """{name: [lr, weight_decay]} read from the groups; fails on a parameter in two groups."""
    seen: dict = {}
    for i, g in enumerate(groups):
        params = g.get("params")
        if not isinstance(params, list):
            raise AssertionError(f'{what}: group {i}\'s "params" is a {g.get("params_type")}, expected a list '
                                 "of the model's parameters")
        for name in params:
            if name in seen:
                raise AssertionError(f"{what}: parameter {name} is in more than one group "
                                     "(the optimizer refuses that; a tied parameter counts once)")
            seen[name] = [g.get("lr", "<no lr>"), g.get("weight_decay", "<no weight_decay>")]
    return seen


def expect_assignment(answer: dict, lr_by_prefix, weight_decay, default_lr, frozen=(), *, what: str,
                      only: str | None = None) -> None:
    """Which parameters are in the groups, and each one's lr and weight decay (only: "lr" or "weight_decay")."""
    got = assignment(groups_of(answer), what)
    want = expected_groups(lr_by_prefix, weight_decay, default_lr, frozen)
    expect_equal(sorted(got), sorted(want), name=f"{what}: the parameters in the groups",
                 note="every trainable parameter once; frozen ones in none")
    index = {"lr": 0, "weight_decay": 1}.get(only)
    for name in want:
        g, w = (got[name], want[name]) if index is None else (got[name][index], want[name][index])
        expect_equal(g, w, name=f"{what}: [lr, weight_decay] of {name}" if index is None
                     else f"{what}: {only} of {name}")


def random_values(g: torch.Generator) -> dict:
    """{name: tensor} for every parameter: multiples of 1/8 in [-2, 2]."""
    return {n: torch.randint(-16, 17, s, generator=g).float() / 8 for n, s in SHAPES.items()}


def random_grads(g: torch.Generator) -> dict:
    """{name: tensor}: nonzero multiples of 1/8 in [-2, 2] (AdamW's first step is about lr * sign)."""
    out = {}
    for n, s in SHAPES.items():
        v = torch.randint(1, 17, s, generator=g).float() / 8
        sign = torch.randint(0, 2, s, generator=g).float() * 2 - 1
        out[n] = v * sign
    return out


def expected_after(optimizer: str, values: dict, grads: dict, lr_by_prefix, weight_decay, default_lr,
                   frozen=()) -> dict:
    """Every parameter after one step of SGD (no momentum) or AdamW (defaults) on the contract's groups."""
    rules = expected_groups(lr_by_prefix, weight_decay, default_lr, frozen)
    out = {}
    for name, p in values.items():
        if name not in rules:
            out[name] = p.clone()
            continue
        lr, wd = rules[name]
        p64, g64 = p.double(), grads[name].double()
        if optimizer == "sgd":
            new = p64 - lr * (g64 + wd * p64)
        else:  # AdamW, first step: decoupled decay, then lr * m_hat / (sqrt(v_hat) + eps) = lr * g / (|g| + eps)
            new = p64 * (1 - lr * wd) - lr * g64 / (g64.abs() + EPS)
        out[name] = new.float()
    return out


lr_maps = st.dictionaries(st.sampled_from(PREFIXES), st.sampled_from(POWERS), max_size=5)
frozen_sets = st.lists(st.sampled_from(NAMES), max_size=4, unique=True)
