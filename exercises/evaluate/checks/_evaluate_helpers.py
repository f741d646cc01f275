"""Judge-side helpers for the evaluate checks: inputs, the expected loss and accuracy,
and readers for what the probes report.

Inputs are exact in float32: weights are integers in [-3, 3], inputs multiples of
1/4 in [-2, 2], and class c's bias is an integer plus c/16, so every logit is exact
whatever the order of the matmul, and two classes' logits never tie (their
fractional parts differ). The expected loss is computed in float64 from the same
logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.judge import expect_equal, expect_returned, expect_scalar

LOSS_TOL = {"atol": 1e-5, "rtol": 1e-5}
ACC_TOL = {"atol": 1e-6, "rtol": 0.0}
MODULES = ("", "lin", "drop", "block", "block.0")


def make_problem(seed: int, sizes: list[int], features: int = 3, classes: int = 3):
    """(weight, bias, batches) for a classifier with exact, tie-free logits."""
    g = torch.Generator().manual_seed(seed)
    weight = torch.randint(-3, 4, (classes, features), generator=g).float()
    bias = torch.randint(-2, 3, (classes,), generator=g).float() + torch.arange(classes).float() / 16
    batches = []
    for n in sizes:
        x = torch.randint(-8, 9, (n, features), generator=g).float() / 4
        y = torch.randint(0, classes, (n,), generator=g)
        batches.append([x, y])
    return weight, bias, batches


def expected(weight, bias, batches) -> tuple[float, float]:
    """(mean loss over samples, accuracy), in float64."""
    total, correct, seen = 0.0, 0, 0
    for x, y in batches:
        logits = x.double() @ weight.double().T + bias.double()
        total += float(F.cross_entropy(logits, y)) * len(y)
        correct += int((logits.argmax(dim=1) == y).sum())
        seen += len(y)
    return total / seen, correct / seen


def describe(sizes) -> str:
    return f"batches of sizes {list(sizes)}"


def result_of(answer: dict) -> dict:
    """The probe's account of what evaluate returned, after checking it returned a dict."""
    if answer.get("raised"):
        raised = answer["raised"]
        raise AssertionError(f"evaluate raised {raised.get('type')}: {raised.get('message')!s:.200}")
    return expect_returned(answer["result"], function="evaluate", returns='a dict {"loss": float, "accuracy": float}')


def expect_values(answer: dict, weight, bias, batches, what: str) -> None:
    """loss and accuracy close to the exact values (a float or a one-value tensor accepted here)."""
    result = result_of(answer)
    want_loss, want_acc = expected(weight, bias, batches)
    values = result["values"]
    for key in ("loss", "accuracy"):
        if key not in values:
            raise AssertionError(f"evaluate on {what}: the result has no {key!r} key (keys: {result['keys']})")
    expect_scalar(values["loss"], want_loss, name=f'evaluate(...)["loss"] on {what}', allow_tensor=True,
                  **LOSS_TOL, note="the mean over samples: sum(B_i * loss_i) / sum(B_i)")
    expect_scalar(values["accuracy"], want_acc, name=f'evaluate(...)["accuracy"] on {what}', allow_tensor=True,
                  **ACC_TOL, note="correct / number of samples, argmax over dim 1")


def expect_modes(got, want: dict, what: str) -> None:
    """Each module's training flag, by name ("" is the model), as ``want`` says."""
    named = {("model" if k == "" else f"model.{k}"): v for k, v in want.items()}
    got_named = got if not isinstance(got, dict) else {("model" if k == "" else f"model.{k}"): v for k, v in got.items()}
    expect_equal(got_named, named, name=f"each module's .training {what}")
