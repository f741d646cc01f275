"""Judge-side helpers for the dynamic_batcher checks: the contract as a simulation, the
schedules hypothesis draws, and comparisons of the probe's log with the simulation.

Times are multiples of 1/4 (and max_wait too), so ``now - arrival >= max_wait`` and
``now >= arrival + max_wait`` agree exactly, ties included. Inputs are integers in
[-4, 4] and the model (shared.py) has integer weights: every output is exact, so a
request's result is the same alone or inside any batch.

The file name is exercise-specific so that it never clashes with another exercise's
helpers in one judge process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

from grader.judge import Opaque, call, expect_bounded, expect_close, expect_equal, expect_raised, expect_tensor
from shared import FEATURES, OUTPUTS, build_model

_MODEL = build_model()


def model_output(x: torch.Tensor) -> torch.Tensor:
    """What the served model gives for x (the judge's own copy of it)."""
    with torch.no_grad():
        return _MODEL(x)


def request(seed: int, rows: int) -> torch.Tensor:
    """A request's x: rows x FEATURES integers in [-4, 4], as float32."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-4, 5, (rows, FEATURES), generator=g).to(torch.float32)


def submit(now: float, x: torch.Tensor) -> list:
    return ["submit", now, x]


def poll(now: float) -> list:
    return ["poll", now]


# --------------------------------------------------------------------- the contract


@dataclass
class Simulation:
    """The contract, rule by rule: what each op must give."""

    max_batch: int
    max_wait: float
    queue: list = field(default_factory=list)  # [ticket, rows, arrival], oldest first
    next_ticket: int = 0
    clock: float | None = None

    def submit(self, x: torch.Tensor, now: float) -> dict:
        rows = int(x.shape[0])
        if rows < 1 or rows > self.max_batch:
            return {"raises": "max_batch" if rows else None}
        if self.clock is not None and now < self.clock:  # nan-safe: the judge's own times
            return {"raises": "now"}
        self.clock = now
        ticket = self.next_ticket
        self.next_ticket += 1
        self.queue.append([ticket, rows, now])
        return {"ticket": ticket}

    def _due(self, now: float) -> bool:
        if not self.queue:
            return False
        waiting = sum(rows for _, rows, _ in self.queue)
        return waiting >= self.max_batch or now - self.queue[0][2] >= self.max_wait  # nan-safe: judge's times

    def poll(self, now: float) -> dict:
        if self.clock is not None and now < self.clock:  # nan-safe: the judge's own times
            return {"raises": "now"}
        self.clock = now
        batches = []
        while self._due(now):
            batch, rows = [], 0
            while self.queue and rows + self.queue[0][1] <= self.max_batch:
                ticket, r, _ = self.queue.pop(0)
                batch.append(ticket)
                rows += r
            batches.append(batch)
        return {"batches": batches}


def simulate(max_batch: int, max_wait: float, schedule: list) -> list[dict]:
    sim = Simulation(max_batch, max_wait)
    return [sim.submit(op[2], op[1]) if op[0] == "submit" else sim.poll(op[1]) for op in schedule]


# ----------------------------------------------------------------------- strategies


@st.composite
def scenarios(draw, max_rows: int | None = None, drain: bool = True):
    """(max_batch, max_wait, schedule): submits of 1..max_batch rows and polls, time moving
    forward in steps of 0 to 1.5; with ``drain``, a last poll at which every request is due."""
    max_batch = draw(st.integers(1, 5))
    max_wait = draw(st.integers(0, 8)) / 4
    top = max_batch if max_rows is None else min(max_rows, max_batch)
    seed = draw(st.integers(0, 2**16))
    now = 0.0
    schedule = []
    for i in range(draw(st.integers(1, 14))):
        now += draw(st.integers(0, 6)) / 4
        if draw(st.booleans()):
            schedule.append(submit(now, request(seed + i, draw(st.integers(1, top)))))
        else:
            schedule.append(poll(now))
    if drain:
        schedule.append(poll(now + max_wait))
    return max_batch, max_wait, schedule


# ---------------------------------------------------------------------- describing


def describe_op(op: list) -> str:
    if op[0] == "submit":
        return f"submit(x with {int(op[2].shape[0])} rows, now={op[1]})"
    return f"poll(now={op[1]})"


def describe(max_batch: int, max_wait: float, schedule: list, upto: int | None = None) -> str:
    ops = schedule if upto is None else schedule[: upto + 1]
    calls = "; ".join(describe_op(op) for op in ops)
    return f"DynamicBatcher(model, max_batch={max_batch}, max_wait={max_wait}); {calls}"


def _shown(value) -> str:
    if isinstance(value, Opaque):
        return f"a {value.type_name} ({value.repr:.80})"
    return repr(value)[:120]


class Run:
    """A schedule played in the sandbox, beside what the contract says it gives."""

    def __init__(self, sandbox, max_batch: int, max_wait: float, schedule: list):
        self.max_batch, self.max_wait, self.schedule = max_batch, max_wait, schedule
        self.log = call(sandbox, "run", max_batch, max_wait, schedule)["log"]
        self.expected = simulate(max_batch, max_wait, schedule)
        self.xs = {}  # ticket -> x
        for op, want in zip(schedule, self.expected):
            if "ticket" in want:
                self.xs[want["ticket"]] = op[2]

    def where(self, i: int) -> str:
        return f"op {i}, {describe_op(self.schedule[i])}"

    def context(self, i: int | None = None) -> str:
        return describe(self.max_batch, self.max_wait, self.schedule, i)

    def fail(self, i: int, what: str):
        raise AssertionError(f"{self.where(i)}: {what}; after {self.context(i)}")

    def entries(self, kind: str | None = None):
        """(i, got, want) for every op that must succeed (of ``kind``), after proving it did."""
        for i, (got, want) in enumerate(zip(self.log, self.expected)):
            if "raises" in want or (kind is not None and self.schedule[i][0] != kind):
                continue
            if "raised" in got:
                raised = got["raised"]
                self.fail(i, f"raised {raised.get('type')}: {str(raised.get('message'))[:150]}")
            yield i, got, want

    # ------------------------------------------------------------------ the aspects

    def tickets(self) -> None:
        """Every submit returned the ticket the contract gives: 0, 1, 2, ... as ints."""
        for i, got, want in self.entries("submit"):
            ticket = got.get("ticket")
            if type(ticket) is not int or ticket != want["ticket"]:
                self.fail(i, f"returned the ticket {_shown(ticket)}, expected {want['ticket']} (an int: "
                             "tickets count the accepted submits from 0)")

    def calls(self) -> list:
        """Every model call as (op index, x), its input proven a float32 [rows, FEATURES] tensor."""
        out = []
        for i, got in enumerate(self.log):
            for k, call in enumerate(got["calls"]):
                name = f"{self.where(i)}: the input of model call {k} ({self.context(i)})"
                x = expect_tensor(call["x"], dtype=torch.float32, name=name)
                if x.dim() != 2 or x.shape[1] != FEATURES:
                    raise AssertionError(f"{name}: expected a [rows, {FEATURES}] tensor, got shape {tuple(x.shape)}")
                out.append((i, k, x, call["grad"]))
        return out

    def rows_within_max_batch(self) -> None:
        for i, k, x, _ in self.calls():
            expect_bounded(int(x.shape[0]), at_least=1, at_most=self.max_batch,
                           name=f"{self.where(i)}: rows in model call {k} ({self.context(i)})")

    def only_polls_call_the_model(self) -> None:
        for i, got in enumerate(self.log):
            if self.schedule[i][0] == "submit" and got["calls"]:
                self.fail(i, f"called the model {len(got['calls'])} time(s); submit only queues, "
                             "the model runs in poll")

    def no_grad(self) -> None:
        for i, k, _, grad in self.calls():
            if grad is not False:
                self.fail(i, f"model call {k} ran with grad mode on; call the model under torch.no_grad()")

    def batches(self) -> None:
        """Each poll made one model call per batch the contract forms, on exactly the batch's rows."""
        for i, got, want in self.entries("poll"):
            calls = got["calls"]
            batches = want["batches"]
            if len(calls) != len(batches):
                self.fail(i, f"made {len(calls)} model call(s), expected {len(batches)}: one per batch, "
                             f"the batches being tickets {batches}")
            for k, (call, batch) in enumerate(zip(calls, batches)):
                expected = torch.cat([self.xs[t] for t in batch])
                name = f"{self.where(i)}: the input of model call {k} (expected the rows of tickets {batch})"
                x = expect_tensor(call["x"], shape=tuple(expected.shape), dtype=torch.float32, name=name)
                expect_equal(x, expected, name=f"{name}; after {self.context(i)}")

    def _pairs(self, i: int, got: dict, seen: dict, note: str):
        """The (ticket, y) pairs poll op i returned, each proven a known ticket, new, with y = model(x)."""
        results = got.get("results")
        if not isinstance(results, list):
            self.fail(i, f"returned {_shown(results)}, expected a list of (ticket, y) pairs")
        for item in results:
            if isinstance(item, Opaque):
                self.fail(i, f"returned {_shown(item)} in its list, expected (ticket, y) pairs")
            ticket, y = item
            if type(ticket) is not int or ticket not in self.xs:
                self.fail(i, f"returned the ticket {_shown(ticket)}, which no submit gave")
            if ticket in seen:
                self.fail(i, f"returned ticket {ticket} again (op {seen[ticket]} returned it already)")
            seen[ticket] = i
            x = self.xs[ticket]
            name = f"{self.where(i)}: y for ticket {ticket}"
            y = expect_tensor(y, shape=(x.shape[0], OUTPUTS), dtype=torch.float32, name=name)
            expect_close(y, model_output(x), f"{name}; after {self.context(i)}", atol=1e-5, rtol=1e-5, note=note)
        return [item[0] for item in results]

    def results(self) -> None:
        """Each poll returned the contract's tickets, in ticket order, each with model(its x)."""
        seen = {}
        for i, got, want in self.entries("poll"):
            got_tickets = self._pairs(i, got, seen, "y must be model(x) for this ticket's own x")
            tickets = [t for batch in want["batches"] for t in batch]
            if got_tickets != tickets:
                self.fail(i, f"returned tickets {got_tickets}, expected {tickets}")

    def every_ticket_answered(self) -> None:
        """(after a draining last poll) every accepted request's result came back once, with model(x)."""
        seen = {}
        for i, got, _ in self.entries("poll"):
            self._pairs(i, got, seen, "y must be model(x) for this ticket's own x, whatever batch it was in")
        missing = sorted(set(self.xs) - set(seen))
        if missing:
            self.fail(len(self.schedule) - 1, f"tickets {missing} never came back, though every request "
                                              "is due by then")

    def raises(self) -> None:
        """Every op the contract rejects raised ValueError (naming max_batch or now where it says so)."""
        for i, (got, want) in enumerate(zip(self.log, self.expected)):
            if "raises" not in want:
                continue
            word = want["raises"]
            expect_raised(got.get("raised"), "ValueError", match=word,
                          what=f"{self.where(i)}, after {self.context(i - 1) if i else 'construction'}")

    def everything(self) -> None:
        self.raises()
        self.tickets()
        self.only_polls_call_the_model()
        self.rows_within_max_batch()
        self.batches()
        self.results()
        self.no_grad()
