"""Probes for the ddp_step exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), runs the
candidate's code and returns plain data. Probes never judge anything; the hidden
checks (judge side) compare what comes back with values they compute
themselves.

``shard_indices`` is a pure function and runs in the worker itself.
``average_gradients`` and ``train_step`` need a process group: ``ddp_run``
runs each scenario on a fresh gloo group with ``probekit.run_ranks`` (forked
ranks, a file store, deadlines: nothing may hang, and every rank that did not
report says why). A call stops at its first failing group.

Forbidden APIs (DistributedDataParallel, DistributedSampler, torch.distributed.algorithms)
are absent from the worker and from every rank alike: a rank is a process the worker's
multiprocessing starts, and it removes them itself before it imports anything of the
candidate's (``grader.sandbox.removal``); what a rank recorded goes back with the call.
"""

from __future__ import annotations

import torch

import ddp_step
from grader.sandbox import probekit
from shared import LOSSES, build, make_optimizer


def _call(fn, *args, **kwargs):
    """Run candidate code; its exception becomes probekit.CandidateFailed."""
    return probekit.call_candidate(ddp_step, fn, *args, **kwargs)


# ------------------------------------------------------------------ shard_indices


def _indices_report(value) -> dict:
    """A list of plain ints goes back as it is; anything else is described."""
    if type(value) is list and all(type(i) is int for i in value):
        return {"indices": value}
    if type(value) is list:
        kinds = sorted({type(i).__name__ for i in value if type(i) is not int})
        return {"returned": f"a list holding {', '.join(kinds)} (expected ints)"}
    return probekit.returned_instead(value)


def shard(num_samples, rank, world_size, **options):
    """shard_indices(num_samples, rank, world_size, **options) for one rank.

    options are passed by keyword only when given (shuffle, seed, epoch), so the
    defaults are the candidate's own. Candidate exceptions propagate (the judge
    checks the ValueError rules with them).
    """
    return _indices_report(ddp_step.shard_indices(num_samples, rank, world_size, **options))


def shard_all(num_samples, world_size, settings):
    """shard_indices for every rank of world_size, for each dict of keyword options in settings.

    Returns {"results": [[report per rank] per settings entry]}.
    """
    results = []
    for options in settings:
        results.append([_indices_report(ddp_step.shard_indices(num_samples, rank, world_size, **options))
                        for rank in range(world_size)])
    return {"results": results}


# ------------------------------------------------------------------ the model (shared.py)


def _state(model) -> dict:
    return {"params": probekit.parameters(model), "grads": probekit.gradients(model)}


def _loss_report(value) -> dict:
    if isinstance(value, float):
        return {"type": "float", "value": float(value)}
    report = {"type": type(value).__name__}
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        report["value"] = float(value.detach().reshape(()).item())
    return report


# ------------------------------------------------------------------ scenarios (in a rank)


def _scenario_average(scenario, rank, world_size) -> dict:
    """Set this rank's gradients (None where given None), call average_gradients(model)."""
    model = build(scenario)
    grads = scenario["grads"][rank]
    for name, p in model.named_parameters():
        g = grads.get(name)
        p.grad = None if g is None else g.clone()
    _call(ddp_step.average_gradients, model)
    return _state(model)


def _scenario_train(scenario, rank, world_size) -> dict:
    """Call train_step once per step on this rank's shard; report losses, parameters and gradients."""
    model = build(scenario)
    optimizer = make_optimizer(scenario["optimizer"], model.parameters())
    loss_fn = LOSSES[scenario["loss"]]()
    for name, g in (scenario.get("stale_grads") or [{}] * world_size)[rank].items():
        dict(model.named_parameters())[name].grad = g.clone()  # left over from earlier work
    losses = []
    for step in scenario["steps"]:
        value = _call(ddp_step.train_step, model, optimizer,
                      step["inputs"][rank], step["targets"][rank], loss_fn)
        losses.append(_loss_report(value))
    return {"losses": losses, **_state(model)}


_SCENARIOS = {"average": _scenario_average, "train": _scenario_train}


def _in_rank(scenario, rank, world_size) -> dict:
    """One rank's part (probekit.run_ranks calls it once the group has formed)."""
    return _SCENARIOS[scenario["kind"]](scenario, rank, world_size)


# ------------------------------------------------------------------ running groups


def ddp_run(runs):
    """Run each {"world_size": n, "scenario": {...}} on its own gloo group, in order.

    Returns one entry per run: {"world_size": n, "ranks": [per rank result]} or
    {"world_size": n, "error": text}. A rank's result is its state
    ({"params", "grads"}, plus "losses" for train), or one of
    {"candidate_error": {...}, "failed_at": time} (candidate code raised),
    {"crashed": text} (the process ended without reporting), {"hung": text}
    (killed while still running), {"stopped": text} (killed after another rank
    failed) and {"error": text} (the probe's own failure, e.g. the group could
    not form). After a run in which some rank did not finish cleanly, the rest
    are not run (the judge reports the first failing run; the others could only
    cost time), and say so.
    """
    out = []
    gave_up = None
    for run in runs:
        ws = run["world_size"]
        if gave_up is not None:
            out.append({"world_size": ws, "error": f"not run: {gave_up}"})
            continue
        result = probekit.run_ranks(ws, run["scenario"], _in_rank)
        result["world_size"] = ws
        out.append(result)
        if "error" in result or any(_failed(r) for r in result["ranks"]):
            gave_up = f"the group of world size {ws} failed before it"
    return out


def _failed(rank_result: dict) -> bool:
    return any(key in rank_result for key in ("candidate_error", "crashed", "hung", "stopped", "error"))
