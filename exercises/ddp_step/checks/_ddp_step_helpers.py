"""Judge-side helpers for the ddp_step checks: scenarios, references, calls.

Everything here runs in the trusted judge. The truth for shard_indices comes
from PyTorch's own DistributedSampler; the truth for a data-parallel step is
one ordinary single-process step (plain torch) on the concatenation of every
rank's shard, from the same initial state the ranks were given.

The DDP scenarios are fixed (generated from fixed seeds): each costs a process
group per world size, so hypothesis, which would replay and shrink them, is
kept for shard_indices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor
from torch.utils.data import DistributedSampler

from grader.judge import CandidateError, ProtocolViolation, Tolerance, expect_close, expect_returned, expect_tensor
from shared import LOSSES, build, make_optimizer

#: A correct float32 implementation is far inside this for these sizes (values
#: O(1), at most 4 ranks of 4 samples, 3 steps: rounding error ~1e-7); a gradient
#: summed instead of averaged, or a stale one, is off by ~1e-2.
TOL = Tolerance(atol=1e-5, rtol=1e-5)

#: (world size, samples per rank) for the DDP checks: every world size 1 to 4,
#: shards of 1 to 4 samples (shards are equal in size by contract).
WORLDS = ((1, 4), (2, 3), (3, 1), (4, 2))

PARAM_NAMES = ("body.weight", "body.bias", "head.weight", "head.bias", "scale", "spare")


def initial_params(dims, g: torch.Generator) -> dict[str, Tensor]:
    d_in, hidden, d_out = dims
    return {
        "body.weight": 0.7 * torch.randn(hidden, d_in, generator=g),
        "body.bias": 0.3 * torch.randn(hidden, generator=g),
        "head.weight": 0.7 * torch.randn(d_out, hidden, generator=g),
        "head.bias": 0.3 * torch.randn(d_out, generator=g),
        "scale": 1.0 + 0.2 * torch.randn((), generator=g),
        "spare": torch.randn(2, generator=g),
    }


# ------------------------------------------------------------------ scenarios


def average_scenario(world_size: int, *, seed: int, none: tuple[str, ...] = (), frozen: tuple[str, ...] = ()) -> dict:
    """average_gradients: a different gradient per rank; ``none`` (and ``frozen``) get None on every rank."""
    g = torch.Generator().manual_seed(seed)
    dims = (3, 4, 2)
    params = initial_params(dims, g)
    grads = []
    for _ in range(world_size):
        grads.append({n: None if n in none or n in frozen else torch.randn(t.shape, generator=g)
                      for n, t in params.items()})
    return {"kind": "average", "dims": list(dims), "params": params, "grads": grads, "frozen": list(frozen)}


def train_scenario(world_size: int, per_rank: int, *, seed: int, steps: int = 1, optimizer: dict | None = None,
                   loss: str = "mse", frozen: tuple[str, ...] = (), stale: bool = False) -> dict:
    """train_step: ``steps`` calls in a row, each rank on its own shard of ``per_rank`` samples."""
    g = torch.Generator().manual_seed(seed)
    dims = (3, 5, 3)
    d_in, _, d_out = dims
    params = initial_params(dims, g)
    plan = []
    for _ in range(steps):
        inputs = [torch.randn(per_rank, d_in, generator=g) for _ in range(world_size)]
        if loss == "mse":
            targets = [torch.randn(per_rank, d_out, generator=g) for _ in range(world_size)]
        else:
            targets = [torch.randint(0, d_out, (per_rank,), generator=g) for _ in range(world_size)]
        plan.append({"inputs": inputs, "targets": targets})
    scenario = {
        "kind": "train", "dims": list(dims), "params": params, "frozen": list(frozen), "loss": loss,
        "optimizer": optimizer or {"name": "sgd", "lr": 0.1}, "steps": plan,
    }
    if stale:  # gradients left over from earlier work, on every parameter that has one in training
        scenario["stale_grads"] = [
            {n: 5.0 * torch.randn(t.shape, generator=g) for n, t in params.items() if n not in frozen and n != "spare"}
            for _ in range(world_size)
        ]
    return scenario


# ------------------------------------------------------------------ references


@dataclass
class Expected:
    params: dict[str, Tensor]
    grads: dict[str, Tensor | None]
    losses: list[float] = field(default_factory=list)


def single_process(scenario: dict) -> Expected:
    """One ordinary training run on all shards concatenated, from the scenario's initial state."""
    torch.manual_seed(0)
    model = build(scenario)
    optimizer = make_optimizer(scenario["optimizer"], model.parameters())
    loss_fn = LOSSES[scenario["loss"]]()
    losses = []
    for step in scenario["steps"]:
        optimizer.zero_grad()
        loss = loss_fn(model(torch.cat(step["inputs"])), torch.cat(step["targets"]))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return Expected(
        params={n: p.detach().clone() for n, p in model.named_parameters()},
        grads={n: None if p.grad is None else p.grad.detach().clone() for n, p in model.named_parameters()},
        losses=losses,
    )


