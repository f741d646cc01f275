"""Checks for evaluate(model, batches, loss_fn) -> {"loss": float, "accuracy": float}."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _evaluate_helpers import (
    MODULES,
    describe,
    expect_modes,
    expect_values,
    make_problem,
    result_of,
)
from grader.judge import call, expect_equal, expect_raised, seeds

TRAIN = {name: True for name in MODULES}
EVAL = {name: False for name in MODULES}
FROZEN_BLOCK = {"": True, "lin": True, "drop": True, "block": False, "block.0": False}
MC_DROPOUT = {"": False, "lin": False, "drop": True, "block": False, "block.0": False}
STARTS = [("in train mode", TRAIN), ("in eval mode", EVAL),
          ("in train mode with model.block (and its dropout) in eval mode", FROZEN_BLOCK),
          ("in eval mode with model.drop in train mode", MC_DROPOUT)]


def _run(sandbox, sizes, seed=0, **kwargs):
    weight, bias, batches = make_problem(seed, sizes, features=kwargs.pop("features", 3),
                                         classes=kwargs.pop("classes", 3))
    answer = call(sandbox, "ev_run", weight, bias, batches, **kwargs)
    return answer, (weight, bias, batches)


# ------------------------------------------------------------------ values


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Run every batch through the model, add up loss_fn's value and the number of correct "
    "argmax(dim=1) predictions, and divide by the number of samples."
)
@given(batch=st.integers(1, 5), count=st.integers(1, 4), features=st.integers(1, 3),
       classes=st.integers(2, 4), seed=seeds())
@example(batch=4, count=2, features=2, classes=3, seed=1)
def test_loss_and_accuracy_equal_batches(sandbox, batch, count, features, classes, seed):
    """Mean loss and accuracy over batches of equal size"""
    sizes = [batch] * count
    answer, problem = _run(sandbox, sizes, seed, features=features, classes=classes)
    expect_values(answer, *problem, what=describe(sizes))


@pytest.mark.points(2)
@given(sizes=st.lists(st.integers(1, 6), min_size=2, max_size=4).filter(lambda s: len(set(s)) > 1),
       classes=st.integers(2, 4), seed=seeds())
@example(sizes=[1, 7], classes=3, seed=3)
@example(sizes=[5, 3, 1], classes=2, seed=4)
def test_weights_batches_by_size(sandbox, sizes, classes, seed):
    """Batches of unequal size weigh by their size: the mean is over samples, not batches"""
    answer, problem = _run(sandbox, sizes, seed, classes=classes)
    expect_values(answer, *problem, what=describe(sizes))


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint('Return {"loss": float(...), "accuracy": float(...)}: .item() gives a Python float.')
def test_returns_python_floats(sandbox):
    """Returns a dict with exactly "loss" and "accuracy", both Python floats"""
    answer, _ = _run(sandbox, [3, 2])
    result = result_of(answer)
    expect_equal(result["keys"], ["accuracy", "loss"], name="the keys of the dict evaluate returned")
    for key in ("loss", "accuracy"):
        kind = result["types"].get(key)
        if kind != "float":
            raise AssertionError(f'evaluate(...)["{key}"]: expected a Python float, got a {kind} '
                                 "(a tensor keeps memory, and possibly a graph, alive; use .item() or float())")


# ------------------------------------------------------------------ modes and gradients


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Call model.eval() before the first forward: it sets the model and every submodule to eval.")
def test_eval_mode_during_every_forward(sandbox):
    """Every forward runs with the model and all its submodules in eval mode"""
    for start, modes in STARTS:
        answer, _ = _run(sandbox, [2, 3, 1], modes=modes)
        result_of(answer)
        for j, record in enumerate(answer["calls"]):
            expect_modes(record["modes"], EVAL, f"during forward {j} (the model {start} before the call)")
        expect_equal(len(answer["calls"]), 3, name="forwards for 3 batches")


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Run the loop under `with torch.no_grad():` (or torch.inference_mode()).")
def test_no_grad_during_every_forward(sandbox):
    """Every forward runs with gradient tracking off (no_grad or inference_mode)"""
    answer, _ = _run(sandbox, [2, 3, 1])
    result_of(answer)
    grads = [record["grad"] for record in answer["calls"]]
    expect_equal(grads, [False, False, False], name="torch.is_grad_enabled() during each forward",
                 note="every forward of an evaluation must run without building a graph")


@pytest.mark.points(2)
def test_restores_each_modules_mode(sandbox):
    """Afterwards every module is back in its own previous mode (train, eval, or mixed)"""
    for start, modes in STARTS:
        answer, _ = _run(sandbox, [2, 1], modes=modes)
        result_of(answer)
        expect_modes(answer["modes_after"], modes, f"after evaluate returned (the model {start} before the call)")


@pytest.mark.points(2)
def test_restores_modes_when_something_raises(sandbox):
    """When the model or loss_fn raises part-way, the exception propagates and the modes are restored"""
    cases = [({"fail_model": 1}, "the model raised on batch 1"),
             ({"fail_loss": 2}, "loss_fn raised on batch 2")]
    for kwargs, what in cases:
        for start, modes in (STARTS[0], STARTS[2], STARTS[1]):
            answer, _ = _run(sandbox, [2, 3, 1, 2], modes=modes, **kwargs)
            expect_raised(answer.get("raised"), "BatchFailure", what=f"evaluate when {what}", match="failed on batch")
            expect_modes(answer["modes_after"], modes, f"after {what} (the model {start} before the call)")


# ------------------------------------------------------------------ memory and the iterable


@pytest.mark.points(2)
def test_keeps_no_outputs_losses_or_graphs(sandbox):
    """Keeps no batch's logits, loss tensor or graph alive once the next batches are processed"""
    sizes = [2, 1, 3, 2, 1]
    answer, _ = _run(sandbox, sizes, kind="generator", watch=True)
    result_of(answer)
    fetches = answer["fetches"]
    expect_equal(len(fetches), len(sizes), name="batches fetched from the generator")
    for j, fetch in enumerate(fetches):
        # Only the batch just before may still be held (a variable not yet reassigned).
        stale = [i for i in fetch["alive"] if i != j - 1]
        if stale:
            raise AssertionError(
                f"when batch {j} was fetched, the logits, loss or autograd graph of batch(es) {stale} were "
                "still alive: accumulate numbers (loss.item()), not tensors, and compute under no_grad")
    if answer["alive_after"]:
        raise AssertionError(
            f"after evaluate returned, the logits, loss or autograd graph of batch(es) {answer['alive_after']} "
            "were still alive (kept by something that outlives the call)")


