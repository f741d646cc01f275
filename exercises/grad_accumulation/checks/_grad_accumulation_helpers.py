"""Judge-side helpers for the grad_accumulation checks: inputs built from seeds, the
full-batch reference (plain torch, float64) and comparisons with what the sandbox reports.

The reference never accumulates: for each group it concatenates the group's
micro-batches, takes one backward of the full-batch loss and one SGD step. The
candidate's accumulated gradients must match it.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from grader.judge import Opaque, Tolerance, expect_close, expect_scalar, expect_tensor, first_difference

#: Parameter names and shapes of the probes' model: Sequential(Linear(3, 4), Tanh, Linear(4, 2)).
PARAMS = {"0.weight": (4, 3), "0.bias": (4,), "2.weight": (2, 4), "2.bias": (2,)}
#: float64 throughout; sums in another order differ by ~1e-15 relative.
TOL = Tolerance(atol=1e-10, rtol=1e-7)


def make_params(seed: int) -> dict:
    g = torch.Generator().manual_seed(seed)
    return {n: torch.randn(shape, generator=g, dtype=torch.float64) for n, shape in PARAMS.items()}


def make_batches(sizes, seed: int, loss: str = "mse") -> list:
    """One [inputs, targets] pair per size, float64 (targets int64 classes for cross entropy)."""
    g = torch.Generator().manual_seed(seed + 1)
    out = []
    for n in sizes:
        x = torch.randn(n, 3, generator=g, dtype=torch.float64)
        y = (torch.randint(0, 2, (n,), generator=g) if loss == "cross_entropy"
             else torch.randn(n, 2, generator=g, dtype=torch.float64))
        out.append([x, y])
    return out


@dataclass
class Case:
    """One call of train_with_accumulation, as the probe receives it."""

    sizes: tuple
    k: int
    seed: int = 0
    lr: float = 0.1
    momentum: float = 0.0
    loss: str = "mse"

    @property
    def params(self) -> dict:
        return make_params(self.seed)

    @property
    def batches(self) -> list:
        return make_batches(self.sizes, self.seed, self.loss)

    def kwargs(self) -> dict:
        return {"lr": self.lr, "momentum": self.momentum, "loss": self.loss}

    def describe(self) -> str:
        extra = f", SGD momentum={self.momentum}" if self.momentum else ""
        loss = "" if self.loss == "mse" else f", {self.loss} loss"
        return f"micro-batch sizes {list(self.sizes)}, accumulation_steps={self.k}{extra}{loss}"

    def groups(self) -> list:
        return [list(range(i, min(i + self.k, len(self.sizes)))) for i in range(0, len(self.sizes), self.k)]


class _SGD:
    """torch.optim.SGD's update (momentum, no dampening), written out: constructing a torch
    optimizer costs seconds on first use, in every grading."""

    def __init__(self, params: list, lr: float, momentum: float):
        self.params, self.lr, self.momentum = params, lr, momentum
        self.buffers: list = [None] * len(params)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        for i, p in enumerate(self.params):
            d_p = p.grad
            if self.momentum:
                buf = self.buffers[i]
                self.buffers[i] = d_p.clone() if buf is None else buf.mul_(self.momentum).add_(d_p)
                d_p = self.buffers[i]
            p.add_(d_p, alpha=-self.lr)


@dataclass
class Outcome:
    losses: list
    step_grads: list
    params: dict


def reference(case: Case) -> Outcome:
    """One full-batch SGD step per group (the groups' micro-batches concatenated)."""
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(case.params[name])
    optimizer = _SGD(list(model.parameters()), case.lr, case.momentum)
    loss_fn = nn.MSELoss() if case.loss == "mse" else nn.CrossEntropyLoss()
    batches = case.batches
    losses, step_grads = [], []
    for group in case.groups():
        optimizer.zero_grad()
        x = torch.cat([batches[i][0] for i in group])
        y = torch.cat([batches[i][1] for i in group])
        loss = loss_fn(model(x), y)
        loss.backward()
        losses.append(loss.item())
        step_grads.append({n: p.grad.detach().clone() for n, p in model.named_parameters()})
        optimizer.step()
    return Outcome(losses, step_grads, {n: p.detach().clone() for n, p in model.named_parameters()})


def run(sandbox, case: Case, **extra) -> dict:
    return sandbox.call("accumulate", case.params, case.batches, case.k, **case.kwargs(), **extra)


# -------------------------------------------------------------------------- comparisons


def check_step_count(result: dict, case: Case) -> None:
    want = len(case.groups())
    got = result["events"].count("step")
    if got != want:
        raise AssertionError(f"{case.describe()}: optimizer.step() was called {got} times, expected {want} "
                             f"(one per group: {case.groups()})")


def check_gradients(result: dict, case: Case, *, first_only: bool = False) -> None:
    """The .grad the optimizer saw at each step equals the group's full-batch gradient."""
    check_step_count(result, case)
    expected = reference(case)
    for s, (got, want) in enumerate(zip(result["step_grads"], expected.step_grads)):
        group = case.groups()[s]
        for name, w in want.items():
            g = got[name]
            if g is None:
                raise AssertionError(f"{case.describe()}: at step {s} (micro-batches {group}) {name}.grad is None")
            g = expect_tensor(g, shape=tuple(w.shape), dtype=w.dtype, name=f"{name}.grad at step {s}")
            expect_close(g, w, f"{case.describe()}: at step {s} (micro-batches {group}) {name}.grad", tol=TOL,
                         note=f"it must be the gradient of the group's full-batch loss "
                                         f"(its norm is {float(g.norm()):.4g}, that one's {float(w.norm()):.4g})")
        if first_only:
            return


def check_params(result: dict, case: Case) -> None:
    expected = reference(case)
    for name, w in expected.params.items():
        got = expect_tensor(result["params"][name], shape=tuple(w.shape), dtype=w.dtype, name=name)
        expect_close(got, w, f"{case.describe()}: after training, {name}", tol=TOL,
                     note="it must equal one full-batch SGD step per group")


def check_losses(result: dict, case: Case) -> None:
    returned = result["losses"]
    if isinstance(returned, Opaque):  # what the probe could not send as it is
        raise AssertionError(f"{case.describe()}: must return a list of Python floats, returned "
                             f"a {returned.type_name} ({returned.repr:.60})")
    want = reference(case).losses
    if len(returned) != len(want):
        raise AssertionError(f"{case.describe()}: returned {len(returned)} losses, expected {len(want)} "
                             f"(one per optimizer step)")
    for s, (got, w) in enumerate(zip(returned, want)):
        expect_scalar(got, w, name=f"{case.describe()}: loss {s}", types=(float,), tol=TOL,
                      note="the group's full-batch loss before the step")


def stale_grads(seed: int) -> dict:
    """Gradients the probe puts in .grad before the call, large enough to show in a step."""
    g = torch.Generator().manual_seed(seed)
    return {n: torch.randn(shape, generator=g, dtype=torch.float64) * 10 for n, shape in PARAMS.items()}


def touched_before_refusal(seen: dict, case: Case, stale: dict) -> list[str]:
    """What the refusal probe saw happen before the ValueError, in words; [] when nothing was touched."""
    if not seen.get("raised"):
        return []
    touched = []
    if seen["events"]:
        touched.append(f"the optimizer got {seen['events']}")
    if seen["forward_calls"]:
        touched.append(f"the model was called {seen['forward_calls']} time(s)")
    if seen["pulled"]:
        touched.append(f"{seen['pulled']} micro-batch(es) were pulled from batches (a generator, now spent)")
    # bit for bit, a None .grad and anything but a tensor of the same shape and dtype counting as changed
    changed = [n for n in PARAMS if first_difference(seen["params"][n], case.params[n]) is not None]
    changed += [f"{n}.grad" for n in PARAMS if first_difference(seen["grads"][n], stale[n]) is not None]
    if changed:
        touched.append(f"the model's {', '.join(changed)} changed")
    return touched
