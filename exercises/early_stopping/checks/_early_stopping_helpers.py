"""Judge-side helpers for the early_stopping checks: a reference model of the contract,
strategies for metric sequences, and comparisons of what the sandbox reports.

Metrics are multiples of 1/8 in [-2, 2] (or NaN) and min_delta a multiple of 1/8
in [0, 1/2]: every value, sum and difference involved is exact in binary, so each
comparison comes out the same however a correct implementation writes the
inequality (metric < best - min_delta, metric + min_delta < best, best - metric >
min_delta, ...), ties included.

The file name is exercise-specific so that it never clashes with another
exercise's helpers in one judge process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

from grader.judge import Opaque

NAN = float("nan")

#: The state_dict of the probes' model, nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).
MODEL_STATE = {
    "0.weight": ((2, 3), torch.float32),
    "0.bias": ((2,), torch.float32),
    "1.weight": ((2,), torch.float32),
    "1.bias": ((2,), torch.float32),
    "1.running_mean": ((2,), torch.float32),
    "1.running_var": ((2,), torch.float32),
    "1.num_batches_tracked": ((), torch.int64),
}


# ------------------------------------------------------------------------ reference


@dataclass
class Reference:
    """The contract, line by line."""

    patience: int = 5
    min_delta: float = 0.0
    mode: str = "min"
    best: float = field(init=False)
    best_step: int = field(default=-1, init=False)
    counter: int = field(default=0, init=False)
    should_stop: bool = field(default=False, init=False)
    steps: int = field(default=0, init=False)

    def __post_init__(self):
        self.best = math.inf if self.mode == "min" else -math.inf

    def improves(self, metric: float) -> bool:
        if math.isnan(metric):
            return False
        if self.mode == "min":
            return metric < self.best - self.min_delta  # nan-safe: the reference, on the judge's own metrics
        return metric > self.best + self.min_delta

    def step(self, metric: float) -> bool:
        if self.improves(metric):
            self.best, self.best_step, self.counter = metric, self.steps, 0
        else:
            self.counter += 1
        self.steps += 1
        self.should_stop = self.counter >= self.patience
        return self.should_stop

    def state(self) -> dict:
        return {"best": self.best, "best_step": self.best_step, "counter": self.counter,
                "should_stop": self.should_stop}


def reference_trace(kwargs: dict, metrics: list[float]) -> tuple[dict, list[dict]]:
    ref = Reference(**kwargs)
    initial = ref.state()
    steps = []
    for m in metrics:
        returned = ref.step(m)
        steps.append({"returned": returned, **ref.state()})
    return initial, steps


# ----------------------------------------------------------------------- strategies

#: A metric: NaN one time in eight, else a multiple of 1/8 in [-2, 2].
metrics = st.tuples(st.integers(0, 7), st.integers(-16, 16)).map(
    lambda t: NAN if t[0] == 0 else t[1] / 8
)
metric_lists = st.lists(metrics, min_size=1, max_size=16)
min_deltas = st.integers(0, 4).map(lambda k: k / 8)
patiences = st.integers(1, 4)


def describe(kwargs: dict, metrics: list[float]) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return f"EarlyStopping({args}) stepped with {metrics}"


# ---------------------------------------------------------------------- comparisons

_KINDS = {
    "best": ((float, int), "a float"),
    "best_step": ((int,), "an int"),
    "counter": ((int,), "an int"),
    "should_stop": ((bool,), "a bool"),
    "returned": ((bool,), "a bool"),
}


def _same(name: str, got, want) -> bool:
    types, _ = _KINDS[name]
    if isinstance(got, bool) and bool not in types:
        return False
    if not isinstance(got, types):
        return False
    if name == "best":
        return float(got) == want  # best is never NaN
    return got == want


#: An attribute the probe found missing on the candidate's object (it leaves it out of the state).
_MISSING = Opaque("missing attribute", "not set on the object")


def _shown(value) -> str:
    if isinstance(value, Opaque):  # what the probe could not send as it is
        return f"a {value.type_name} ({value.repr:.80})"
    return repr(value)


def compare_state(got: dict, want: dict, where: str, context: str) -> None:
    for name, expected in want.items():
        value = got.get(name, _MISSING)
        if not _same(name, value, expected):
            kind = _KINDS[name][1]
            what = "step() returned" if name == "returned" else name
            raise AssertionError(
                f"{where}: {what} is {_shown(value)}, expected {expected!r} ({kind}); {context}"
            )


def compare_trace(result: dict, kwargs: dict, metrics: list[float]) -> None:
    """Compare the probe's trace with the reference's, attribute by attribute and step by step."""
    initial, steps = reference_trace(kwargs, metrics)
    context = describe(kwargs, metrics)
    compare_state(result["initial"], initial, "before any step", context)
    got_steps = result["steps"]
    for i, (got, want) in enumerate(zip(got_steps, steps)):
        compare_state(got, want, f"after step {i} (metric {metrics[i]!r})", context)


# ------------------------------------------------------------------------- weights


def random_weights(g: torch.Generator) -> dict:
    """Values for every entry of the probes' model's state_dict, distinct from step to step."""
    out = {}
    for name, (shape, dtype) in MODEL_STATE.items():
        if dtype == torch.int64:
            out[name] = torch.randint(0, 1000, shape, generator=g)
        elif name.endswith("running_var"):
            out[name] = torch.rand(shape, generator=g) + 0.5
        else:
            out[name] = torch.randn(shape, generator=g)
    return out
