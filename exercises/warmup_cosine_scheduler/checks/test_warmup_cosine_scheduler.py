"""Checks for WarmupCosine(optimizer, warmup_steps, total_steps, min_lr=0.0)."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _warmup_cosine_scheduler_helpers import (
    base_lr_lists,
    base_lr_values,
    check_run,
    compare_lrs,
    describe,
    min_lr_for,
    min_lr_shares,
    overruns,
    schedule,
    spans,
    warmups,
)
from grader.judge import candidate_raises, weights_only_refusal


def _run(sandbox, base_lrs, steps, warmup, total, min_lr=0.0):
    kwargs = {"warmup_steps": warmup, "total_steps": total}
    if min_lr:
        kwargs["min_lr"] = min_lr
    result = sandbox.call("sched_run", list(base_lrs), steps, **kwargs)
    check_run(result, base_lrs, steps, warmup, total, min_lr)


# ---------------------------------------------------------------------- visible


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "During warmup the lr at step t (t = 0 right after construction) is base * (t + 1) / "
    "warmup_steps: base / warmup_steps at t = 0, base at t = warmup_steps - 1. Mind true division."
)
@given(base=base_lr_values, warmup=st.integers(1, 6), span=spans)
@example(base=0.1, warmup=3, span=5)
@example(base=1.0, warmup=4, span=1)
def test_warmup(sandbox, base, warmup, span):
    """Warmup: lr = base * (t + 1) / warmup_steps for t < warmup_steps"""
    _run(sandbox, [base], warmup - 1, warmup, warmup + span)


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "After warmup the cosine runs over the total_steps - warmup_steps remaining steps: "
    "progress (t - warmup) / (total - warmup) goes from 0 (lr = base) to 1 (lr = min_lr)."
)
@given(base=base_lr_values, warmup=warmups, span=spans, share=min_lr_shares)
@example(base=1.0, warmup=3, span=5, share=0.0)
@example(base=0.5, warmup=2, span=8, share=0.25)
def test_single_group_schedule(sandbox, base, warmup, span, share):
    """One param group: warmup then cosine down to min_lr at total_steps"""
    _run(sandbox, [base], warmup + span, warmup, warmup + span, min_lr_for([base], share))


@pytest.mark.points(1)
@pytest.mark.visibility("visible")
@pytest.mark.hint("With warmup_steps = 0 there is no warmup: the lr is base at t = 0 and the cosine starts there.")
def test_no_warmup(sandbox):
    """warmup_steps = 0: the schedule starts at base and is a plain cosine"""
    _run(sandbox, [0.1], 6, 0, 6)
    _run(sandbox, [1.0, 0.5], 2, 0, 1, 0.05)


# ----------------------------------------------------------------------- hidden


@pytest.mark.points(3)
@given(base_lrs=base_lr_lists, warmup=warmups, span=spans, share=min_lr_shares, overrun=overruns)
@example(base_lrs=[0.1, 1.0, 0.03], warmup=2, span=4, share=0.1, overrun=2)
def test_param_groups(sandbox, base_lrs, warmup, span, share, overrun):
    """Several param groups, each following the schedule from its own base lr"""
    total = warmup + span
    _run(sandbox, base_lrs, total + overrun, warmup, total, min_lr_for(base_lrs, share))


@pytest.mark.points(2)
def test_min_lr_floor(sandbox):
    """The cosine ends exactly at min_lr (not 0), for every group"""
    _run(sandbox, [1.0], 7, 2, 7, 0.1)
    _run(sandbox, [0.5, 2.0], 5, 0, 4, 0.25)
    _run(sandbox, [0.1, 0.1], 9, 3, 9, 0.1)   # min_lr == base: flat after warmup


@pytest.mark.points(2)
@given(base_lrs=base_lr_lists, warmup=warmups, span=st.integers(1, 6), share=min_lr_shares)
@example(base_lrs=[1.0], warmup=2, span=4, share=0.0)
def test_stays_at_min_lr(sandbox, base_lrs, warmup, span, share):
    """After total_steps the lr stays at min_lr (the cosine does not come back up)"""
    total = warmup + span
    _run(sandbox, base_lrs, total + 2 * span + 3, warmup, total, min_lr_for(base_lrs, share))


@pytest.mark.points(3)
@given(base_lrs=base_lr_lists, warmup=warmups, span=spans, share=min_lr_shares, data=st.data())
@example(base_lrs=[0.1, 1.0], warmup=3, span=6, share=0.1, data=None)
def test_resume_from_state_dict(sandbox, base_lrs, warmup, span, share, data):
    """Resuming from state_dict() into a fresh optimizer and scheduler continues identically"""
    total = warmup + span
    if data is None:
        before, after = 5, 6
    else:
        before = data.draw(st.integers(1, total + 2), label="before")
        after = data.draw(st.integers(1, total + 3 - before), label="after")
    min_lr = min_lr_for(base_lrs, share)
    kwargs = {"warmup_steps": warmup, "total_steps": total, "min_lr": min_lr}
    result = sandbox.call("sched_resume", list(base_lrs), before, after, **kwargs)
    if "refused" in result:
        raise AssertionError(f"the {result['refused']}'s state_dict() holds something torch.load(weights_only=True) "
                             f"refuses ({weights_only_refusal(result['error'])}): keep only plain data in it "
                             "(numbers, strings, lists, dicts)")
    context = (f"{describe(base_lrs, warmup, total, min_lr)}: {before} step() calls, a checkpoint "
               f"(optimizer and scheduler state_dict, through torch.save/torch.load), a fresh optimizer "
               f"and scheduler loading it, then {after} step() calls")
    want = schedule(base_lrs, before, before + after, warmup, total, min_lr)
    compare_lrs(result["lrs"], want, context, t0=before)
    compare_lrs(result["last"], want[1:], context, t0=before + 1, what="values get_last_lr() returned")


@pytest.mark.points(1)
def test_rejects_bad_arguments(sandbox):
    """ValueError naming warmup_steps < 0, or total_steps <= warmup_steps, before the optimizer is touched"""
    for warmup, total, name in ((-1, 10, "warmup_steps"), (-5, 3, "warmup_steps"), (5, 5, "total_steps"),
                                (6, 3, "total_steps"), (0, 0, "total_steps")):
        with candidate_raises("ValueError", match=name,
                              what=f"WarmupCosine(optimizer, warmup_steps={warmup}, total_steps={total})"):
            sandbox.call("sched_run", [0.1], 0, warmup_steps=warmup, total_steps=total)
        seen = sandbox.call("groups_after_refusal", [0.1, 0.02], warmup_steps=warmup, total_steps=total)
        if seen["after"] != seen["before"]:
            raise AssertionError(f"warmup_steps={warmup}, total_steps={total}: the ValueError came after the "
                                 f"optimizer was changed (its param groups {seen['before']} became "
                                 f"{seen['after']}); check the arguments before touching the optimizer, "
                                 "e.g. before super().__init__")
