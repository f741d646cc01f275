"""Checks for ActivationCapture(model, layer_names), a context manager of forward hooks."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _activation_hooks_helpers import (
    NET_LAYERS,
    TOL,
    check_activations,
    check_activations_dict,
    check_detached,
    check_no_hooks_left,
    inputs,
    model,
    reference,
)
from grader.judge import expect_close, expect_raised, expect_tensor, seeds

layer_subsets = st.lists(st.sampled_from(NET_LAYERS), min_size=1, max_size=5, unique=True)


def _capture(sandbox, arch, seed, names, rows, **kwargs):
    m, weights = model(arch, seed)
    xs = inputs(seed, rows)
    result = sandbox.call("capture", arch, weights, names, xs, **kwargs)
    return result, m, xs


# ------------------------------------------------------------------ what it captures


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Find each layer with model.get_submodule(name) (dotted names reach nested modules), "
    "register a forward hook on it in __enter__, store the hook's `output` argument under the "
    "name, and return self from __enter__."
)
@given(seed=seeds(), names=layer_subsets, rows=st.integers(1, 3))
@example(seed=1, names=["encoder.0", "head"], rows=2)
@example(seed=2, names=list(NET_LAYERS), rows=1)
def test_captures_named_layers(sandbox, seed, names, rows):
    """Captures each named layer's output, nested names such as 'encoder.0' included"""
    result, m, xs = _capture(sandbox, "net", seed, names, [rows])
    if result["entered_is_self"] is not True:
        raise AssertionError("`with ActivationCapture(...) as cap` must give the capture itself "
                             "(__enter__ returns self)")
    want, out = reference(m, names, xs[0])
    where = f"layer_names={names}, after one forward of a ({rows}, 4) input"
    check_activations(result["snapshots"][0], want, where)
    expect_close(expect_tensor(result["outputs"][0], shape=tuple(out.shape), name="model output"), out,
                 "model output inside the block", tol=TOL)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Store output.detach() (a copy of it, see the README), not the output itself: "
                  "keeping the graph alive holds memory and lets gradients leak in.")
@given(seed=seeds(), names=layer_subsets)
@example(seed=3, names=list(NET_LAYERS))
def test_captured_tensors_are_detached(sandbox, seed, names):
    """Captured tensors are detached: requires_grad is False and grad_fn is None"""
    result, _, _ = _capture(sandbox, "net", seed, names, [2])
    snapshot = check_activations_dict(result["snapshots"][0], "inside the block")
    for name, value in snapshot.items():
        check_detached(value, f"activations[{name!r}]")
    if not snapshot:
        raise AssertionError(f"nothing was captured for layer_names={names}")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Keep the handles that register_forward_hook returns and call .remove() on each "
                  "in __exit__; the activations stay readable after the block.")
def test_hooks_removed_on_exit(sandbox):
    """On leaving the block every hook is removed: later forwards capture nothing"""
    names = ["encoder.0", "encoder.2", "head"]
    m, weights = model("net", 4)
    x, later = inputs(4, [2, 3])
    result = sandbox.call("capture", "net", weights, names, [x], after=later)
    check_no_hooks_left(result["hooks_before"], result["hooks_after"], "after the with block")
    want, _ = reference(m, names, x)
    check_activations(result["on_exit"], want, "right after the with block")
    check_activations(result["after_forward"], want,
                      "after one more forward outside the block (nothing may change)")


@pytest.mark.points(2)
def test_hooks_removed_on_exception(sandbox):
    """An exception inside the block still removes every hook, and propagates unchanged"""
    names = ["encoder.1", "head"]
    m, weights = model("net", 5)
    (x,) = inputs(5, [3])
    result = sandbox.call("capture_raising", "net", weights, names, x)
    escaped = result["escaped"]
    if escaped is None or escaped["type"] != "LookupError":
        got = "nothing" if escaped is None else f"{escaped['type']}: {escaped['message']}"
        raise AssertionError(f"a LookupError raised inside the with block must propagate out of it; "
                             f"{got} came out")
    check_no_hooks_left(result["hooks_before"], result["hooks_after"],
                        "after a LookupError raised inside the with block")
    want, _ = reference(m, names, x)
    check_activations(result["activations"], want, "after the block that raised (one forward ran first)")


@pytest.mark.points(2)
def test_unknown_name_raises(sandbox):
    """An unknown layer name raises ValueError naming it, and leaves no hook behind"""
    (x,) = inputs(6, [2])
    cases = [
        (["decoder"], "decoder"),
        (["encoder.0", "encoder.7"], "encoder.7"),
        (["head", "encoder.0.weight"], "encoder.0.weight"),  # a parameter, not a module
        (["encoder", "head", "heads"], "heads"),
    ]
    for names, bad in cases:
        result = sandbox.call("capture_unknown", "net", names, x)
        expect_raised(result["raised"], "ValueError", match=re.escape(bad),
                      what=f"layer_names={names} ({bad!r} is not a submodule of the model, and must be named)")
        check_no_hooks_left(result["hooks_before"], result["hooks_after"],
                            f"after the ValueError for layer_names={names}")


