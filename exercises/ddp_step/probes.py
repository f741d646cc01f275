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

Forbidden APIs: the worker's tripwire lives in the worker process only, and
ranks are new processes, so every call of candidate code (in the worker or in a
rank) also runs under ``_Watch``, which records any Python frame that runs
inside DistributedDataParallel, DistributedSampler or the
torch.distributed.algorithms package, however it was reached. Results carry
what it saw under "forbidden", and under "tampered" whether candidate code switched it
off (the judge then takes every check's credit).
"""

from __future__ import annotations

import os
import sys

import torch

import ddp_step
from grader.sandbox import probekit
from shared import LOSSES, build, make_optimizer


# ------------------------------------------------------------------ forbidden APIs


def _forbidden_places() -> list[tuple[str, str, bool]]:
    """(path, API, is_folder): where the forbidden APIs' Python code lives in this torch."""
    import torch.nn.parallel
    import torch.utils.data

    parallel = os.path.dirname(torch.nn.parallel.__file__)
    data = os.path.dirname(torch.utils.data.__file__)
    distributed = os.path.join(os.path.dirname(torch.__file__), "distributed")
    return [
        (os.path.join(parallel, "distributed.py"), "torch.nn.parallel.DistributedDataParallel", False),
        (os.path.join(data, "distributed.py"), "torch.utils.data.DistributedSampler", False),
        (os.path.join(distributed, "algorithms") + os.sep, "torch.distributed.algorithms", True),
    ]


class _Watch:
    """Records forbidden APIs whose Python code runs while candidate code runs (sys.setprofile)."""

    def __init__(self):
        self.hits: set[str] = set()
        self._places = [(os.path.realpath(p) + (os.sep if folder else ""), api, folder)
                        for p, api, folder in _forbidden_places()]
        self._by_file: dict[str, str | None] = {}
        self._previous = None
        #: What the watch found changed under it on the way out (candidate code can call sys.setprofile too).
        self.tampered: list[str] = []

    def _api(self, filename: str) -> str | None:
        try:
            return self._by_file[filename]
        except KeyError:
            pass
        real = os.path.realpath(filename)
        found = None
        for place, api, folder in self._places:
            if (real.startswith(place) if folder else real == place):
                found = api
        self._by_file[filename] = found
        return found

    def _profile(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            api = self._api(code.co_filename)
            if api is not None and code.co_name != "<module>":  # importing is not using
                self.hits.add(api)

    def __enter__(self):
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        if sys.getprofile() != self._profile:  # bound methods compare equal, never identical
            what = "sys.setprofile: the forbidden-API watch was switched off while candidate code ran"
            if what not in self.tampered:
                self.tampered.append(what)
        sys.setprofile(self._previous)
        return False

    def report(self) -> dict:
        """What joins a rank's result: the forbidden APIs seen, and what was switched off."""
        return {"forbidden": sorted(self.hits), "tampered": self.tampered}


def _call(watch: _Watch, fn, *args, **kwargs):
    """Run candidate code under the watch; its exception becomes probekit.CandidateFailed."""
    return probekit.call_candidate(ddp_step, fn, *args, watch=watch, **kwargs)


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
    watch = _Watch()
    with watch:
        value = ddp_step.shard_indices(num_samples, rank, world_size, **options)
    return {**_indices_report(value), **watch.report()}


def shard_all(num_samples, world_size, settings):
    """shard_indices for every rank of world_size, for each dict of keyword options in settings.

    Returns {"results": [[report per rank] per settings entry], "forbidden": [...]}.
    """
    watch = _Watch()
    results = []
    for options in settings:
        per_rank = []
        for rank in range(world_size):
            with watch:
                value = ddp_step.shard_indices(num_samples, rank, world_size, **options)
            per_rank.append(_indices_report(value))
        results.append(per_rank)
    return {"results": results, **watch.report()}


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


def _scenario_average(scenario, rank, world_size, watch) -> dict:
    """Set this rank's gradients (None where given None), call average_gradients(model)."""
    model = build(scenario)
    grads = scenario["grads"][rank]
    for name, p in model.named_parameters():
        g = grads.get(name)
        p.grad = None if g is None else g.clone()
    _call(watch, ddp_step.average_gradients, model)
    return _state(model)


def _scenario_train(scenario, rank, world_size, watch) -> dict:
    """Call train_step once per step on this rank's shard; report losses, parameters and gradients."""
    model = build(scenario)
    optimizer = make_optimizer(scenario["optimizer"], model.parameters())
    loss_fn = LOSSES[scenario["loss"]]()
    for name, g in (scenario.get("stale_grads") or [{}] * world_size)[rank].items():
        dict(model.named_parameters())[name].grad = g.clone()  # left over from earlier work
    losses = []
    for step in scenario["steps"]:
        value = _call(watch, ddp_step.train_step, model, optimizer,
                      step["inputs"][rank], step["targets"][rank], loss_fn)
        losses.append(_loss_report(value))
    return {"losses": losses, **_state(model)}


_SCENARIOS = {"average": _scenario_average, "train": _scenario_train}


def _in_rank(scenario, rank, world_size, watch) -> dict:
    """One rank's part (probekit.run_ranks calls it once the group has formed)."""
    return _SCENARIOS[scenario["kind"]](scenario, rank, world_size, watch)


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
    not form); "forbidden" lists what the watch saw when it got as far as running,
    "tampered" what it found switched off. After a run in which some rank did not finish cleanly, the rest
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
        result = probekit.run_ranks(ws, run["scenario"], _in_rank, watch=_Watch)
        result["world_size"] = ws
        out.append(result)
        if "error" in result or any(_failed(r) for r in result["ranks"]):
            gave_up = f"the group of world size {ws} failed before it"
    return out


def _failed(rank_result: dict) -> bool:
    return any(key in rank_result for key in ("candidate_error", "crashed", "hung", "stopped", "error")) \
        or bool(rank_result.get("forbidden")) or bool(rank_result.get("tampered"))
