"""Probes for the checkpoint_resume exercise. They run INSIDE the sandbox.

They train a tiny model with the candidate's save_checkpoint / load_checkpoint in a
private folder under the sandbox's temporary directory (removed afterwards) and
return plain data: losses, parameters, states, file listings and digests. Never a verdict.

The training loop is the README's: an MLP with dropout, SGD with momentum or Adam,
StepLR stepped after every batch, random.shuffle at each epoch's start and
torch.randn noise on every batch. ``Net.load_state_dict`` draws from both global
generators, like a module that re-samples something when loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import tempfile
import threading

import torch
from torch import nn

import checkpoint
from grader.sandbox import probekit

N_DATA, BATCH = 16, 4


class PlainNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Dropout(0.3), nn.Linear(6, 1))

    def forward(self, x):
        return self.body(x)


class Net(PlainNet):
    def load_state_dict(self, state_dict, strict=True, assign=False):
        torch.rand(3)
        random.random()
        return super().load_state_dict(state_dict, strict=strict, assign=assign)


def _data():
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(N_DATA, 3, generator=g)
    return x, x.sum(1, keepdim=True).sin()


def _build(kind: str, net=Net):
    model = net()
    if kind == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.02)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.7)
    return model, opt, sched


def _train(model, opt, sched, first_epoch, end_epoch, step, log):
    x, y = _data()
    model.train()
    for _ in range(first_epoch, end_epoch):
        order = list(range(N_DATA))
        random.shuffle(order)
        for b in range(0, N_DATA, BATCH):
            idx = torch.tensor(order[b:b + BATCH])
            inputs = x[idx] + 0.1 * torch.randn(BATCH, 3)
            loss = ((model(inputs) - y[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            log.append((step, loss.detach().clone()))
            step += 1
    return step


def _params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _opt_state(opt):
    """optimizer.state_dict() with its state's int keys as strings (the protocol's dict keys are strings)."""
    sd = opt.state_dict()
    return {"state": {str(k): v for k, v in sd["state"].items()}, "param_groups": sd["param_groups"]}


def _seed(seed):
    torch.manual_seed(seed)
    random.seed(seed)


@contextlib.contextmanager
def _folder():
    d = tempfile.mkdtemp(prefix="ckpt-probe-")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _log(log):
    return {"steps": [s for s, _ in log], "losses": torch.stack([l for _, l in log]) if log else torch.zeros(0)}


def resume(epochs, k, kind, seed):
    """Train `epochs` epochs straight; then k epochs, save, reseed, fresh objects, load, the rest."""
    with _folder() as d:
        path = os.path.join(d, "last.pt")
        _seed(seed)
        model, opt, sched = _build(kind)
        straight = []
        _train(model, opt, sched, 0, epochs, 0, straight)
        straight_params = _params(model)

        _seed(seed)
        model, opt, sched = _build(kind)
        log = []
        done = _train(model, opt, sched, 0, k, 0, log)
        checkpoint.save_checkpoint(path, model, opt, sched, k, done)
        _seed(seed + 1)
        model, opt, sched = _build(kind)
        info = checkpoint.load_checkpoint(path, model, opt, sched)
        _train(model, opt, sched, info["epoch"], epochs, info["step"], log)
        return {"straight": _log(straight), "straight_params": straight_params,
                "resumed": _log(log), "resumed_params": _params(model)}


def round_trip(kind, epoch, step, net="plain"):
    """Train a little, save(epoch, step), then load into fresh objects under other seeds.

    Returns what load returned, the saved and loaded state dicts (model, optimizer,
    scheduler) and 3 torch / 3 Python random draws made right after the save and right
    after the load.
    """
    cls = PlainNet if net == "plain" else Net
    with _folder() as d:
        path = os.path.join(d, "ckpt.pt")
        _seed(5)
        model, opt, sched = _build(kind, cls)
        _train(model, opt, sched, 0, 2, 0, [])
        saved = {"model": _params(model), "optimizer": _opt_state(opt), "scheduler": sched.state_dict()}
        checkpoint.save_checkpoint(path, model, opt, sched, epoch, step)
        after_save = {"torch": torch.rand(3), "python": [random.random() for _ in range(3)]}
        _seed(77)
        model, opt, sched = _build(kind, cls)
        info = checkpoint.load_checkpoint(path, model, opt, sched)
        after_load = {"torch": torch.rand(3), "python": [random.random() for _ in range(3)]}
        loaded = {"model": _params(model), "optimizer": _opt_state(opt), "scheduler": sched.state_dict()}
        keys = sorted(repr(k) for k in info) if isinstance(info, dict) else None
        plain = {k: info[k] for k in ("epoch", "step") if isinstance(info, dict) and k in info}
        return {"keys": keys, "info": plain, "info_type": type(info).__name__, "saved": saved,
                "loaded": loaded, "after_save": after_save, "after_load": after_load,
                "lr": [g["lr"] for g in opt.param_groups], "saved_lr": saved["scheduler"]["_last_lr"]}


def weights_only(kind):
    """Save a checkpoint; try torch.load(path, weights_only=True) on it."""
    with _folder() as d:
        path = os.path.join(d, "ckpt.pt")
        model, opt, sched = _build(kind)
        _train(model, opt, sched, 0, 1, 0, [])
        checkpoint.save_checkpoint(path, model, opt, sched, 1, 4)
        try:
            content = torch.load(path, weights_only=True)
        except Exception as e:
            return {"loaded": False, "error": f"{type(e).__name__}: {str(e)[:4000]}"}
        return {"loaded": True, "type": type(content).__name__}


def missing(name):
    """load_checkpoint on a path that does not exist (raises as the candidate does)."""
    with _folder() as d:
        model, opt, sched = _build("sgd")
        checkpoint.load_checkpoint(os.path.join(d, name), model, opt, sched)
        return "returned"


class _UnpicklableNet(PlainNet):
    def state_dict(self, *args, **kwargs):
        sd = super().state_dict(*args, **kwargs)
        sd["lock"] = threading.Lock()
        return sd


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def failing_save():
    """A good save, then a save whose model state_dict cannot be pickled (a lock), over the same path."""
    with _folder() as d:
        path = os.path.join(d, "ckpt.pt")
        model, opt, sched = _build("sgd")
        _train(model, opt, sched, 0, 1, 0, [])
        checkpoint.save_checkpoint(path, model, opt, sched, 1, 4)
        bad = _UnpicklableNet()
        bad.load_state_dict(model.state_dict())
        after_good = sorted(os.listdir(d))
        before = _digest(path)
        raised = None
        try:
            checkpoint.save_checkpoint(path, bad, opt, sched, 2, 8)
        except Exception as e:
            raised = probekit.raised(e)
        files = sorted(os.listdir(d))
        digest = _digest(path) if os.path.exists(path) else None
        info = None
        if digest is not None and digest == before:  # a damaged file is reported by its digest
            m, o, s = _build("sgd")
            info = checkpoint.load_checkpoint(path, m, o, s)
            info = {k: info[k] for k in ("epoch", "step")}
        return {"after_good": after_good, "raised": raised, "files": files, "before": before,
                "after": digest, "info": info}


def pickled_code():
    """A file whose unpickling would create a folder; load_checkpoint on it."""
    with _folder() as d:
        path, marker = os.path.join(d, "evil.pt"), os.path.join(d, "code-ran")

        class Payload:
            def __reduce__(self):
                return (os.makedirs, (marker,))

        torch.save({"model": Payload(), "epoch": 0, "step": 0}, path)
        raised = None
        try:
            model, opt, sched = _build("sgd")
            checkpoint.load_checkpoint(path, model, opt, sched)
        except Exception as e:
            raised = probekit.raised(e)
        return {"raised": raised, "code_ran": os.path.exists(marker)}


def cuda_round_trip():
    """round_trip's generator half on every CUDA device (graded with --gpus only).

    Save, draw 3 numbers on each device, reseed (torch.manual_seed seeds every device),
    fresh objects, load, draw again. The model stays on the CPU: only the CUDA generators
    are under test. Returns the device count and both draws per device, on the CPU.
    """
    devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    with _folder() as d:
        path = os.path.join(d, "ckpt.pt")
        _seed(5)
        model, opt, sched = _build("sgd", PlainNet)
        _train(model, opt, sched, 0, 1, 0, [])
        checkpoint.save_checkpoint(path, model, opt, sched, 1, 4)
        after_save = [torch.rand(3, device=dev).cpu() for dev in devices]
        _seed(77)
        model, opt, sched = _build("sgd", PlainNet)
        checkpoint.load_checkpoint(path, model, opt, sched)
        after_load = [torch.rand(3, device=dev).cpu() for dev in devices]
        return {"devices": len(devices), "after_save": after_save, "after_load": after_load}
