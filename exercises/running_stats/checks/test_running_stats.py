"""Checks for RunningNorm(num_features, momentum=0.1, eps=1e-5), against nn.BatchNorm1d."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from _running_stats_helpers import (
    STATS,
    TOL,
    Case,
    cases,
    check_out,
    check_stat,
    check_stats,
    check_state_dict,
    drive,
    reference,
    train_steps,
    with_defaults,
)
from grader.judge import candidate_raises, expect_close, expect_tensor


# ------------------------------------------------------------------ what it holds


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "weight and bias are nn.Parameters; running_mean, running_var and num_batches_tracked are "
    "registered with register_buffer, so parameters() does not return them."
)
def test_parameters_and_buffers(sandbox):
    """weight, bias are the only parameters; the running statistics are buffers"""
    report = sandbox.call("describe", 3)
    if not report["is_module"]:
        raise AssertionError("RunningNorm must be an nn.Module")
    params = sorted([n, s] for n, s, _ in report["parameters"])
    if params != [["bias", [3]], ["weight", [3]]]:
        raise AssertionError(f"RunningNorm(3).named_parameters() must be exactly weight (3,) and bias (3,), "
                             f"got {params}")
    if not all(rg for _, _, rg in report["parameters"]):
        raise AssertionError("weight and bias must require grad")
    buffers = sorted([n, s, d] for n, s, d in report["buffers"])
    want = [["num_batches_tracked", [], "torch.int64"], ["running_mean", [3], "torch.float32"],
            ["running_var", [3], "torch.float32"]]
    if buffers != want:
        raise AssertionError(f"RunningNorm(3).named_buffers() must be exactly {want} (name, shape, dtype), "
                             f"got {buffers}")
    expect_close(expect_tensor(report["weight"], shape=(3,), name="weight"), torch.ones(3), "initial weight")
    expect_close(expect_tensor(report["bias"], shape=(3,), name="bias"), torch.zeros(3), "initial bias")
    fresh = reference(Case(3, ()), [])["state_dict"]
    for name in STATS:
        check_stat(report["stats"][name], fresh[name], name, "before any forward")


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "Buffers are saved: state_dict() must hold weight, bias, running_mean, running_var and "
    "num_batches_tracked, with BatchNorm1d's shapes, dtypes and initial values."
)
def test_state_dict_like_batchnorm(sandbox):
    """state_dict(): BatchNorm1d's keys, shapes, dtypes and initial values"""
    for features in (1, 4):
        report = sandbox.call("describe", features, {"momentum": 0.3, "eps": 1e-3})
        want = reference(Case(features, ()), [])["state_dict"]
        check_state_dict(report["state_dict"], want, f"a new RunningNorm({features})")


# -------------------------------------------------------------------------- train


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint(
    "In train mode normalise each column with the batch's own mean and biased (divide by N) "
    "variance: (x - mean) / sqrt(var + eps) * weight + bias."
)
@given(case=cases())
@example(case=Case(3, (4,), eps=1e-5, seed=1))
@example(case=Case(2, (2, 5), momentum=0.3, eps=1.0, seed=2))
@example(case=with_defaults(3, (4, 3), seed=12))
def test_train_forward(sandbox, case):
    """Train mode: output normalised with the batch statistics (biased variance, eps, 1e-5 by default, weight, bias)"""
    weight, bias, xs, _ = case.data()
    got, want = drive(sandbox, case, train_steps(xs), weight=weight, bias=bias)
    for i, (g, w) in enumerate(zip(got["steps"], want["steps"])):
        check_out(g, w, f"{case.describe()}: train step {i}")


@pytest.mark.points(3)
@given(case=cases(max_steps=4))
@example(case=Case(3, (2, 3, 5), momentum=0.3, seed=3))
@example(case=Case(1, (2, 2), momentum=1.0, seed=4))
@example(case=with_defaults(3, (4, 3, 5), seed=13))
def test_running_statistics_update(sandbox, case):
    """Train mode: running = (1 - momentum) * running + momentum * batch stat (unbiased var; momentum 0.1 by default)"""
    weight, bias, xs, _ = case.data()
    got, want = drive(sandbox, case, train_steps(xs), weight=weight, bias=bias)
    for i, (g, w) in enumerate(zip(got["steps"], want["steps"])):
        check_stats(g, w, f"{case.describe()}: after train step {i}", names=("running_mean", "running_var"))


@pytest.mark.points(1)
def test_num_batches_tracked(sandbox):
    """num_batches_tracked: an int64 scalar that counts train-mode forwards only"""
    case = Case(2, (3, 4, 2), seed=5)
    _, _, xs, g = case.data()
    x_eval = torch.randn(3, 2, generator=g)
    steps = [["train", xs[0], None], ["train", xs[1], None], ["eval", x_eval, None], ["train", xs[2], None]]
    got, want = drive(sandbox, case, steps)
    for i, (gs, ws) in enumerate(zip(got["steps"], want["steps"])):
        check_stat(gs["stats"]["num_batches_tracked"], ws["stats"]["num_batches_tracked"],
                   "num_batches_tracked", f"after train, train, eval, train: step {i} ({steps[i][0]})")


@pytest.mark.points(2)
@given(case=cases())
@example(case=Case(3, (4, 4), momentum=0.3, seed=6))
def test_gradients_through_batch_statistics(sandbox, case):
    """Train mode: gradients of x, weight and bias as BatchNorm1d's (through the batch mean and variance)"""
    weight, bias, xs, g = case.data()
    steps = [["train", x, torch.randn(x.shape, generator=g)] for x in xs]
    got, want = drive(sandbox, case, steps, weight=weight, bias=bias)
    for i, (gs, ws) in enumerate(zip(got["steps"], want["steps"])):
        for name, expected in ws["grads"].items():
            value = (gs["grads"] or {}).get(name)
            if value is None:
                raise AssertionError(f"{case.describe()}, train step {i}: no gradient reached {name}")
            value = expect_tensor(value, shape=tuple(expected.shape), dtype=expected.dtype,
                                  name=f"gradient of {name}")
            expect_close(value, expected, f"{case.describe()}, train step {i}: gradient of {name}", tol=TOL)