def mean_gradients(scenario: dict) -> dict[str, Tensor | None]:
    """What average_gradients must leave: the mean over ranks, None where every rank has None."""
    out = {}
    for name in PARAM_NAMES:
        per_rank = [grads[name] for grads in scenario["grads"]]
        out[name] = None if per_rank[0] is None else torch.stack(per_rank).mean(0)
    return out


def sampler_shards(num_samples: int, world_size: int, *, shuffle: bool = True, seed: int = 0,
                   epoch: int = 0) -> list[list[int]]:
    """Every rank's indices, from torch.utils.data.DistributedSampler itself (drop_last=False)."""
    shards = []
    for rank in range(world_size):
        sampler = DistributedSampler(range(num_samples), num_replicas=world_size, rank=rank,
                                     shuffle=shuffle, seed=seed, drop_last=False)
        sampler.set_epoch(epoch)
        shards.append(list(sampler))
    return shards


# ------------------------------------------------------------------ calls


def shard_all(sandbox, num_samples: int, world_size: int, settings: list[dict]) -> list[list[list[int]]]:
    """The candidate's shards: [settings entry][rank] -> indices, each a list of ints."""
    result = sandbox.call("shard_all", num_samples, world_size, settings)
    if not isinstance(result, dict) or not isinstance(result.get("results"), list):
        raise AssertionError(f"probe shard_all returned {result!r}, expected a dict")
    out = []
    for options, per_rank in zip(settings, result["results"]):
        shards = []
        for rank, report in enumerate(per_rank):
            expect_returned(report, function=f"shard_indices({num_samples}, {rank}, {world_size}{_kw(options)})",
                            returns="a list of ints")
            shards.append(report["indices"])
        out.append(shards)
    return out


def _kw(options: dict) -> str:
    return "".join(f", {k}={v!r}" for k, v in options.items())


def compare_shards(num_samples: int, world_size: int, options: dict, got: list[list[int]],
                   expected: list[list[int]]) -> None:
    for rank, (mine, truth) in enumerate(zip(got, expected)):
        if mine != truth:
            call = f"shard_indices({num_samples}, {rank}, {world_size}{_kw(options)})"
            raise AssertionError(
                f"{call} returned {_short(mine)}; DistributedSampler gives {_short(truth)}"
            )


def _short(indices: list[int], limit: int = 24) -> str:
    if len(indices) <= limit:
        return str(indices)
    return f"[{', '.join(map(str, indices[:limit]))}, ...] ({len(indices)} indices)"


@dataclass
class RankState:
    rank: int
    params: dict[str, Tensor]
    grads: dict[str, Tensor | None]
    losses: list[dict]


