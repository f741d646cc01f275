"""Checks for checkpointed_forward(blocks, x, segments) -> Tensor."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _gradient_checkpointing_helpers import (
    Case,
    check_calls,
    check_gradients,
    check_output,
    expect_backward_ran,
    layouts,
    segment_indices,
)
from grader.judge import EXACT, candidate_raises, expect_bounded, expect_close, expect_equal, expect_tensor, seeds

containers = st.sampled_from(["list", "modulelist"])
widths = st.integers(2, 6)
rows = st.integers(1, 3)


# ------------------------------------------------------------------ values and gradients


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Run each segment in a torch.autograd.Function: forward under torch.no_grad() keeping the segment's "
    "input; backward recomputes the segment from a detached copy of that input with torch.enable_grad() "
    "and differentiates it, returning the input's gradient (and getting the parameters theirs)."
)
@given(layout=layouts(), width=widths, rows=rows, container=containers, seed=seeds())
@example(layout=(8, 3), width=4, rows=2, container="list", seed=0)
@example(layout=(5, 1), width=3, rows=1, container="modulelist", seed=1)
@example(layout=(4, 4), width=3, rows=2, container="list", seed=2)
def test_matches_the_plain_forward(sandbox, layout, width, rows, container, seed):
    """Output, x's gradient and every parameter's gradient are the plain loop's (no dropout)"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.0, seed, container)
    report = case.run(sandbox)
    want = case.plain()
    check_output(report, case, want)
    check_gradients(report, case, want)


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Dropout draws new random numbers on every call: keep torch.get_rng_state() from before the segment's "
    "forward and torch.set_rng_state() it before recomputing, so the recomputation sees the same masks."
)
@given(layout=layouts(blocks=(2, 8)), width=widths, rows=rows, seed=seeds())
@example(layout=(6, 2), width=4, rows=3, seed=0)
def test_dropout_masks_are_replayed(sandbox, layout, width, rows, seed):
    """With dropout, the recomputation draws the forward's masks: gradients equal the plain loop's"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.5, seed)
    report = case.run(sandbox)
    want = case.plain()
    check_output(report, case, want)
    check_gradients(report, case, want, note="The recomputed forward must see the dropout masks the forward "
                    "drew: restore the CPU RNG state saved before the segment ran.")


@pytest.mark.points(2)
@given(layout=layouts(blocks=(2, 8)), width=widths, rows=rows, seed=seeds())
@example(layout=(5, 2), width=4, rows=2, seed=0)
def test_rng_state_after_forward_and_backward(sandbox, layout, width, rows, seed):
    """The caller's RNG: after the forward where the plain loop leaves it, and the backward does not move it"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.5, seed)
    report = case.run(sandbox)
    want = case.plain()
    what = case.describe()
    after_forward = expect_tensor(report["rng_after_forward"], shape=tuple(want["rng_after_forward"].shape),
                                  dtype=torch.uint8, name=f"torch.get_rng_state() after {what}")
    expect_close(after_forward, want["rng_after_forward"], f"torch.get_rng_state() after {what}", tol=EXACT,
                 note="The forward must draw exactly the random numbers the plain loop draws (the blocks' "
                      "dropout, once each), no more.")
    expect_backward_ran(report, case)
    after_backward = expect_tensor(report["rng_after_backward"], shape=tuple(after_forward.shape), dtype=torch.uint8,
                                   name=f"torch.get_rng_state() after out.backward(grad)")
    expect_close(after_backward, after_forward, f"torch.get_rng_state() after the backward of {what}", tol=EXACT,
                 note="The backward must leave the caller's RNG state as it found it: after restoring the "
                      "saved state to recompute, put the caller's state back (torch.random.fork_rng).")