@pytest.mark.points(2)
@given(seed=seeds(), names=layer_subsets, rows=st.lists(st.integers(1, 4), min_size=2, max_size=3))
@example(seed=7, names=["encoder.0", "head"], rows=[1, 3, 2])
def test_latest_forward_wins(sandbox, seed, names, rows):
    """Several forwards in one block: each name holds the latest output only"""
    result, m, xs = _capture(sandbox, "net", seed, names, rows)
    for i, x in enumerate(xs):
        want, _ = reference(m, names, x)
        check_activations(result["snapshots"][i], want,
                          f"layer_names={names}, after forward {i + 1} of {len(xs)} (inputs of {rows} rows)")


@pytest.mark.points(2)
@given(seed=seeds(), rows=st.integers(2, 4))
@example(seed=8, rows=4)
def test_copy_survives_in_place_ops(sandbox, seed, rows):
    """A captured output is a copy: a later in-place op in the model (ReLU(inplace=True)) does not change it"""
    names = ["0", "2"]
    result, m, xs = _capture(sandbox, "inplace", seed, names, [rows])
    want, _ = reference(m, names, xs[0])
    check_activations(result["snapshots"][0], want,
                      "Sequential(Linear, ReLU(inplace=True), Linear), layer_names=['0', '2'] "
                      "(layer '0' must keep its negative values)")


@pytest.mark.points(2)
@given(seed=seeds(), names=layer_subsets)
@example(seed=9, names=["head"])
def test_does_not_change_model_output(sandbox, seed, names):
    """Capturing leaves the model's output and its gradients as they are"""
    m, weights = model("net", seed)
    (x,) = inputs(seed, [3])
    grad_out = torch.randn(3, 3, generator=torch.Generator().manual_seed(seed + 1))
    result = sandbox.call("capture_grads", "net", weights, names, x, grad_out)
    x_ref = x.clone().requires_grad_(True)
    out = m(x_ref)
    (out * grad_out).sum().backward()
    expect_close(expect_tensor(result["out"], shape=(3, 3), name="model output"), out.detach(),
                 f"model output inside the block (layer_names={names})", tol=TOL)
    if not result["requires_grad"]:
        raise AssertionError(f"layer_names={names}: inside the block the model's output is cut off from "
                             f"the autograd graph; a hook must not replace the output (return None)")
    expect_close(expect_tensor(result["x_grad"], shape=(3, 4), name="gradient of x"), x_ref.grad,
                 "gradient of the input", tol=TOL)
    for name, p in m.named_parameters():
        if p.grad is None:
            continue
        got = result["grads"].get(name)
        if got is None:
            raise AssertionError(f"layer_names={names}: no gradient reached {name} inside the block")
        expect_close(expect_tensor(got, shape=tuple(p.shape), name=f"gradient of {name}"), p.grad,
                     f"gradient of {name}", tol=TOL)


@pytest.mark.points(1)
def test_tuple_outputs(sandbox):
    """A layer that returns a (nested) tuple is stored as a tuple of detached copies"""
    names = ["pair", "proj"]
    result, m, xs = _capture(sandbox, "tuple", 10, names, [3])
    want, _ = reference(m, names, xs[0])
    check_activations(result["snapshots"][0], want, "a layer returning (2h, (h + 1, h.sum(-1)))")
    check_detached(result["snapshots"][0]["pair"], "activations['pair']")


@pytest.mark.points(1)
def test_only_layers_that_ran(sandbox):
    """activations starts empty and only holds layers that ran; empty layer_names captures nothing"""
    m, weights = model("net", 11)
    (x,) = inputs(11, [2])
    for names in (["unused", "head"], []):
        result = sandbox.call("capture", "net", weights, names, [x])
        check_activations(result["initial"], {}, f"layer_names={names}, before any forward")
        want, _ = reference(m, [n for n in names if n != "unused"], x)
        check_activations(result["snapshots"][0], want,
                          f"layer_names={names} after one forward ('unused' is never called)")


@pytest.mark.points(1)
def test_keeps_the_models_own_hooks(sandbox):
    """Hooks the model had before the capture stay registered and keep running"""
    m, weights = model("net", 12)
    (x,) = inputs(12, [2])
    result = sandbox.call("capture_with_own_hook", "net", weights, ["head", "encoder.0"], "head", x)
    check_no_hooks_left(result["hooks_before"], result["hooks_after"],
                        "after the block, on a model whose 'head' had a hook of its own")
    if (result["calls_inside"], result["calls_after"]) != (1, 2):
        raise AssertionError(f"the model's own hook on 'head' ran {result['calls_inside']} time(s) inside the "
                             f"block and {result['calls_after']} in all after one more forward; expected 1 and 2")