def ddp_run(sandbox, runs: list[tuple[int, dict]]) -> dict[int, list[RankState]]:
    """Run each (world_size, scenario) on its own process group; every rank's state by world size.

    Fails the check, naming the world size and rank, when a rank
    raised (reported as the candidate's error; a forbidden API raises), crashed, hung or
    was stopped; or when a rank's tensors are not plain tensors of the right
    shape, dtype and finite.
    """
    result = sandbox.call("ddp_run", [{"world_size": ws, "scenario": sc} for ws, sc in runs])
    if not isinstance(result, list) or len(result) != len(runs):
        raise AssertionError(f"probe ddp_run returned {type(result).__name__}, expected one entry per run")
    states = {}
    for (ws, scenario), run in zip(runs, result):
        where = f"world size {ws}"
        if "error" in run:
            raise AssertionError(f"{where}: {run['error']}")
        ranks = run["ranks"]
        _raise_first_failure(ranks, where)
        states[ws] = [_rank_state(rank, ws, report, scenario) for rank, report in enumerate(ranks)]
    return states


#: How a rank can fail, most telling first: a crash or the candidate's own exception is
#: the cause; a rank left waiting (hung, stopped) or a peer's broken connection the effect.
_FATES = ("crashed", "candidate_error", "hung", "error", "stopped")


def _raise_first_failure(ranks: list[dict], where: str) -> None:
    failed = [(rank, report) for rank, report in enumerate(ranks) if any(k in report for k in _FATES)]
    if not failed:
        return

    def cause(item):
        rank, report = item
        fate = next(k for k in _FATES if k in report)
        # Among exceptions, the earliest is the cause: a peer's "connection closed" comes after.
        return _FATES.index(fate), report.get("failed_at", 0.0), rank

    rank, report = min(failed, key=cause)
    others = [f"rank {r}: {_fate_text(rep)}" for r, rep in enumerate(ranks) if r != rank and
              any(k in rep for k in _FATES)]
    context = f"rank {rank}, {where}" + (f"; {'; '.join(others)}" if others else "")
    if "candidate_error" in report:
        error = CandidateError("ddp_run", report["candidate_error"]).record  # validated: forged is a protocol failure
        raise CandidateError("ddp_run", error.model_copy(update={"message": f"{error.message} ({context})"}))
    fate = next(k for k in _FATES if k in report)
    raise AssertionError(f"{where}: {report[fate]}" + (f" ({'; '.join(others)})" if others else ""))


def _fate_text(report: dict) -> str:
    if "candidate_error" in report:
        try:
            error = CandidateError("ddp_run", report["candidate_error"])
        except ProtocolViolation as e:
            return f"sent a malformed error record ({e})"
        return f"raised {error.type_name}: {error.message[:120]}"
    fate = next(k for k in _FATES if k in report)
    return {"crashed": "crashed", "hung": "hung", "stopped": "stopped while waiting", "error": "failed"}[fate]


def _rank_state(rank: int, ws: int, report: dict, scenario: dict) -> RankState:
    params, grads = {}, {}
    for name, initial in scenario["params"].items():
        label = f"{name} (rank {rank}, world size {ws})"
        params[name] = expect_tensor(report["params"][name], shape=initial.shape, dtype=initial.dtype,
                                     name=f"parameter {label}")
        g = report["grads"][name]
        grads[name] = None if g is None else expect_tensor(g, shape=initial.shape, dtype=initial.dtype,
                                                           name=f"gradient of {label}")
    return RankState(rank, params, grads, report.get("losses") or [])


def same_on_every_rank(states: list[RankState], ws: int, *, kind: str = "params") -> None:
    """Every rank holds what rank 0 holds (within rounding)."""
    first = states[0]
    for state in states[1:]:
        for name in PARAM_NAMES:
            a, b = getattr(state, kind)[name], getattr(first, kind)[name]
            if (a is None) != (b is None):
                raise AssertionError(f"world size {ws}: the gradient of {name} is None on one rank and not on another")
            if a is not None:
                expect_close(a, b, f"world size {ws}: {name} on rank {state.rank} differs from rank 0 "
                                   f"(the ranks are out of sync)", tol=TOL)
