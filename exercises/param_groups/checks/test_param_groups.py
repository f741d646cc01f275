"""Checks for freeze(model, prefixes) and param_groups(model, lr_by_prefix, weight_decay, default_lr=...)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _param_groups_helpers import (
    NAMES,
    PREFIXES,
    POWERS,
    expect_assignment,
    expected_after,
    frozen_by,
    groups_of,
    lr_maps,
    frozen_sets,
    random_grads,
    random_values,
)
from grader.judge import call, candidate_raises, expect_close, expect_equal, expect_raised, expect_tensor, seeds

WD = 2.0 ** -4


def _groups(sandbox, lr_by_prefix, weight_decay=WD, default_lr=2.0 ** -10, frozen=()):
    return call(sandbox, "pg_groups", lr_by_prefix, weight_decay, default_lr, list(frozen))


def _describe(lr_by_prefix, weight_decay=WD, default_lr=2.0 ** -10, frozen=()) -> str:
    text = f"param_groups(model, {lr_by_prefix}, {weight_decay}, default_lr={default_lr})"
    return text + (f" with {sorted(frozen)} frozen" if frozen else "")


# ------------------------------------------------------------------ freeze


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Set p.requires_grad = False for every (name, p) in model.named_parameters() that a prefix matches.")
def test_freeze_by_prefix(sandbox):
    """freeze sets requires_grad=False on the parameters a prefix matches, and unfreezes none"""
    cases = [(["head"], []), (["encoder.0", "scale"], []), (["embed", "conv.bias", "temperature"], []),
             (["head"], ["conv.weight", "scale"])]
    for prefixes, before in cases:
        answer = call(sandbox, "pg_freeze", prefixes, frozen_before=before)
        what = f"freeze(model, {prefixes})" + (f" with {before} already frozen" if before else "")
        if answer["raised"]:
            raise AssertionError(f"{what} raised {answer['raised'].get('type')}: {answer['raised'].get('message')}")
        want = {name: trainable and name not in before for name, trainable in frozen_by(prefixes).items()}
        expect_equal(answer["requires_grad"], want, name=f"requires_grad after {what}",
                     note="frozen: what a prefix matches, and what was frozen before")
        expect_equal(answer["returned"], None, name=f"what {what} returned (it returns None)")


@pytest.mark.points(1)
@given(prefixes=st.lists(st.sampled_from(PREFIXES), min_size=1, max_size=3), as_tuple=st.booleans())
@example(prefixes=["encoder"], as_tuple=False)
@example(prefixes=["encoder.0.lin"], as_tuple=True)
def test_freeze_matches_whole_components(sandbox, prefixes, as_tuple):
    """freeze matches whole name components: 'encoder' freezes encoder.*, not encoder_norm.*"""
    answer = call(sandbox, "pg_freeze", prefixes, as_tuple=as_tuple)
    if answer["raised"]:
        raise AssertionError(f"freeze(model, {prefixes}) raised {answer['raised'].get('type')}: "
                             f"{answer['raised'].get('message')}")
    expect_equal(answer["requires_grad"], frozen_by(prefixes), name=f"requires_grad after freeze(model, {prefixes})",
                 note="a prefix matches name == prefix or name.startswith(prefix + '.')")


@pytest.mark.points(1)
def test_freeze_unknown_prefix_raises_before_freezing(sandbox):
    """freeze: a prefix matching no parameter raises ValueError naming it, and nothing is frozen"""
    for prefixes, bad in ((["decoderx"], "decoderx"), (["head", "enc"], "enc"),
                          (["encoder.0", "encoder.2"], "encoder.2"), (["head.weigh"], "head.weigh")):
        answer = call(sandbox, "pg_freeze", prefixes)
        expect_raised(answer["raised"], "ValueError", what=f"freeze(model, {prefixes})", match=bad.replace(".", r"\."))
        expect_equal(answer["requires_grad"], {n: True for n in NAMES},
                     name=f"requires_grad after freeze(model, {prefixes}) raised",
                     note="check every prefix before freezing anything")


# ------------------------------------------------------------------ groups


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Go through model.named_parameters(); skip frozen ones; put each other parameter in one group "
    "whose lr comes from its prefix (default_lr otherwise)."
)
def test_each_trainable_parameter_once_with_its_lr(sandbox):
    """Each trainable parameter is in exactly one group, with the lr of its prefix (or default_lr)"""
    cases = [({"head": 2.0 ** -3, "embed": 2.0 ** -5}, ()),
             ({"encoder": 2.0 ** -6}, ("head.weight", "head.bias", "scale")),
             ({}, ("temperature",))]
    for lr_by_prefix, frozen in cases:
        answer = _groups(sandbox, lr_by_prefix, frozen=frozen)
        expect_assignment(answer, lr_by_prefix, WD, 2.0 ** -10, frozen, what=_describe(lr_by_prefix, frozen=frozen),
                          only="lr")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("weight_decay for parameters with p.ndim >= 2; 0.0 for biases, norm weights, any 1-D or 0-d parameter.")
def test_no_weight_decay_on_vectors_and_scalars(sandbox):
    """weight_decay on ndim >= 2 parameters only: none on biases, norm weights, 1-D and 0-d parameters"""
    for wd in (2.0 ** -4, 2.0 ** -1):
        lr_by_prefix = {"encoder.1": 2.0 ** -4}
        answer = _groups(sandbox, lr_by_prefix, weight_decay=wd)
        expect_assignment(answer, lr_by_prefix, wd, 2.0 ** -10, what=_describe(lr_by_prefix, wd),
                          only="weight_decay")


@pytest.mark.points(2)
@given(lr_by_prefix=lr_maps, frozen=frozen_sets, weight_decay=st.sampled_from([0.0] + POWERS),
       default_lr=st.sampled_from(POWERS))
@example(lr_by_prefix={"encoder": 2.0 ** -8, "encoder.1": 2.0 ** -3, "encoder.1.lin2": 2.0 ** -1},
         frozen=[], weight_decay=2.0 ** -4, default_lr=2.0 ** -10)
@example(lr_by_prefix={"encoder.0.lin.weight": 2.0 ** -2, "encoder.0": 2.0 ** -5, "encoder": 2.0 ** -7},
         frozen=["encoder.0.lin.bias"], weight_decay=2.0 ** -4, default_lr=2.0 ** -10)
def test_longest_prefix_wins(sandbox, lr_by_prefix, frozen, weight_decay, default_lr):
    """The longest matching prefix decides the lr; lr and weight_decay right for every parameter"""
    answer = _groups(sandbox, lr_by_prefix, weight_decay, default_lr, frozen)
    expect_assignment(answer, lr_by_prefix, weight_decay, default_lr, frozen,
                      what=_describe(lr_by_prefix, weight_decay, default_lr, frozen))


@pytest.mark.points(1)
def test_prefixes_match_whole_components(sandbox):
    """Prefixes match whole name components: 'encoder' does not match encoder_norm.*, 'encoder.0.lin' not lin2"""
    for lr_by_prefix in ({"encoder": 2.0 ** -3}, {"encoder.0.lin": 2.0 ** -3, "encoder_norm": 2.0 ** -6},
                         {"head": 2.0 ** -2, "encoder.1.lin2": 2.0 ** -5}):
        answer = _groups(sandbox, lr_by_prefix)
        expect_assignment(answer, lr_by_prefix, WD, 2.0 ** -10, what=_describe(lr_by_prefix), only="lr")


@pytest.mark.points(1)
def test_frozen_parameters_in_no_group(sandbox):
    """Frozen parameters are in no group, even when a prefix matches them (and that is no error)"""
    cases = [({"head": 2.0 ** -3}, ("head.weight", "head.bias")),
             ({"encoder.0": 2.0 ** -3, "embed": 2.0 ** -2}, tuple(n for n in NAMES if n.startswith("encoder.0."))),
             ({}, ("embed.weight", "conv.weight", "scale"))]
    for lr_by_prefix, frozen in cases:
        answer = _groups(sandbox, lr_by_prefix, frozen=frozen)
        expect_assignment(answer, lr_by_prefix, WD, 2.0 ** -10, frozen, what=_describe(lr_by_prefix, frozen=frozen),
                          only="lr")


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint('Each group: {"params": [the model\'s parameters, as a list], "lr": ..., "weight_decay": ...}.')
def test_group_shape(sandbox):
    """Each group is a dict with exactly "params" (a list), "lr" and "weight_decay" (numbers)"""
    answer = _groups(sandbox, {"encoder": 2.0 ** -5})
    groups = groups_of(answer)
    if not groups:
        raise AssertionError("param_groups returned no group with parameters")
    for i, g in enumerate(groups):
        expect_equal(g["keys"], ["lr", "params", "weight_decay"], name=f"the keys of group {i}")
        expect_equal(g["params_type"], "list", name=f'the type of group {i}\'s "params"')
        for key in ("lr", "weight_decay"):
            kind = getattr(g.get(key), "type_name", None) or type(g.get(key)).__name__
            if kind not in ("float", "int"):
                raise AssertionError(f"group {i}[{key!r}]: expected a Python float, got a {kind}")


@pytest.mark.points(1)
def test_params_keep_model_order(sandbox):
    """Inside each group, parameters keep model.named_parameters() order; a tied weight appears once"""
    answer = _groups(sandbox, {"encoder": 2.0 ** -5, "head": 2.0 ** -5})
    for i, g in enumerate(groups_of(answer)):
        names = g["params"] if isinstance(g.get("params"), list) else []
        expect_equal(names, sorted(names, key=lambda n: NAMES.index(n) if n in NAMES else -1),
                     name=f"the parameters of group {i}, in order", note="model.named_parameters() order")
    expect_assignment(answer, {"encoder": 2.0 ** -5, "head": 2.0 ** -5}, WD, 2.0 ** -10,
                      what="a model whose decoder.weight is embed.weight", only="lr")


@pytest.mark.points(1)
def test_unknown_prefix_raises(sandbox):
    """param_groups: a prefix of lr_by_prefix that matches no parameter raises ValueError naming it"""
    for lr_by_prefix, bad in (({"decoderx": 2.0 ** -3}, "decoderx"),
                              ({"head": 2.0 ** -3, "enc": 2.0 ** -4}, "enc"),
                              ({"encoder.3": 2.0 ** -3}, "encoder.3")):
        with candidate_raises("ValueError", match=bad.replace(".", r"\."), what=_describe(lr_by_prefix)):
            _groups(sandbox, lr_by_prefix)


# ------------------------------------------------------------------ optimizers


def _step(sandbox, optimizer, seed, lr_by_prefix, weight_decay, default_lr, frozen):
    g = torch.Generator().manual_seed(seed)
    values, grads = random_values(g), random_grads(g)
    answer = call(sandbox, "pg_step", optimizer, values, grads, lr_by_prefix, weight_decay, default_lr, list(frozen))
    what = f"one {'SGD' if optimizer == 'sgd' else 'AdamW'} step with {_describe(lr_by_prefix, weight_decay, default_lr, frozen)}"
    groups_of(answer)
    if "refused" in answer:
        raised = answer["refused"]
        raise AssertionError(f"{what}: the optimizer refused the groups: {raised.get('type')}: {raised.get('message')}")
    after = answer.get("after") or {}
    want = expected_after(optimizer, values, grads, lr_by_prefix, weight_decay, default_lr, frozen)
    for name, w in want.items():
        got = expect_tensor(after.get(name), shape=w.shape, dtype=w.dtype, name=f"{name} after {what}")
        if name in frozen:
            expect_close(got, w, f"{name} (frozen) after {what}", atol=0, rtol=0, note="a frozen parameter must not move")
        else:
            expect_close(got, w, f"{name} after {what}", atol=1e-6, rtol=1e-6)


@pytest.mark.points(2)
@given(lr_by_prefix=lr_maps, frozen=frozen_sets, weight_decay=st.sampled_from([0.0] + POWERS[:4]), seed=seeds())
@example(lr_by_prefix={"encoder": 2.0 ** -3, "encoder.0.lin": 2.0 ** -1}, frozen=["head.weight", "scale"],
         weight_decay=2.0 ** -1, seed=0)
def test_sgd_step_moves_the_right_parameters(sandbox, lr_by_prefix, frozen, weight_decay, seed):
    """torch.optim.SGD(groups) accepts them; one step moves exactly the trainable parameters, each by its lr and decay"""
    _step(sandbox, "sgd", seed, lr_by_prefix, weight_decay, 2.0 ** -2, frozen)


@pytest.mark.points(1)
def test_adamw_step_moves_the_right_parameters(sandbox):
    """torch.optim.AdamW(groups) accepts them; one step moves exactly the trainable parameters"""
    _step(sandbox, "adamw", 3, {"embed": 2.0 ** -4, "encoder.1": 2.0 ** -2, "conv.weight": 2.0 ** -3},
          2.0 ** -1, 2.0 ** -5, ["encoder.0.norm.weight", "temperature"])