@pytest.mark.points(2)
@given(layout=layouts(blocks=(2, 8)), width=widths, rows=rows, seed=seeds())
@example(layout=(6, 3), width=4, rows=2, seed=0)
@example(layout=(3, 1), width=2, rows=1, seed=1)
def test_parameter_grads_when_x_needs_no_grad(sandbox, layout, width, rows, seed):
    """x without requires_grad: the parameters still get their gradients, and x is left alone"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.0, seed)  # no dropout: the RNG rules have checks of their own
    report = case.run(sandbox, x_requires_grad=False)
    want = case.plain(x_requires_grad=False)
    what = f"{case.describe()}, x not requiring grad"
    if report["out_requires_grad"] is not True:
        raise AssertionError(f"{what}: the output does not require grad, so no parameter can get a gradient "
                             "(a Function whose only tensor input is x builds no graph when x needs none)")
    check_output(report, case, want)
    check_gradients(report, case, want)
    expect_equal(report["x_requires_grad"], False, name=f"x.requires_grad after {what}",
                 note="the caller's x must keep requires_grad=False")
    if report["x_grad"] is not None:
        raise AssertionError(f"{what}: x.grad is set after out.backward(grad); x did not require grad and must "
                             "get no gradient")
    after = expect_tensor(report["x_after"], shape=tuple(case.x.shape), dtype=case.x.dtype, name=f"x after {what}")
    expect_close(after, case.x, f"x after {what}", tol=EXACT)
    check_calls(report["calls_forward"] + report["calls_backward"],
                [[i, False] for i in range(n)] + [[i, True] for seg in reversed(segment_indices(n, segments))
                                                  for i in seg],
                what=f"the blocks' calls ([index, grad enabled]) in {what}, forward then backward",
                note="each block runs once in the forward and once more when its segment is recomputed")


@pytest.mark.points(1)
@given(layout=layouts(), width=widths, rows=rows, mode=st.sampled_from(["frozen", "no_grad"]), seed=seeds())
@example(layout=(4, 2), width=3, rows=2, mode="frozen", seed=0)
@example(layout=(4, 2), width=3, rows=2, mode="no_grad", seed=1)
def test_no_graph_when_nothing_needs_grad(sandbox, layout, width, rows, mode, seed):
    """Nothing needs a gradient (all frozen, or torch.no_grad()): the plain forward, each block once, no graph"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.5, seed)
    if mode == "frozen":
        report = case.run(sandbox, x_requires_grad=False, params_require_grad=False)
        want = case.plain(x_requires_grad=False, params_require_grad=False)
        what = f"{case.describe()}, x and every parameter not requiring grad"
    else:
        report = case.run(sandbox, no_grad=True)
        want = case.plain(no_grad=True)
        what = f"{case.describe()}, called under torch.no_grad()"
    check_output(report, case, want)
    if report["out_requires_grad"] is not False:
        raise AssertionError(f"{what}: the output requires grad; with nothing to differentiate it must not "
                             "(no graph, nothing kept for backward)")
    calls = report["calls_forward"]
    if mode == "frozen":  # grad mode is free here (a plain loop may run with grad enabled): the order is not
        calls = [c[0] if isinstance(c, (list, tuple)) and c else c for c in calls]
        want_calls = list(range(n))
    else:
        want_calls = [[i, False] for i in range(n)]
    check_calls(calls, want_calls, what=f"the blocks' calls in {what}", note="each block runs exactly once, in order")


# ------------------------------------------------------------------ what the forward keeps, and the calls


