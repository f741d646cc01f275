"""Judge-side helpers for the grad_monitor checks: weights, steps, the judge's own report, comparisons.

The model and the training step are shared.py's (the probes run them too). The judge
draws the weights and the steps, runs them on its own copy with its own tensor hooks,
and builds the report the contract asks for; the checks compare the candidate's with it.
"""

from __future__ import annotations

import math

import torch

from grader.judge import Opaque, Tolerance, expect_equal, expect_scalar
from shared import NAMES, Net, build, run_step

#: Norms of float32 gradients of a few dozen elements: rounding stays far under 1e-5.
NORM_TOL = Tolerance(atol=1e-7, rtol=1e-5)

FLAGS = {"frozen", "unused", "nan", "inf", "vanishing", "exploding"}


def weights(seed: int, *, zero: tuple = ()) -> dict:
    """Net's weights drawn from ``seed``, the parameters named in ``zero`` set to zeros."""
    torch.manual_seed(seed)
    state = {k: v.detach().clone() for k, v in Net().state_dict().items()}
    for name in zero:
        state[name].zero_()
    return state


def step(seed: int, rows: int = 2, *, aux: bool = False, zero_grad: bool = False, extra: dict | None = None,
         silent: bool = False) -> dict:
    """One training step: x (rows, 4), grad_out (rows, 3) drawn from ``seed`` (zeros when ``silent``)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 4, generator=g)
    grad_out = torch.zeros(rows, 3) if silent else torch.randn(rows, 3, generator=g)
    return {"x": x, "grad_out": grad_out, "aux": aux, "zero_grad": zero_grad, "extra": dict(extra or {})}


def one_hot(n: int, i: int, value: float) -> torch.Tensor:
    c = torch.zeros(n)
    c[i] = value
    return c


def expected(state: dict, frozen: list, steps: list, vanish_below: float = 1e-7,
             explode_above: float = 1e3) -> tuple[dict, dict]:
    """The judge's report for ``steps`` run on its own copy, and every parameter's final .grad."""
    model = build(state, frozen)
    seen: dict[str, list[torch.Tensor]] = {}
    handles = []
    for name, p in model.named_parameters():
        seen[name] = []
        if p.requires_grad:
            handles.append(p.register_hook(lambda g, n=name: seen[n].append(g.detach().clone())))
    try:
        for s in steps:
            run_step(model, s)
    finally:
        for h in handles:
            h.remove()
    report = {}
    for name, p in model.named_parameters():
        if name in frozen:
            report[name] = {"norms": [], "flags": ["frozen"]}
            continue
        if not seen[name]:
            report[name] = {"norms": [], "flags": ["unused"]}
            continue
        norms, flags = [], set()
        for g in seen[name]:
            norm = float(torch.linalg.vector_norm(g.double()))
            norms.append(norm)
            if bool(torch.isnan(g).any()):
                flags.add("nan")
            if bool(torch.isinf(g).any()):
                flags.add("inf")
            if math.isfinite(norm) and norm < vanish_below:  # nan-safe: the judge's own norm, finite here
                flags.add("vanishing")
            if math.isfinite(norm) and norm > explode_above:  # nan-safe: the judge's own norm, finite here
                flags.add("exploding")
        report[name] = {"norms": norms, "flags": sorted(flags)}
    grads = {n: None if p.grad is None else p.grad.detach().clone() for n, p in model.named_parameters()}
    return report, grads


# -------------------------------------------------------------------- comparisons


def _kind(value) -> str:
    if isinstance(value, Opaque):
        return f"a {value.type_name} ({value.repr[:60]})"
    return f"a {type(value).__name__}" if not isinstance(value, (str, float, int)) else repr(value)[:60]


def _entry(got: dict, name: str, where: str) -> dict:
    entry = got[name]
    if not isinstance(entry, dict) or not isinstance(entry.get("norms"), list) or not isinstance(entry.get("flags"), list):
        raise AssertionError(f"{where}: report()[{name!r}] must be a dict with a list 'norms' and a list 'flags', "
                             f"got {_kind(entry) if not isinstance(entry, dict) else 'keys ' + repr(sorted(map(str, entry)))}")
    return entry


def check_report(got, want: dict, where: str, *, norms: bool = True, flags: bool = True, only=None) -> None:
    """The candidate's report against the judge's: every parameter, then norms and/or flags.

    ``only`` limits the per-parameter comparison to those names (the keys are always compared).
    """
    if not isinstance(got, dict):
        raise AssertionError(f"{where}: report() must return a dict {{name: {{'norms': [...], 'flags': [...]}}}}, "
                             f"got {_kind(got)}")
    if sorted(got) != sorted(want):
        raise AssertionError(f"{where}: report() must have one key per parameter of model.named_parameters(), "
                             f"frozen and unused ones included: expected {sorted(want)}, got {sorted(got)}")
    for name in (want if only is None else only):
        entry, w = _entry(got, name, where), want[name]
        if norms:
            if len(entry["norms"]) != len(w["norms"]):
                raise AssertionError(f"{where}: report()[{name!r}]['norms'] must hold {len(w['norms'])} norm(s) "
                                     f"(one per backward pass that reached it), got {len(entry['norms'])}: "
                                     f"{entry['norms'][:5]!r}")
            for i, (g, n) in enumerate(zip(entry["norms"], w["norms"])):
                expect_scalar(g, n, name=f"{where}: report()[{name!r}]['norms'][{i}] (L2 norm of that pass's gradient)",
                              tol=NORM_TOL, types=(float,))
        if flags:
            got_flags = entry["flags"]
            if not all(isinstance(f, str) for f in got_flags) or len(set(got_flags)) != len(got_flags):
                raise AssertionError(f"{where}: report()[{name!r}]['flags'] must be distinct strings, got {got_flags!r}")
            expect_equal(sorted(got_flags), sorted(w["flags"]),
                         name=f"{where}: report()[{name!r}]['flags'] (norms {w['norms']})")


def check_hooks_same(before: dict, after: dict, where: str) -> None:
    """Every parameter and module holds as many hooks as ``before``."""
    changed = [f"parameter {n}: {before['params'][n]} -> {after['params'].get(n)}"
               for n in before["params"] if after["params"].get(n) != before["params"][n]]
    changed += [f"module {n or '<model>'}: {before['modules'][n]} -> {after['modules'].get(n)}"
                for n in before["modules"] if after["modules"].get(n) != before["modules"][n]]
    if changed:
        raise AssertionError(f"{where}: hooks differ from before the block (parameter: tensor hooks; module: "
                             f"[backward, backward pre, forward, forward pre]): " + "; ".join(changed))


def check_hooks_inside(before: dict, inside: dict, frozen: list, where: str) -> None:
    """Inside the block: one more tensor hook on each trainable parameter, none on frozen ones, no module hooks."""
    wrong = [f"{n}: {inside['params'].get(n, 0) - before['params'][n]} new hook(s), expected "
             f"{0 if n in frozen else 1}{' (frozen)' if n in frozen else ''}"
             for n in before["params"] if inside["params"].get(n, 0) - before["params"][n] != (0 if n in frozen else 1)]
    if wrong:
        raise AssertionError(f"{where}: inside the block each trainable parameter must carry exactly one hook from "
                             f"p.register_hook and a frozen one none: " + "; ".join(wrong))
    moved = [n or "<model>" for n in before["modules"] if inside["modules"].get(n) != before["modules"][n]]
    if moved:
        raise AssertionError(f"{where}: module hooks were registered on {moved}; the contract uses tensor hooks "
                             f"(p.register_hook) only")


__all__ = ["NAMES", "NORM_TOL", "FLAGS", "weights", "step", "one_hot", "expected", "check_report",
           "check_hooks_same", "check_hooks_inside"]
