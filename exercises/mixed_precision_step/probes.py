"""Probes for the mixed_precision_step exercise. They run INSIDE the sandbox.

The judge sends starting parameters (float32), batches and settings; the probe
builds the model (``_model``), an SGD optimizer (``probekit.RecordingSGD``) and a GradScaler
(``RecordingScaler``) that note what happens, in order, in one ``probekit.Ledger``,
and calls the candidate's amp_train_step once per batch. It can poison a step:
make the loss inf, or put an inf into one gradient during backward. It returns
plain data only; it never judges.

Nothing recorded, and no setting (the poison, what a forward is called), lives on the model,
the optimizer or the scaler the candidate is handed: each finds its ledger by its identity
(``probekit.attached``), and the poison is a custom Function in the model's own forward, not
a hook on a parameter.

Events: "zero_grad"; "forward:<autocast dtype or off>"; "loss:<autocast dtype or
off>"; "scaler.scale", "scaler.unscale_", "scaler.step", "scaler.update";
"step:<autocast dtype or off>" (the optimizer's step, called by scaler.step when
the gradients are finite). Beside the events, ``loss_args`` says what each loss_fn call
got in its two argument slots ("the model's output", "the targets" or something else).

``device_type="cuda"`` runs the same step on CUDA (model, batches and scaler there;
autocast recorded for "cuda"); tensors come back as CPU copies, with each
parameter's device type reported beside them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import amp_step
from grader.sandbox import probekit
from grader.sandbox.probekit import RecordingSGD


def _autocast_state(device_type: str) -> str:
    if torch.is_autocast_enabled(device_type):
        return str(torch.get_autocast_dtype(device_type)).replace("torch.", "")
    return "off"


def _role(value, targets: torch.Tensor) -> str:
    """What loss_fn got in one argument slot, in words: the model's output (it carries the graph
    back to the parameters), the targets (their values, whatever copy), or something else."""
    if not isinstance(value, torch.Tensor):
        return f"a {type(value).__name__}"
    if value.requires_grad:
        return "the model's output"
    if value.shape == targets.shape and torch.equal(value.detach().to(targets.device, targets.dtype), targets):
        return "the targets"
    return f"another tensor of shape {tuple(value.shape)}"


class _Poison(torch.autograd.Function):
    """The weight as it is; in backward, its gradient with an inf at [0, 0] when the step is poisoned."""

    @staticmethod
    def forward(ctx, weight, poisoned):
        ctx.poisoned = poisoned
        return weight.view_as(weight)

    @staticmethod
    def backward(ctx, grad):
        if ctx.poisoned:
            grad = grad.clone()
            grad[0, 0] = float("inf")
        return grad, None


class _First(nn.Linear):
    """The model's first layer: an nn.Linear whose weight gradient the probe can poison (through its ledger)."""

    def forward(self, x):
        found = probekit.attached(self)
        poisoned = found is not None and found[1]["poison"] == "grad"
        return F.linear(x, _Poison.apply(self.weight, poisoned), self.bias)


class _Model(nn.Sequential):
    """nn.Sequential(Linear(4, 8), Tanh, Linear(8, 3)) noting each forward in its ledger."""

    def __init__(self):
        super().__init__(_First(4, 8), nn.Tanh(), nn.Linear(8, 3))

    def forward(self, x):
        found = probekit.attached(self)
        if found is not None:
            found[0].note(found[1]["forward"]())
        return super().forward(x)


def _model(params: dict | None, ledger: probekit.Ledger, settings: dict) -> nn.Module:
    """The model, float32, holding ``params`` (a fresh one under seed 0 when None), recording in ``ledger``;
    ``settings``: {"forward": what a forward is called, "poison": the current step's poison}, read at each call."""
    if params is None:
        torch.manual_seed(0)
        model = _Model()
    else:
        model = probekit.load_parameters(_Model(), params)
    ledger.attach(model, settings)
    ledger.attach(model[0], settings)
    return model


def _sgd(model: nn.Module, ledger: probekit.Ledger, lr: float, momentum: float,
         device_type: str = "cpu") -> RecordingSGD:
    """A RecordingSGD noting in ``ledger``, its steps as "step:<autocast dtype or off>"."""
    return RecordingSGD(model, lr, momentum, ledger=ledger, step_event=lambda: f"step:{_autocast_state(device_type)}")


class RecordingScaler(torch.amp.GradScaler):
    """torch.amp.GradScaler(device_type) that notes scale/unscale_/step/update calls in the ledger it is attached to."""

    def _note(self, event: str) -> None:
        found = probekit.attached(self)
        if found is not None:
            found[0].note(event)

    def scale(self, outputs):
        self._note("scaler.scale")
        return super().scale(outputs)

    def unscale_(self, optimizer):
        self._note("scaler.unscale_")
        return super().unscale_(optimizer)

    def step(self, optimizer, *args, **kwargs):
        self._note("scaler.step")
        return super().step(optimizer, *args, **kwargs)

    def update(self, new_scale=None):
        self._note("scaler.update")
        return super().update(new_scale)


