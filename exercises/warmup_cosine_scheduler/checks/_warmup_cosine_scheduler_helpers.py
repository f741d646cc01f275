"""Judge-side helpers for the warmup_cosine_scheduler checks: the schedule's formula,
strategies for its parameters, and the comparison of the lrs the sandbox saw.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from grader.judge import Opaque, Tolerance, expect_scalar

#: Python floats (float64) from a cosine of at most a few terms: off by ~1e-16 relative.
TOL = Tolerance(atol=1e-12, rtol=1e-9)


def lr_at(base: float, t: int, warmup: int, total: int, min_lr: float = 0.0) -> float:
    """The contract's table, row by row."""
    if t < warmup:
        return base * (t + 1) / warmup
    if t >= total:
        return min_lr
    return min_lr + (base - min_lr) * (1 + math.cos(math.pi * (t - warmup) / (total - warmup))) / 2


def schedule(base_lrs, t_from: int, t_to: int, warmup: int, total: int, min_lr: float = 0.0) -> list:
    """Expected group lrs for t = t_from .. t_to (inclusive)."""
    return [[lr_at(b, t, warmup, total, min_lr) for b in base_lrs] for t in range(t_from, t_to + 1)]


def describe(base_lrs, warmup: int, total: int, min_lr: float) -> str:
    return (f"WarmupCosine(SGD with group lrs {list(base_lrs)}, warmup_steps={warmup}, "
            f"total_steps={total}, min_lr={min_lr})")


def _shown(value) -> str:
    if isinstance(value, Opaque):  # what the probe could not send as it is
        return f"a {value.type_name} ({value.repr:.60})"
    return repr(value)


def compare_lrs(got: list, want: list, context: str, *, t0: int = 0, what: str = "optimizer lrs") -> None:
    """got[i] are the group lrs at step t0 + i; fail at the first step that differs."""
    if not isinstance(got, list) or len(got) != len(want):
        raise AssertionError(f"{context}: expected {len(want)} readings of the {what}, got {_shown(got)}")
    for i, (g, w) in enumerate(zip(got, want)):
        shown = [_shown(v) for v in g] if isinstance(g, list) else _shown(g)
        where = f"{context}: at t = {t0 + i} the {what} are {shown}, expected {[round(v, 12) for v in w]}"
        if not isinstance(g, list) or len(g) != len(w):
            raise AssertionError(where)
        for group, (a, b) in enumerate(zip(g, w)):
            expect_scalar(a, b, name=f"{where}; group {group}", types=(float,), tol=TOL)


def check_run(result: dict, base_lrs, steps: int, warmup: int, total: int, min_lr: float) -> None:
    """Both the optimizer's lrs (t = 0..steps) and get_last_lr() (t = 1..steps) follow the formula."""
    context = describe(base_lrs, warmup, total, min_lr) + f", then {steps} step() calls"
    want = schedule(base_lrs, 0, steps, warmup, total, min_lr)
    compare_lrs(result["lrs"], want, context)
    compare_lrs(result["last"], want[1:], context, t0=1, what="values get_last_lr() returned")


# ----------------------------------------------------------------------- strategies

#: Base lrs: one to three groups, not all equal so that per-group mistakes show.
base_lr_values = st.sampled_from([0.1, 1.0, 0.03, 0.5, 3e-4, 2.0])
base_lr_lists = st.lists(base_lr_values, min_size=1, max_size=3)
warmups = st.integers(0, 6)
spans = st.integers(1, 10)                    # total_steps - warmup_steps
overruns = st.integers(0, 8)                  # how many steps past total_steps the loop runs
min_lr_shares = st.sampled_from([0.0, 0.0, 0.1, 0.25, 0.5])   # min_lr as a share of the smallest base


def min_lr_for(base_lrs, share: float) -> float:
    return share * min(base_lrs)
