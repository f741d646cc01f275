"""Probes for the ddp_step exercise. They run INSIDE the sandbox.

Each probe takes plain data (numbers, strings, CPU tensors), runs the
candidate's code and returns plain data. Probes never judge anything; the hidden
checks (judge side) compare what comes back with values they compute
themselves.

``shard_indices`` is a pure function and runs in the worker itself.
``average_gradients`` and ``train_step`` need a process group: ``ddp_run``
starts one gloo group per world size, each rank a process forked from a
forkserver that has torch imported already (about 0.2 s per group instead of
a few seconds for a fresh interpreter per rank). Ranks meet through a file
store in a private temporary folder (the sandbox has loopback only), read their
scenario from a file, and write their results to a file: nothing crosses
between processes as a pickled tensor.

Nothing may hang: the group's own timeout (5 s) bounds every collective; the
parent kills the ranks still running 1 s after one rank failed, 3 s after one
finished cleanly (they all do the same small amount of work, so a rank still
running then waits in a collective its peers never joined) or 10 s after the
start; and every rank that did not report says why (crashed, hung, stopped
after another rank failed) in plain text. A call stops at its first failing
group.

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
import shutil
import sys
import tempfile
import time
import traceback
from datetime import timedelta

import torch
from torch import nn

import ddp_step

MODULE = "ddp_step"

#: Timeout of the process group: rendezvous and every collective.
GROUP_TIMEOUT_S = 5.0
#: Wall clock for one group, from the first fork to the last result.
RUN_BUDGET_S = 10.0
#: Once one rank has failed, how long the others get to report before they are killed.
FAILURE_GRACE_S = 1.0
#: Once some ranks have finished, how long the others get: every rank does the same small
#: amount of work, so one still running long after its peers waits in a collective they never joined.
FINISH_GRACE_S = 3.0


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


def _candidate_error(exc: BaseException) -> dict:
    """The candidate's exception as data (the judge turns it into an 'error' outcome)."""
    try:
        message = str(exc)[:2000]
    except BaseException:
        message = "<str() of the exception raised>"
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.basename(f.filename) == f"{MODULE}.py"]
    text = "".join(["Traceback (most recent call last):\n"] if frames else [])
    text += "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return {
        "type": type(exc).__name__,
        "qualnames": [c.__name__ for c in type(exc).__mro__][:20],
        "builtin": type(exc).__module__ == "builtins",
        "message": message,
        "traceback": text[-6000:],
    }


class _CandidateFailed(Exception):
    def __init__(self, error: dict):
        super().__init__(error["message"])
        self.error = error


def _call(watch: _Watch, fn, *args, **kwargs):
    """Run candidate code under the watch; its exception becomes _CandidateFailed."""
    try:
        with watch:
            return fn(*args, **kwargs)
    except BaseException as exc:  # SystemExit from candidate code too
        raise _CandidateFailed(_candidate_error(exc)) from None


def _describe(value) -> str:
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"a {type(value).__name__}"


# ------------------------------------------------------------------ shard_indices


def _indices_report(value) -> dict:
    """A list of plain ints goes back as it is; anything else is described."""
    if type(value) is list and all(type(i) is int for i in value):
        return {"indices": value}
    if type(value) is list:
        kinds = sorted({type(i).__name__ for i in value if type(i) is not int})
        return {"returned": f"a list holding {', '.join(kinds)} (expected ints)"}
    return {"returned": _describe(value)}


def shard(num_samples, rank, world_size, **options):
    """shard_indices(num_samples, rank, world_size, **options) for one rank.

    options are passed by keyword only when given (shuffle, seed, epoch), so the
    defaults are the candidate's own. Candidate exceptions propagate (the judge
    checks the ValueError rules with them).
    """
    watch = _Watch()
    with watch:
        value = ddp_step.shard_indices(num_samples, rank, world_size, **options)
    return {**_indices_report(value), "forbidden": sorted(watch.hits), "tampered": watch.tampered}


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
    return {"results": results, "forbidden": sorted(watch.hits), "tampered": watch.tampered}