@pytest.mark.points(1)
def test_training_batch_of_one_raises(sandbox):
    """Train mode with a batch of one row raises ValueError (no variance to estimate)"""
    with candidate_raises("ValueError", what="a train-mode forward on a batch of 1 row"):
        sandbox.call("drive", 3, {}, [["train", torch.randn(1, 3), None]])


# --------------------------------------------------------------------------- eval


@pytest.mark.points(2)
@given(case=cases(), rows=st.integers(1, 4))
@example(case=Case(3, (4, 3), momentum=0.3, eps=0.1, seed=7), rows=1)
def test_eval_uses_running_stats(sandbox, case, rows):
    """Eval mode: output normalised with the running statistics (a single row works)"""
    weight, bias, xs, g = case.data()
    x_eval = torch.randn(rows, case.features, generator=g) * 2 + 1
    steps = train_steps(xs) + [["eval", x_eval, None]]
    got, want = drive(sandbox, case, steps, weight=weight, bias=bias)
    check_out(got["steps"][-1], want["steps"][-1], f"{case.describe()}, then eval on {rows} row(s)")


@pytest.mark.points(2)
def test_no_update_in_eval(sandbox):
    """Eval mode leaves running_mean, running_var and num_batches_tracked unchanged"""
    case = Case(3, (4, 2), momentum=0.3, seed=8)
    weight, bias, xs, g = case.data()
    evals = [torch.randn(n, 3, generator=g) * 3 - 2 for n in (5, 2)]
    scenarios = {
        "eval forwards on a new module": [["eval", x, None] for x in evals],
        "two train steps, then eval forwards": train_steps(xs) + [["eval", x, None] for x in evals],
    }
    for what, steps in scenarios.items():
        got, want = drive(sandbox, case, steps, weight=weight, bias=bias)
        for i, (gs, ws) in enumerate(zip(got["steps"], want["steps"])):
            check_stats(gs, ws, f"{what}: after step {i} ({steps[i][0]})")


# ------------------------------------------------------------ buffers: to, graphs, saving


@pytest.mark.points(2)
def test_follows_to_dtype(sandbox):
    """.to(torch.float64) converts the running statistics too; the module then computes in float64"""
    case = Case(3, (4, 3), momentum=0.3, eps=1e-3, seed=9)
    weight, bias, xs, g = case.data(torch.float64)
    steps = train_steps(xs) + [["eval", torch.randn(2, 3, generator=g, dtype=torch.float64), None]]
    got, want = drive(sandbox, case, steps, weight=weight, bias=bias, dtype=torch.float64)
    for i, (gs, ws) in enumerate(zip(got["steps"], want["steps"])):
        where = f"after RunningNorm(3).to(torch.float64), step {i} ({steps[i][0]})"
        check_stats(gs, ws, where)
        check_out(gs, ws, where)


@pytest.mark.points(2)
def test_statistics_carry_no_graph(sandbox):
    """Updating the running statistics builds no autograd graph (they never require grad)"""
    case = Case(3, (4,), seed=10)
    weight, bias, xs, g = case.data()
    x_eval = torch.randn(2, 3, generator=g)
    steps = [["train", xs[0], torch.randn(4, 3, generator=g)], ["eval", x_eval, torch.randn(2, 3, generator=g)]]
    got, want = drive(sandbox, case, steps, weight=weight, bias=bias)
    for i, step in enumerate(got["steps"]):
        for name in STATS:
            stat = step["stats"][name]
            if stat["requires_grad"] or stat["grad_fn"] is not None:
                raise AssertionError(
                    f"after a train-mode forward and backward ({steps[i][0]} step {i}), {name} requires "
                    f"grad (grad_fn {stat['grad_fn']}): update the running statistics under torch.no_grad() "
                    f"or from detached values"
                )
    expect_close(expect_tensor(got["steps"][1]["grads"]["x"], shape=(2, 3), name="gradient of x"),
                 want["steps"][1]["grads"]["x"], "eval mode: gradient of x", tol=TOL)
    if sorted(got["parameters"]) != ["bias", "weight"]:
        raise AssertionError(f"after training, parameters() must still be weight and bias only, got {got['parameters']}")


@pytest.mark.points(2)
def test_load_state_dict_round_trip(sandbox):
    """state_dict() then load_state_dict(strict=True) restores the statistics; BatchNorm1d's loads too"""
    case = Case(3, (4, 5, 3), momentum=0.3, eps=1e-3, seed=11)
    weight, bias, xs, g = case.data()
    x_eval = torch.randn(3, 3, generator=g)
    trained, want = drive(sandbox, case, train_steps(xs), weight=weight, bias=bias)
    check_state_dict(trained["state_dict"], want["state_dict"], f"{case.describe()}: after training")
    eval_step = [["eval", x_eval, None]]
    expected = reference(case, eval_step, load=want["state_dict"])["steps"][0]
    sources = {"its own state_dict": trained["state_dict"], "BatchNorm1d's state_dict": want["state_dict"]}
    for what, state in sources.items():
        got = sandbox.call("drive", case.features, case.kwargs, eval_step, load=state)
        where = f"a new RunningNorm(3) after load_state_dict({what} after training, strict=True), in eval"
        check_stats(got["steps"][0], expected, where)
        check_out(got["steps"][0], expected, where)
