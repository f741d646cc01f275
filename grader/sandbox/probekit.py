"""The probe kit: what several exercises' probes need, written once. It runs INSIDE the sandbox.

Staged beside the worker (``lib/grader/sandbox/probekit.py``), so a probe imports
it as ``from grader.sandbox import probekit``. Like the worker it imports the
standard library, torch and the grader's sandbox-side modules only, and the judge
never imports anything back from the sandbox: everything here is the candidate's to
read and patch once their module is imported, so nothing here decides anything.
It builds, runs and reports; the checks judge.

What it holds:

- **reporting what the candidate gave**, one way each:
  ``returned_instead(value)``, the answer of a probe that cannot go on because the
  candidate's function returned ``value`` (the judge reads it with
  ``grader.judge.expect_returned``); ``opaque(value)``, a value the contract did
  not promise, put where the value goes (the judge receives a ``grader.wire.protocol.Opaque``:
  its type name and a capped repr, equal to nothing); ``raised(exc)``, an exception
  the probe caught (the judge reads it with ``grader.judge.expect_raised``);
  ``tensor(value)``, a tensor cloned off its graph, or ``opaque``;
- **autograd**: ``backward_grads``, the gradients of sum(out * grad_out);
- **instruments** (``grader.sandbox.instruments``, re-exported): ``Ledger``, ``attached``,
  ``Allocations`` and ``count_entries``, the one way a probe measures what the candidate's code does, kept where
  that code cannot reach it (never on an object it is handed);
- **models**: ``seeded`` (build under a fixed seed), ``load_parameters``,
  ``parameters`` / ``gradients`` (clones by name), ``RecordingSGD`` (an SGD that
  notes its calls and the gradients each step sees in a ledger);
- **process groups**: ``run_ranks`` runs one scenario on a fresh gloo group of N
  forked ranks with deadlines, ``call_candidate`` turns a candidate's exception in a
  rank into the worker's own error record.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from datetime import timedelta

import torch

from grader.wire import protocol
from grader.sandbox import forkserver, removal
# The instruments, re-exported: a probe measures with ``probekit.Ledger``, ``attached``, ``Allocations``, ``count_entries``.
from grader.sandbox.instruments import Allocations, Ledger, attached, count_entries  # noqa: F401

#: What the judge receives for a value that is not plain data: a type name and a capped repr, equal to nothing.
#: A probe that rebuilds one from those two (an answer carried back from a process it started) uses this name,
#: so that no probe imports the wire itself.
Opaque = protocol.Opaque

# ------------------------------------------------------------------ what the candidate gave


def describe(value) -> str:
    """A value in words, for a message: its type, and its length when it is a list or a tuple."""
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"a {type(value).__name__}"


def returned_instead(value) -> dict:
    """The answer of a probe that cannot go on: the candidate's function returned ``value``.

    ``grader.judge.expect_returned`` fails the check with it, naming the function
    and what the contract promises.
    """
    return {"returned": describe(value)}


def opaque(value) -> protocol.Opaque:
    """``value`` as a description in its place: the judge gets an Opaque (type name, capped repr).

    For a value that is not what the contract promised (not a tensor, a numpy number
    for a float, a dict that could pass for the probe's own records): the judge sees
    what it was, and can never mistake it for the real thing.
    """
    try:
        text = repr(value)
    except BaseException as e:  # a hostile __repr__ must not break the probe
        text = f"<repr raised {type(e).__name__}>"
    return protocol.Opaque(type(value).__name__, text[:200])


def tensor(value):
    """A tensor, detached and cloned (the judge sees its values now, never a graph); anything else ``opaque``."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    return opaque(value)


def raised(exc: BaseException) -> dict:
    """An exception a probe caught, as ``grader.judge.expect_raised`` reads it."""
    return {"type": type(exc).__name__, "qualnames": [c.__name__ for c in type(exc).__mro__],
            "message": str(exc)[:300]}


# ------------------------------------------------------------------ autograd


def backward_grads(pairs, inputs: dict) -> tuple[dict, str | None]:
    """Gradients of sum over ``pairs`` of sum(out * grad_out) with respect to each of ``inputs``.

    ``pairs``: [(out, grad_out), ...]; ``inputs``: {name: tensor}. Returns ({name:
    gradient, or None where none arrived or the input does not require grad}, why
    none arrived or None). Nothing is differentiated when an output is not a tensor
    of grad_out's shape: the judge reports the shape itself.
    """
    nothing = {name: None for name in inputs}
    if not all(isinstance(out, torch.Tensor) and out.shape == g.shape for out, g in pairs):
        return nothing, "the output is not a tensor of the expected shape"
    loss = sum((out * g.to(out.dtype)).sum() for out, g in pairs)
    if not loss.requires_grad:
        return nothing, "the output is not connected to the autograd graph"
    wanted = {n: t for n, t in inputs.items() if isinstance(t, torch.Tensor) and t.requires_grad}
    found = dict(zip(wanted, torch.autograd.grad(loss, list(wanted.values()), allow_unused=True) if wanted else ()))
    return {n: None if found.get(n) is None else found[n].detach() for n in inputs}, None


# ------------------------------------------------------------------ models


def seeded(build, *args, seed: int = 0, **kwargs):
    """``build(*args, **kwargs)`` right after ``torch.manual_seed(seed)``: the same weights every call."""
    torch.manual_seed(seed)
    return build(*args, **kwargs)


def load_parameters(model: torch.nn.Module, values: dict) -> torch.nn.Module:
    """Copy ``values`` ({name: tensor}) into the model's own parameters, in place; the model."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(values[name])
    return model


def parameters(model: torch.nn.Module) -> dict:
    """Every parameter by name, cloned (on the CPU)."""
    return {n: p.detach().to("cpu", copy=True) for n, p in model.named_parameters()}


def gradients(model: torch.nn.Module) -> dict:
    """Every parameter's .grad by name, cloned (on the CPU); None where it has none."""
    return {n: None if p.grad is None else p.grad.detach().to("cpu", copy=True) for n, p in model.named_parameters()}


class RecordingSGD:
    """SGD with momentum, updating like torch.optim.SGD, that notes its zero_grad/step calls in ``ledger``
    (``ledger.events``) and keeps the gradients each step saw (``ledger.kept["step_grads"]``, CPU copies).

    Nothing it records lives on the optimizer, which the candidate gets: it finds its ledger, and what to
    call a step (``step_event``), by its own identity (``instruments.attached``). Written out rather than
    subclassing torch.optim.SGD: constructing a torch optimizer loads torch's compiler machinery, which
    costs seconds in every grading. It has what callers use of an optimizer (``param_groups``, ``state``,
    ``zero_grad``, ``step``), which is all a GradScaler needs too.
    """

    def __init__(self, model: torch.nn.Module, lr: float, momentum: float = 0.0, *, ledger: Ledger,
                 step_event=lambda: "step"):
        self._named = list(model.named_parameters())
        self.param_groups = [{"params": [p for _, p in self._named], "lr": lr, "momentum": momentum}]
        self.state: dict = {}
        ledger.attach(self, step_event)

    def zero_grad(self, set_to_none: bool = True) -> None:
        found = attached(self)
        if found is not None:
            found[0].note("zero_grad")
        for _, p in self._named:
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    @torch.no_grad()
    def step(self, closure=None) -> None:
        found = attached(self)
        if found is not None:
            ledger, step_event = found
            ledger.note(step_event())
            ledger.keep("step_grads", {n: None if p.grad is None else p.grad.detach().to("cpu", copy=True)
                                       for n, p in self._named})
        group = self.param_groups[0]
        for _, p in self._named:
            if p.grad is None:
                continue
            d_p = p.grad
            if group["momentum"]:
                buf = self.state.get(p)
                buf = d_p.clone() if buf is None else buf.mul_(group["momentum"]).add_(d_p)
                self.state[p] = buf
                d_p = buf
            p.add_(d_p, alpha=-group["lr"])


# ------------------------------------------------------------------ process groups


class CandidateFailed(Exception):
    """Candidate code raised in a rank; ``error`` is the worker's record of it (type, message, traceback)."""

    def __init__(self, error: dict):
        super().__init__(error.get("message", ""))
        self.error = error


def call_candidate(module, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` (candidate code from ``module``).

    An exception becomes :class:`CandidateFailed` holding the worker's error record,
    its traceback kept to the frames of the candidate's file: in a rank, where the
    worker's own handling does not reach, the judge still gets the error it would
    have got from the worker.
    """
    from grader.sandbox.worker import _error

    try:
        return fn(*args, **kwargs)
    except BaseException as exc:  # SystemExit from candidate code too
        raise CandidateFailed(_error(exc, (os.path.dirname(os.path.abspath(module.__file__)),))) from None


#: Timeout of a process group: rendezvous and every collective.
GROUP_TIMEOUT_S = 5.0
#: Wall clock for one group, from the first fork to the last result.
RUN_BUDGET_S = 10.0
#: Once one rank has failed, how long the others get to report before they are killed.
FAILURE_GRACE_S = 1.0
#: Once some ranks have finished, how long the others get: every rank does the same small
#: amount of work, so one still running long after its peers waits in a collective they never joined.
FINISH_GRACE_S = 3.0

_CONTEXT = None
#: Where a rank's result carries the forbidden APIs it recorded (taken out before the probe sees it).
_RANK_HITS = "grader_forbidden_hits"


def _context():
    """A forkserver context whose server has torch imported: ranks start in milliseconds."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = forkserver.context()
    return _CONTEXT


def _rank_main(rank: int, world_size: int, workdir: str, rank_fn) -> None:
    """One rank: join the group, run ``rank_fn``, write the result file, leave without teardown."""
    import torch.distributed as dist

    result: dict = {}
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
        result = rank_fn(scenario, rank, world_size)
    except CandidateFailed as failed:
        result = {"candidate_error": failed.error, "failed_at": time.time()}
    except BaseException as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
    # This rank removed the forbidden APIs itself (the worker's module, imported as __mp_main__ first);
    # what it recorded goes back to the worker, which reports it with the call.
    if isinstance(result, dict):
        result[_RANK_HITS] = removal.take_hits()
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


def run_ranks(world_size: int, scenario: dict, rank_fn) -> dict:
    """Run ``rank_fn(scenario, rank, world_size)`` in each rank of a fresh gloo group.

    Each rank is a process forked from a forkserver that has torch imported (about
    0.2 s per group); ranks meet through a file store in a private temporary folder
    (the sandbox has loopback only), read ``scenario`` (plain data and tensors) from a
    file and write their result to one: nothing crosses between processes as a
    pickled tensor. ``rank_fn`` must be importable by name (module-level in probes.py).
    Each rank removes the exercise's forbidden APIs before it imports ``rank_fn`` (and
    so the candidate's module), and what it recorded is recorded in the worker too.

    Nothing may hang: the group's own timeout bounds every collective; the ranks
    still running are killed FAILURE_GRACE_S after one failed, FINISH_GRACE_S after
    one finished cleanly (they all do the same small amount of work, so a rank still
    running then waits in a collective its peers never joined) or RUN_BUDGET_S after
    the start. Returns {"ranks": [one result per rank], "seconds"}, or {"error": text}
    when the group could not be run. A rank's result is what ``rank_fn`` returned, or
    {"candidate_error": record, "failed_at": time} (candidate code raised, see
    :func:`call_candidate`), {"error": text} (the probe's own failure, e.g. the group
    could not form), {"crashed": text}, {"hung": text} or {"stopped": text} (killed
    after another rank failed).
    """
    ctx = _context()
    workdir = tempfile.mkdtemp(prefix="probekit-ranks-")
    procs = []
    try:
        torch.save(scenario, os.path.join(workdir, "scenario.pt"))
        # The ranks take sys.path from the worker, where `probes` and the candidate's module import by name.
        for rank in range(world_size):
            p = ctx.Process(target=_rank_main, args=(rank, world_size, workdir, rank_fn),
                            name=f"rank-{rank}", daemon=True)
            p.start()
            procs.append(p)
        started = time.monotonic()
        deadline = started + RUN_BUDGET_S
        first_failure = None  # (rank, when)
        first_finish = None  # when the first rank finished cleanly
        while any(p.exitcode is None for p in procs):
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
                removal.record_hits(ranks[-1].pop(_RANK_HITS, []) if isinstance(ranks[-1], dict) else [])
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
