"""Judge-side helpers for the mixed_precision_step checks: inputs built from seeds, a float32
reference of the contract (no autocast, no scaler: what the mixed-precision step must
approximate) and comparisons with what the sandbox reports.

The reference's GradScaler is a model of its documented rule: a step with an inf or NaN
gradient is skipped and multiplies the scale by 0.5; otherwise, after growth_interval
finite steps in a row, the scale doubles.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from grader.judge import Opaque, expect_bounded, expect_scalar, expect_tensor, first_difference

#: The probes' model: Sequential(Linear(4, 8), Tanh, Linear(8, 3)).
PARAMS = {"0.weight": (8, 4), "0.bias": (8,), "2.weight": (3, 8), "2.bias": (3,)}
#: bfloat16 keeps 8 significant bits (~0.4 %); gradients and updates computed under autocast
#: are compared with float32 ones to 8 % of their norm (plus a small absolute slack).
REL, ABS = 0.08, 1e-4
#: float16 (the CUDA path) keeps 11 bits: measured worst ~0.5 % on these runs, compared to 2 %.
REL_FP16 = 0.02


def make_params(seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    return {n: torch.randn(shape, generator=g) * (0.5 if n.endswith("weight") else 0.1) for n, shape in PARAMS.items()}


def make_batches(n: int, seed: int, size: int = 6) -> list:
    g = torch.Generator().manual_seed(seed + 1)
    return [[torch.randn(size, 4, generator=g), torch.randn(size, 3, generator=g)] for _ in range(n)]


@dataclass
class Case:
    steps: int = 1
    seed: int = 0
    lr: float = 0.1
    momentum: float = 0.0
    init_scale: float = 1024.0
    growth_interval: int = 2000
    max_grad_norm: float | None = None
    poison: dict = field(default_factory=dict)  # {step index: "loss" | "grad"}

    def call(self, sandbox, **extra) -> list:
        result = sandbox.call("amp_run", make_params(self.seed), make_batches(self.steps, self.seed),
                              lr=self.lr, momentum=self.momentum, init_scale=self.init_scale,
                              growth_interval=self.growth_interval, max_grad_norm=self.max_grad_norm,
                              poison={str(k): v for k, v in self.poison.items()}, **extra)
        return result["calls"]

    def describe(self) -> str:
        parts = [f"{self.steps} step(s)", f"SGD lr={self.lr}"]
        if self.momentum:
            parts.append(f"momentum={self.momentum}")
        parts.append(f"GradScaler(init_scale={self.init_scale:g}, growth_interval={self.growth_interval})")
        if self.max_grad_norm is not None:
            parts.append(f"max_grad_norm={self.max_grad_norm}")
        for k, v in sorted(self.poison.items()):
            parts.append(f"an inf {'loss' if v == 'loss' else 'gradient'} at step {k}")
        return ", ".join(parts)


@dataclass
class RefStep:
    loss: float
    skipped: bool
    scale: float
    grads: dict | None  # what optimizer.step sees (None when skipped)
    params: dict


def reference(case: Case) -> list[RefStep]:
    """float32, no autocast: zero_grad, loss, backward, clip, SGD step; a scale model alongside."""
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(make_params(case.seed)[name])
    named = list(model.named_parameters())
    buffers: dict = {}
    scale, tracker = case.init_scale, 0
    out = []
    for i, (x, y) in enumerate(make_batches(case.steps, case.seed)):
        for _, p in named:
            p.grad = None
        loss = nn.functional.mse_loss(model(x), y)
        if case.poison.get(i):
            loss_value = float("inf") if case.poison[i] == "loss" else loss.item()
            scale, tracker = scale * 0.5, 0
            out.append(RefStep(loss_value, True, scale, None, _params(named)))
            continue
        loss.backward()
        grads = {n: p.grad.detach().clone() for n, p in named}
        if case.max_grad_norm is not None:
            total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads.values()]))
            coef = torch.clamp(case.max_grad_norm / (total + 1e-6), max=1.0)
            grads = {n: g * coef for n, g in grads.items()}
        with torch.no_grad():
            for n, p in named:
                d_p = grads[n]
                if case.momentum:
                    buffers[n] = d_p.clone() if n not in buffers else buffers[n] * case.momentum + d_p
                    d_p = buffers[n]
                p.add_(d_p, alpha=-case.lr)
        tracker += 1
        if tracker == case.growth_interval:
            scale, tracker = scale * 2.0, 0
        out.append(RefStep(loss.item(), False, scale, grads, _params(named)))
    return out


def _params(named) -> dict:
    return {n: p.detach().clone() for n, p in named}


# -------------------------------------------------------------------------- comparisons


def expect_near(got: torch.Tensor, want: torch.Tensor, scale_of: torch.Tensor, rel: float, *, name: str,
                note: str) -> None:
    """``|got - want|`` (a norm) within ``rel`` of ``|scale_of|``, plus ABS: what 16-bit rounding explains."""
    expect_bounded((got - want).norm(), at_most=float(rel * scale_of.norm() + ABS), name=name, note=note)


def check_autocast_events(calls: list, dtype: str, *, where: str = "", autocast: str = "autocast") -> None:
    """Each call ran the forward and the loss once under ``autocast`` with ``dtype``, the loss as
    ``loss_fn(model(inputs), targets)`` (the model's output first), and optimizer.step() once with
    autocast off. ``where`` prefixes the message ("on CUDA, ")."""
    for i, call in enumerate(calls):
        events = call["events"]
        for kind in ("forward", "loss"):
            seen = [e for e in events if e.startswith(kind + ":")]
            if seen != [f"{kind}:{dtype}"]:
                raise AssertionError(f"{where}step {i}: the {kind} ran as {seen or 'never'}; expected once, under "
                                     f"{autocast} with dtype {dtype} (events: {events})")
        for output, target in call["loss_args"]:
            if (output, target) != ("the model's output", "the targets"):
                raise AssertionError(f"{where}step {i}: loss_fn was called with {output} first and {target} "
                                     "second; expected loss_fn(model(inputs), targets): the model's output, "
                                     "then the targets")
        steps = [e for e in events if e.startswith("step:")]
        if steps != ["step:off"]:
            raise AssertionError(f"{where}step {i}: optimizer.step() ran as {steps or 'never'}; expected once, "
                                 f"with autocast off (events: {events})")


def check_params(calls: list, case: Case, ref: list[RefStep], rel: float = REL) -> None:
    """Parameters after each call: float32, and within ``rel`` (bfloat16's REL, float16's REL_FP16) of
    the float32 reference, measured against how far the reference moved from the start."""
    start = make_params(case.seed)
    for i, (call, want) in enumerate(zip(calls, ref)):
        for name, w in want.params.items():
            got = expect_tensor(call["params"][name], shape=tuple(w.shape), dtype=torch.float32,
                                name=f"{name} after step {i} (master weights stay float32)")
            expect_near(got, w, w - start[name], rel,
                        name=f"{case.describe()}: after step {i}, the distance of {name} from the float32 reference",
                        note=f"{name} moved by {(got - start[name]).norm().item():.4g} from the start, the reference "
                             f"by {(w - start[name]).norm().item():.4g}: more than 16-bit rounding explains")


def check_step_grads(calls: list, case: Case, ref: list[RefStep], rel: float = REL) -> None:
    """The gradients optimizer.step saw: unscaled (and clipped), float32, close to the reference."""
    for i, (call, want) in enumerate(zip(calls, ref)):
        if want.skipped:
            continue
        if len(call["step_grads"]) != 1:
            raise AssertionError(f"{case.describe()}: at step {i}, optimizer.step() ran "
                                 f"{len(call['step_grads'])} times, expected once")
        for name, w in want.grads.items():
            g = call["step_grads"][0][name]
            if g is None:
                raise AssertionError(f"{case.describe()}: at step {i}, {name}.grad is None at optimizer.step()")
            g = expect_tensor(g, shape=tuple(w.shape), dtype=torch.float32, name=f"{name}.grad at optimizer.step()")
            clipped = " (clipped)" if case.max_grad_norm is not None else ""
            expect_near(g, w, w, rel,
                        name=f"{case.describe()}: at step {i}, the distance of the {name}.grad optimizer.step() saw "
                             f"from the float32 reference gradient{clipped}",
                        note=f"its norm is {g.norm().item():.4g}, the reference's {w.norm().item():.4g}")


def check_returned(calls: list, case: Case, ref: list[RefStep], rel: float = REL) -> None:
    for i, (call, want) in enumerate(zip(calls, ref)):
        r = call["returned"]
        where = f"{case.describe()}: step {i} returned"
        if isinstance(r, Opaque):  # what the probe could not send as it is
            raise AssertionError(f"{where} a {r.type_name}, expected a dict with loss, skipped and scale")
        for key, kinds in (("loss", (float,)), ("skipped", (bool,)), ("scale", (float, int))):
            if type(r[key]) not in kinds:
                got = f"a {r[key].type_name} ({r[key].repr:.60})" if isinstance(r[key], Opaque) else type(r[key]).__name__
                raise AssertionError(f"{where} {key} as {got}, expected a Python {kinds[0].__name__}")
        if r["skipped"] is not want.skipped:
            raise AssertionError(f"{where} skipped={r['skipped']}, expected {want.skipped}")
        if r["scale"] != want.scale or call["scale"] != want.scale:
            raise AssertionError(f"{where} scale={r['scale']} (the scaler holds {call['scale']}), expected "
                                 f"{want.scale:g} after scaler.update()")
        expect_scalar(r["loss"], want.loss, name=f"{where} loss", types=(float,), atol=ABS, rtol=rel,
                      note="the float32 loss; inf where the forward overflowed")


# ---------------------------------------------------------------------- refusals


def stale_grads(seed: int) -> dict:
    """Gradients the probe puts in .grad before a call."""
    g = torch.Generator().manual_seed(seed)
    return {n: torch.randn(shape, generator=g) for n, shape in PARAMS.items()}


def happened_before_refusal(seen: dict, params: dict, stale: dict, init_scale: float) -> list[str]:
    """What the refusal probe saw happen before the ValueError, in words; [] when nothing did."""
    if not seen.get("raised"):
        return []
    happened = []
    if seen["events"]:
        happened.append(f"these calls were made: {seen['events']}")
    # bit for bit, a None .grad and anything but a tensor of the same shape and dtype counting as changed
    changed = [n for n in PARAMS if first_difference(seen["params"][n], params[n]) is not None]
    changed += [f"{n}.grad" for n in PARAMS if first_difference(seen["grads"][n], stale[n]) is not None]
    if changed:
        happened.append(f"the model's {', '.join(changed)} changed")
    if seen["scale"] != init_scale:
        happened.append(f"the scaler's scale went from {init_scale:g} to {seen['scale']}")
    return happened