@pytest.mark.points(3)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Only each segment's input may be saved for backward: run the segment's blocks under torch.no_grad() "
    "so no op saves anything, and ctx.save_for_backward(the segment's input) alone."
)
@given(layout=layouts(blocks=(2, 8), per_segment_at_least=2), width=widths, rows=rows, seed=seeds())
@example(layout=(8, 2), width=4, rows=2, seed=0)
@example(layout=(6, 1), width=6, rows=3, seed=1)
@example(layout=(7, 3), width=3, rows=1, seed=2)
def test_saves_only_segment_inputs(sandbox, layout, width, rows, seed):
    """The forward saves only the segment inputs for backward: at most segments * x.nbytes (+64 bytes)"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.5, seed)
    report = case.run(sandbox, backward=False)
    limit = segments * case.x.nbytes + 64
    expect_bounded(report["saved_bytes"], name=f"bytes saved for backward (floating-point storages packed by "
                   f"autograd, parameters left out) during {case.describe()}", at_most=limit, allow_tensor=False,
                   types=(int,),
                   note=f"{report['saved_storages']} storages; x is {case.x.nbytes} bytes, so {segments} segment "
                        f"input(s) are {segments * case.x.nbytes}: an activation saved inside a segment shows "
                        "here, and the total must not grow with the blocks per segment")


@pytest.mark.points(2)
@given(layout=layouts(blocks=(2, 8), per_segment_at_least=2), width=widths, rows=rows,
       x_requires_grad=st.booleans(), seed=seeds())
@example(layout=(8, 2), width=4, rows=2, x_requires_grad=True, seed=0)
@example(layout=(7, 3), width=3, rows=1, x_requires_grad=False, seed=1)
def test_frees_activations_inside_segments(sandbox, layout, width, rows, x_requires_grad, seed):
    """Once the forward returns, no block output inside a segment is alive (on ctx, in a list, in a closure)"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.5, seed)
    report = case.run(sandbox, x_requires_grad=x_requires_grad, backward=False, collect=True)
    what = f"{case.describe()}, x {'' if x_requires_grad else 'not '}requiring grad"
    alive = report["alive_after_forward"]
    if not isinstance(alive, list):
        raise AssertionError(f"{what}: the probe's record of the blocks' outputs came back as {type(alive).__name__}")
    ends = {seg[-1] for seg in segment_indices(n, segments)}
    kept = sorted({index for index, is_alive in alive if is_alive is True and index not in ends})
    if kept:
        raise AssertionError(
            f"{what}: after the forward returned (and a garbage collection), the output of block(s) {kept} is "
            "still alive, though only the last block's output of each segment (the next segment's input, or "
            "the result) may be: the forward keeps activations inside a segment (as a ctx attribute, in a list "
            "or a closure, or a view or detach() of one), so checkpointing saves no memory; keep only the "
            "segment's input and recompute the rest in backward")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("In the forward, call every block once, in order, under torch.no_grad(), including the last "
                  "segment's blocks.")
@given(layout=layouts(), width=widths, rows=rows, container=containers, seed=seeds())
@example(layout=(7, 3), width=3, rows=2, container="list", seed=0)
def test_forward_calls_each_block_once_without_grad(sandbox, layout, width, rows, container, seed):
    """The forward calls every block once, in order, with grad disabled"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.0, seed, container)
    report = case.run(sandbox, backward=False)
    check_calls(report["calls_forward"], [[i, False] for i in range(n)],
                what=f"the blocks' calls ([index, grad enabled]) during the forward of {case.describe()}",
                note="each block once, in order, under torch.no_grad(): the last segment is checkpointed too")


@pytest.mark.points(2)
@given(layout=layouts(), width=widths, rows=rows, seed=seeds())
@example(layout=(8, 3), width=3, rows=2, seed=0)
@example(layout=(7, 2), width=3, rows=1, seed=1)
@example(layout=(5, 5), width=2, rows=1, seed=2)
def test_backward_recomputes_each_segment_once(sandbox, layout, width, rows, seed):
    """The backward recomputes each segment once with grad, last segment first (segments split as stated)"""
    n, segments = layout
    case = Case(n, segments, width, rows, 0.0, seed)
    report = case.run(sandbox)
    split = segment_indices(n, segments)
    expect_backward_ran(report, case)
    check_calls(report["calls_backward"], [[i, True] for seg in reversed(split) for i in seg],
                what=f"the blocks' calls ([index, grad enabled]) during out.backward(grad) after {case.describe()}",
                note=f"expected the segments {split} (as equal as possible, the larger first) recomputed once "
                     "each with grad enabled, the last segment first")


# ------------------------------------------------------------------ errors


@pytest.mark.points(1)
def test_rejects_bad_segments(sandbox):
    """ValueError naming segments when segments < 1 or segments > len(blocks)"""
    for n, segments in [(3, 0), (3, -1), (3, 4), (1, 2), (0, 1)]:
        case = Case(n, segments, 3, 2, 0.0, n + 7 * segments + 100)
        with candidate_raises("ValueError", match="segments",
                              what=f"checkpointed_forward(blocks, x, segments={segments}) with {n} block(s)"):
            sandbox.call("run", case.n, case.width, case.p, case.params, case.x, case.grad_out, case.segments,
                         seed=case.torch_seed)