# ------------------------------------------------------------------ the model


class _Net(nn.Module):
    """The model every DDP scenario trains; the judge builds the same one.

    ``scale`` is a 0-d parameter; ``spare`` is in no forward pass, so its
    gradient stays None.
    """

    def __init__(self, d_in: int, hidden: int, d_out: int):
        super().__init__()
        self.body = nn.Linear(d_in, hidden)
        self.head = nn.Linear(hidden, d_out)
        self.scale = nn.Parameter(torch.ones(()))
        self.spare = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        return self.head(torch.tanh(self.body(x))) * self.scale


def _build(scenario) -> nn.Module:
    model = _Net(*scenario["dims"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(scenario["params"][name])
    for name, p in model.named_parameters():
        if name in scenario.get("frozen", []):
            p.requires_grad_(False)
    return model


def _optimizer(spec, params):
    kind = spec["name"]
    if kind == "sgd":
        return torch.optim.SGD(params, lr=spec["lr"], momentum=spec.get("momentum", 0.0))
    if kind == "adam":
        return torch.optim.Adam(params, lr=spec["lr"])
    raise ValueError(f"unknown optimizer {kind!r}")


def _loss_fn(name):
    return {"mse": nn.MSELoss(), "cross_entropy": nn.CrossEntropyLoss()}[name]


def _state(model) -> dict:
    return {
        "params": {n: p.detach().clone() for n, p in model.named_parameters()},
        "grads": {n: None if p.grad is None else p.grad.detach().clone() for n, p in model.named_parameters()},
    }


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
    model = _build(scenario)
    grads = scenario["grads"][rank]
    for name, p in model.named_parameters():
        g = grads.get(name)
        p.grad = None if g is None else g.clone()
    _call(watch, ddp_step.average_gradients, model)
    return _state(model)


def _scenario_train(scenario, rank, world_size, watch) -> dict:
    """Call train_step once per step on this rank's shard; report losses, parameters and gradients."""
    model = _build(scenario)
    optimizer = _optimizer(scenario["optimizer"], model.parameters())
    loss_fn = _loss_fn(scenario["loss"])
    for name, g in (scenario.get("stale_grads") or [{}] * world_size)[rank].items():
        dict(model.named_parameters())[name].grad = g.clone()  # left over from earlier work
    losses = []
    for step in scenario["steps"]:
        value = _call(watch, ddp_step.train_step, model, optimizer,
                      step["inputs"][rank], step["targets"][rank], loss_fn)
        losses.append(_loss_report(value))
    return {"losses": losses, **_state(model)}


_SCENARIOS = {"average": _scenario_average, "train": _scenario_train}


def _rank_main(rank: int, world_size: int, workdir: str) -> None:
    """One rank: join the group, run the scenario, write the result file, leave."""
    import torch.distributed as dist

    result: dict = {}
    watch = _Watch()
    joined = False
    try:
        torch.set_num_threads(1)
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # the sandbox has loopback only
        scenario = torch.load(os.path.join(workdir, "scenario.pt"), weights_only=True)
        dist.init_process_group(
            "gloo", init_method="file://" + os.path.join(workdir, "store"),
            rank=rank, world_size=world_size, timeout=timedelta(seconds=GROUP_TIMEOUT_S),
        )
        joined = True
        result = _SCENARIOS[scenario["kind"]](scenario, rank, world_size, watch)
    except _CandidateFailed as failed:
        result = {"candidate_error": failed.error, "failed_at": time.time()}
    except BaseException as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
    result["forbidden"] = sorted(watch.hits)
    result["tampered"] = watch.tampered
    path = os.path.join(workdir, f"rank{rank}.pt")
    torch.save(result, path + ".tmp")
    os.replace(path + ".tmp", path)
    if joined:
        try:
            dist.destroy_process_group()
        except BaseException:
            pass
    failed = "candidate_error" in result or "error" in result
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(3 if failed else 0)  # no interpreter teardown: candidate atexit hooks get no say


# ------------------------------------------------------------------ starting ranks

_CONTEXT = None


def _context():
    """A forkserver context whose server has torch imported: ranks start in milliseconds."""
    global _CONTEXT
    if _CONTEXT is None:
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        # torch._dynamo: the first optimizer built in a process imports it (~2 s); once in the server.
        ctx.set_forkserver_preload(["torch", "torch.distributed", "torch._dynamo"])
        _CONTEXT = ctx
    return _CONTEXT


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _run_group(world_size: int, scenario: dict) -> dict:
    """Run ``scenario`` on a fresh gloo group of world_size ranks. Returns {"ranks": [...]} or {"error": ...}."""
    ctx = _context()
    workdir = tempfile.mkdtemp(prefix="ddp-step-run-")
    procs = []
    try:
        torch.save(scenario, os.path.join(workdir, "scenario.pt"))
        # The ranks take sys.path from the worker, where `probes` and the candidate's module import by name.
        for rank in range(world_size):
            p = ctx.Process(target=_rank_main, args=(rank, world_size, workdir),
                            name=f"ddp-rank-{rank}", daemon=True)
            p.start()
            procs.append(p)
        started = time.monotonic()
        deadline = started + RUN_BUDGET_S
        first_failure = None  # (rank, when)
        first_finish = None  # when the first rank finished cleanly
        while True:
            alive = [p for p in procs if p.exitcode is None]
            if not alive:
                break
            now = time.monotonic()
            for rank, p in enumerate(procs):
                if first_failure is None and p.exitcode not in (None, 0):
                    first_failure = (rank, now)
                if first_finish is None and p.exitcode == 0:
                    first_finish = now
            if (now >= deadline
                    or (first_failure and now >= first_failure[1] + FAILURE_GRACE_S)
                    or (first_finish and now >= first_finish + FINISH_GRACE_S)):
                break
            time.sleep(0.02)
        stopped_at = time.monotonic()
        killed = []
        for rank, p in enumerate(procs):
            if p.exitcode is None:
                p.kill()
                killed.append(rank)
        for p in procs:
            p.join(5)
        ranks = []
        for rank, p in enumerate(procs):
            path = os.path.join(workdir, f"rank{rank}.pt")
            if os.path.exists(path):
                ranks.append(torch.load(path, weights_only=True))
            elif rank not in killed:
                ranks.append({"crashed": f"rank {rank} ended without reporting ({_exit_text(p.exitcode)}): "
                                         "it crashed or exited"})
            elif first_failure is not None:
                ranks.append({"stopped": f"rank {rank} was stopped after rank {first_failure[0]} failed "
                                         "(it was still running, probably waiting in a collective)"})
            elif stopped_at < deadline:
                ranks.append({"hung": f"rank {rank} was still running {FINISH_GRACE_S:g} s after another rank "
                                      "had finished: it waits in a collective (all_reduce, broadcast, barrier...) "
                                      "that the other ranks never called, or never returns"})
            else:
                ranks.append({"hung": f"rank {rank} timed out after {RUN_BUDGET_S:g} s: a collective never "
                                      "completed, or the code never returned"})
        return {"ranks": ranks, "seconds": round(time.monotonic() - started, 3)}
    except BaseException as exc:
        for p in procs:
            if p.exitcode is None:
                p.kill()
        return {"error": f"the process group could not be run: {type(exc).__name__}: {exc}"[:2000]}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


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
        result = _run_group(ws, run["scenario"])
        result["world_size"] = ws
        out.append(result)
        if "error" in result or any(_failed(r) for r in result["ranks"]):
            gave_up = f"the group of world size {ws} failed before it"
    return out


def _failed(rank_result: dict) -> bool:
    return any(key in rank_result for key in ("candidate_error", "crashed", "hung", "stopped", "error")) \
        or bool(rank_result.get("forbidden")) or bool(rank_result.get("tampered"))