def _scaler(ledger: probekit.Ledger, device_type: str = "cpu", **kwargs) -> RecordingScaler:
    return ledger.attach(RecordingScaler(device_type, **kwargs))


def _plain(value):
    """The returned dict's loss, skipped and scale; what is not a number or a bool (the dict itself included) opaque."""
    if type(value) is not dict:
        return probekit.opaque(value)
    return {key: v if type(v) in (float, bool, int) else probekit.opaque(v)
            for key, v in ((key, value.get(key)) for key in ("loss", "skipped", "scale"))}


def amp_run(params, batches, *, lr=0.1, momentum=0.0, init_scale=1024.0, growth_interval=2000,
            max_grad_norm=None, poison=None, stale=None, device_type="cpu"):
    """amp_train_step once per batch on one model, optimizer and scaler, all on ``device_type``.

    poison: {step index (as str): "loss" or "grad"}. stale: gradients put in .grad first.
    Returns {"calls": [{"returned", "events", "loss_args", "step_grads", "params", "devices", "scale"}, ...]}
    with the parameters (CPU copies), their device types and the scaler's scale after each call.
    """
    device = torch.device(device_type)
    ledger = probekit.Ledger()
    settings = {"forward": lambda: f"forward:{_autocast_state(device_type)}", "poison": None}
    model = _model(params, ledger, settings).to(device)
    if stale is not None:
        for name, p in model.named_parameters():
            p.grad = stale[name].to(device, copy=True)
    optimizer = _sgd(model, ledger, lr, momentum, device_type)
    scaler = _scaler(ledger, device_type, init_scale=init_scale, growth_interval=growth_interval)
    poison = poison or {}
    current = {"targets": None}
    loss_args: list[list[str]] = []
    mse = nn.MSELoss()

    def loss_fn(output, target):
        ledger.note(f"loss:{_autocast_state(device_type)}")
        loss_args.append([_role(output, current["targets"]), _role(target, current["targets"])])
        loss = mse(output, target)
        return loss * float("inf") if settings["poison"] == "loss" else loss

    calls = []
    for i, (x, y) in enumerate(batches):
        settings["poison"] = poison.get(str(i))
        ledger.events.clear()
        ledger.kept.clear()
        loss_args.clear()
        current["targets"] = y.to(device)
        returned = amp_step.amp_train_step(model, optimizer, scaler, (x.to(device), current["targets"]), loss_fn,
                                           max_grad_norm=max_grad_norm, device_type=device_type)
        calls.append({
            "returned": _plain(returned),
            "events": list(ledger.events),
            "loss_args": [list(a) for a in loss_args],
            "step_grads": list(ledger.kept.get("step_grads", [])),
            "params": probekit.parameters(model),
            "devices": {n: p.device.type for n, p in model.named_parameters()},
            "scale": float(scaler.get_scale()),
        })
    return {"calls": calls}


def amp_error(max_grad_norm, device_type):
    """One call with these arguments on a fresh model, for the checks of the errors."""
    ledger = probekit.Ledger()
    model = _model(None, ledger, {"forward": lambda: "forward", "poison": None})
    optimizer = _sgd(model, ledger, 0.1, 0.0)
    scaler = _scaler(ledger, init_scale=1024.0)
    batch = (torch.randn(2, 4), torch.randn(2, 3))
    amp_step.amp_train_step(model, optimizer, scaler, batch, nn.MSELoss(),
                            max_grad_norm=max_grad_norm, device_type=device_type)


def amp_refusal(params, stale, max_grad_norm, device_type):
    """What amp_train_step did before it raised, for the check of "both before anything else happens".

    The model holds ``params`` and the ``stale`` gradients. Returns {"raised": False} when the call did
    not raise (the refusal itself is amp_error's business), else the events logged before the error
    (optimizer, scaler, forward pass, loss_fn), the parameters and their .grad, and the scaler's scale.
    """
    ledger = probekit.Ledger()
    model = _model(params, ledger, {"forward": lambda: "forward", "poison": None})
    for name, p in model.named_parameters():
        p.grad = stale[name].clone()
    optimizer = _sgd(model, ledger, 0.1, 0.0)
    scaler = _scaler(ledger, init_scale=1024.0)
    mse = nn.MSELoss()

    def loss_fn(output, target):
        ledger.note("loss_fn")
        return mse(output, target)

    batch = (torch.randn(2, 4), torch.randn(2, 3))
    try:
        amp_step.amp_train_step(model, optimizer, scaler, batch, loss_fn,
                                max_grad_norm=max_grad_norm, device_type=device_type)
    except Exception:
        return {
            "raised": True,
            "events": list(ledger.events),
            "params": probekit.parameters(model),
            "grads": probekit.gradients(model),
            "scale": float(scaler.get_scale()),
        }
    return {"raised": False}