@pytest.mark.points(2)
@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=4), seed=seeds())
@example(sizes=[3, 1, 2], seed=5)
def test_reads_a_generator_once_one_batch_at_a_time(sandbox, sizes, seed):
    """A generator of batches: read once, one batch at a time, with the right loss and accuracy"""
    answer, problem = _run(sandbox, sizes, seed, kind="generator")
    expect_values(answer, *problem, what=f"a generator of {describe(sizes)}")
    forwards = [fetch["forwards"] for fetch in answer["fetches"]]
    expect_equal(forwards, list(range(len(sizes))), name="forwards made before fetching each batch (0, 1, 2...)",
                 note="fetch a batch, run it, then fetch the next; every batch fetched once")
    expect_equal(answer["exhausted"], True, name="the generator read to its end")
    expect_equal(len(answer["calls"]), len(sizes), name="forwards in all")
    expect_equal(answer["losses"], len(sizes), name="loss_fn calls in all (one per batch)")


@pytest.mark.points(1)
def test_no_batches_raise_value_error(sandbox):
    """No batches at all (an empty list or an empty generator) raises ValueError, modes restored"""
    for kind in ("list", "generator"):
        for start, modes in (STARTS[0], STARTS[2]):
            answer = call(sandbox, "ev_empty", kind, modes)
            expect_raised(answer.get("raised"), "ValueError", what=f"evaluate on an empty {kind} of batches")
            expect_modes(answer["modes_after"], modes, f"after the ValueError (the model {start} before the call)")
