"""Checks for train_with_accumulation(model, optimizer, loss_fn, batches, accumulation_steps).

The probe's optimizer is a recording torch.optim.SGD; everything runs in float64.
The truth is one full-batch SGD step per group, computed judge-side (see the helpers).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _grad_accumulation_helpers import (
    Case,
    check_gradients,
    check_losses,
    check_params,
    run,
    stale_grads,
    touched_before_refusal,
)
from grader.judge import CandidateError, candidate_raises, seeds


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Each micro-batch's loss is a mean over its own samples. Summing k such gradients gives k times "
    "the full-batch gradient: weight each micro loss before its backward."
)
def test_one_group_equals_full_batch(sandbox):
    """One full group: the accumulated gradient and the step equal one full-batch step"""
    for case in (Case(sizes=(2, 2, 2, 2), k=4, seed=1), Case(sizes=(3, 3, 3), k=3, seed=2, lr=0.5)):
        result = run(sandbox, case)
        check_gradients(result, case)
        check_params(result, case)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Per group: zero_grad() once before its first backward, step() once after its last. "
    "A group that is cut short at the end still makes its step."
)
def test_optimizer_calls_once_per_group(sandbox):
    """The optimizer sees zero_grad, step, zero_grad, step, ...: one pair per group"""
    for sizes, k in (((1,) * 6, 2), ((2,) * 7, 3), ((1,) * 3, 1), ((2, 2), 5)):
        case = Case(sizes=sizes, k=k, seed=3)
        result = run(sandbox, case)
        want = ["zero_grad", "step"] * len(case.groups())
        if result["events"] != want:
            raise AssertionError(f"{case.describe()}: the optimizer's calls were {result['events']}, "
                                 f"expected {want} (groups {case.groups()})")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Return one Python float per step: the group's loss as one batch would give it, i.e. the "
    "micro-batch losses averaged with weights proportional to their sizes."
)
def test_returns_group_losses(sandbox):
    """Returns one float per step: the group's full-batch loss before the step"""
    for case in (Case(sizes=(2, 2, 2, 2, 2), k=2, seed=4), Case(sizes=(1, 3, 2), k=3, seed=5)):
        check_losses(run(sandbox, case), case)


@pytest.mark.points(3)
@given(n=st.integers(1, 7), size=st.integers(1, 3), k=st.integers(1, 4), seed=seeds())
@example(n=6, size=2, k=3, seed=6)
@example(n=4, size=1, k=1, seed=7)
def test_many_groups_with_momentum(sandbox, n, size, k, seed):
    """Many groups of equal micro-batches, momentum SGD: gradients at every step and final weights"""
    case = Case(sizes=(size,) * n, k=k, seed=seed, momentum=0.9)
    result = run(sandbox, case)
    check_gradients(result, case)
    check_params(result, case)


@pytest.mark.points(2)
@pytest.mark.hint("A trailing group of m < k micro-batches is a batch of its own: weight its losses by 1/m.")
def test_trailing_partial_group(sandbox):
    """A trailing partial group makes its own step, weighted by its own size"""
    for sizes, k in (((2,) * 5, 2), ((1,) * 7, 3), ((3,) * 3, 4), ((2,) * 6, 4)):
        case = Case(sizes=sizes, k=k, seed=8, momentum=0.5)
        result = run(sandbox, case)
        check_gradients(result, case)
        check_params(result, case)


@pytest.mark.points(3)
@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=7), k=st.integers(1, 4), seed=seeds(),
       loss=st.sampled_from(["mse", "cross_entropy"]))
@example(sizes=[1, 5, 2, 4], k=2, seed=9, loss="mse")
@example(sizes=[3, 1, 1], k=3, seed=10, loss="mse")
@example(sizes=[2, 4, 1, 3, 2], k=2, seed=18, loss="cross_entropy")
def test_unequal_micro_batch_sizes(sandbox, sizes, k, seed, loss):
    """Unequal micro-batch sizes, MSE or cross-entropy loss_fn(model(inputs), targets): each micro loss weighs its share

    The loss is nn.MSELoss() or nn.CrossEntropyLoss() (int64 class targets), both means over the micro-batch.
    """
    case = Case(sizes=tuple(sizes), k=k, seed=seed, loss=loss)
    try:
        result = run(sandbox, case)
    except CandidateError as e:
        if loss != "cross_entropy" or e.during_import:
            raise
        raise AssertionError(f"{case.describe()}: with loss_fn = nn.CrossEntropyLoss() your code raised {e}; "
                             "it is called as loss_fn(model(inputs), targets): the model's float outputs "
                             "(logits) first, the int64 class targets second") from None
    check_gradients(result, case)
    check_params(result, case)
    check_losses(result, case)


@pytest.mark.points(1)
def test_stale_gradients_are_not_stepped(sandbox):
    """Gradients already in .grad before the call are not part of the first step"""
    case = Case(sizes=(2, 2, 2, 2), k=2, seed=11)
    result = run(sandbox, case, stale=stale_grads(12))
    check_gradients(result, case)
    check_params(result, case)


@pytest.mark.points(1)
def test_one_micro_batch_at_a_time(sandbox):
    """The model is called once per micro-batch, on that micro-batch alone"""
    case = Case(sizes=(1, 2, 3, 4, 2), k=2, seed=13)
    result = run(sandbox, case)
    if result["forward_sizes"] != list(case.sizes):
        raise AssertionError(f"{case.describe()}: the model was called on batches of sizes "
                             f"{result['forward_sizes']}, expected one call per micro-batch: {list(case.sizes)}")
    check_gradients(result, case)


@pytest.mark.points(1)
def test_batches_from_a_generator(sandbox):
    """batches may be a one-pass generator (no len()): same steps and losses"""
    case = Case(sizes=(2, 1, 3, 2, 1), k=2, seed=14, momentum=0.9)
    result = run(sandbox, case, generator=True)
    check_gradients(result, case)
    check_params(result, case)
    check_losses(result, case)


@pytest.mark.points(1)
def test_no_batches(sandbox):
    """No batches: returns [] and never calls the optimizer"""
    case = Case(sizes=(), k=3, seed=15)
    result = run(sandbox, case)
    if result["losses"] != []:
        raise AssertionError(f"with no batches, must return [], returned {result['losses']}")
    if result["events"]:
        raise AssertionError(f"with no batches, the optimizer must not be called; it saw {result['events']}")
    check_params(result, case)


@pytest.mark.points(1)
def test_rejects_bad_accumulation_steps(sandbox):
    """ValueError naming accumulation_steps when it is < 1, before the model, optimizer or batches are touched"""
    for k in (0, -2):
        case = Case(sizes=(2, 2), k=k, seed=16)
        with candidate_raises("ValueError", match="accumulation_steps",
                              what=f"train_with_accumulation(..., accumulation_steps={k})"):
            run(sandbox, case)
        stale = stale_grads(17)
        seen = sandbox.call("refusal", case.params, case.batches, k, stale=stale)
        touched = touched_before_refusal(seen, case, stale)
        if touched:
            raise AssertionError(f"accumulation_steps={k}: the ValueError came after the call had begun: "
                                 f"{'; '.join(touched)}. Check accumulation_steps first, before touching the "
                                 "model, the optimizer or batches")
