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
def scenarios(draw, drain: str = "due"):
    """(max_batch, max_wait, schedule): submits of 1..max_batch rows and polls, time moving
    forward in steps of 0 to 1.5. ``drain="due"``: a last poll at which every request is due
    (the newest exactly at its deadline); ``"far"``: as many polls as submits, well past every
    deadline, so that every request has come back whatever the timing."""
    max_batch = draw(st.integers(1, 5))
    max_wait = draw(st.integers(0, 8)) / 4
    seed = draw(st.integers(0, 2**16))
    now = 0.0
    schedule = []
    for i in range(draw(st.integers(1, 14))):
        now += draw(st.integers(0, 6)) / 4
        if draw(st.booleans()):
            schedule.append(submit(now, request(seed + i, draw(st.integers(1, max_batch)))))
        else:
            schedule.append(poll(now))
    if drain == "due":
        schedule.append(poll(now + max_wait))
    else:
        submits = sum(op[0] == "submit" for op in schedule)
        schedule += [poll(now + max_wait + 1.0) for _ in range(max(submits, 1))]
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
    """A schedule played in the sandbox, beside what the contract says it gives.

    Each aspect compares one side of the log. Requests are named by the tickets the
    candidate's submit returned (``tickets`` alone checks their values), so that a
    mistake in the numbering shows in that check only.
    """

    def __init__(self, sandbox, max_batch: int, max_wait: float, schedule: list):
        self.max_batch, self.max_wait, self.schedule = max_batch, max_wait, schedule
        self.log = call(sandbox, "run", max_batch, max_wait, schedule)["log"]
        self.expected = simulate(max_batch, max_wait, schedule)
        self.op_of = {want["ticket"]: i for i, want in enumerate(self.expected) if "ticket" in want}
        self._theirs = None

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

    def theirs(self) -> dict:
        """The contract's ticket -> the ticket the candidate's submit returned (distinct ints, proven)."""
        if self._theirs is None:
            theirs, seen = {}, {}
            for i, got, want in self.entries("submit"):
                ticket = got.get("ticket")
                if type(ticket) is not int:
                    self.fail(i, f"returned the ticket {_shown(ticket)}, expected an int")
                if ticket in seen:
                    self.fail(i, f"returned the ticket {ticket} again (op {seen[ticket]} got it already)")
                seen[ticket] = i
                theirs[want["ticket"]] = ticket
            self._theirs = theirs
        return self._theirs

    def x_of(self) -> dict:
        """The candidate's ticket -> that request's x."""
        return {theirs: self.schedule[self.op_of[ours]][2] for ours, theirs in self.theirs().items()}

    # ------------------------------------------------------------------ the aspects

    def tickets(self) -> None:
        """Every submit returned the ticket the contract gives: 0, 1, 2, ... as ints."""
        for i, got, want in self.entries("submit"):
            ticket = got.get("ticket")
            if type(ticket) is not int or ticket != want["ticket"]:
                self.fail(i, f"returned the ticket {_shown(ticket)}, expected {want['ticket']} (an int: "
                             "tickets count the accepted submits from 0)")

    def calls(self) -> list:
        """Every model call as (op index, k, x, grad mode), x proven a float32 [rows, FEATURES] tensor."""
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
            requests = [[self.op_of[t] for t in batch] for batch in batches]
            if len(calls) != len(batches):
                self.fail(i, f"made {len(calls)} model call(s), expected {len(batches)}: one per batch, "
                             f"the batches being the requests of ops {requests}")
            for k, (call, batch) in enumerate(zip(calls, requests)):
                expected = torch.cat([self.schedule[j][2] for j in batch])
                name = f"{self.where(i)}: the input of model call {k} (expected the rows of the requests of ops {batch})"
                x = expect_tensor(call["x"], shape=tuple(expected.shape), dtype=torch.float32, name=name)
                expect_equal(x, expected, name=f"{name}; after {self.context(i)}")

    def _returned(self, i: int, got: dict) -> list:
        """The (ticket, y) pairs poll op i returned, proven a list of pairs with tickets submit gave."""
        results = got.get("results")
        if not isinstance(results, list):
            self.fail(i, f"returned {_shown(results)}, expected a list of (ticket, y) pairs")
        known = set(self.theirs().values())
        for item in results:
            if isinstance(item, Opaque):
                self.fail(i, f"returned {_shown(item)} in its list, expected (ticket, y) pairs")
            if type(item[0]) is not int or item[0] not in known:
                self.fail(i, f"returned the ticket {_shown(item[0])}, which no accepted submit gave")
        return results

    def _expected_tickets(self, want: dict) -> list:
        theirs = self.theirs()
        return [theirs[t] for batch in want["batches"] for t in batch]

    def flushes(self) -> None:
        """Each poll returned the results of exactly the requests the contract flushes there (any order)."""
        for i, got, want in self.entries("poll"):
            returned = sorted(item[0] for item in self._returned(i, got))
            expected = sorted(self._expected_tickets(want))
            if returned != expected:
                self.fail(i, f"returned the tickets {returned}, expected {expected}")

    def empty_polls(self) -> None:
        """Each poll at which nothing is due returned an empty list."""
        for i, got, want in self.entries("poll"):
            if not want["batches"]:
                results = got.get("results")
                if not isinstance(results, list) or results:
                    self.fail(i, f"returned {_shown(results)}, expected [] (nothing is due)")

    def _check_y(self, i: int, ticket: int, y, x_of: dict, note: str) -> None:
        x = x_of[ticket]
        name = f"{self.where(i)}: y for ticket {ticket}"
        y = expect_tensor(y, shape=(x.shape[0], OUTPUTS), dtype=torch.float32, name=name)
        expect_close(y, model_output(x), f"{name}; after {self.context(i)}", atol=1e-5, rtol=1e-5, note=note)

    def results(self) -> None:
        """Each poll returned the contract's requests in ticket order, each with model(its x)."""
        x_of = self.x_of()
        for i, got, want in self.entries("poll"):
            results = self._returned(i, got)
            returned = [item[0] for item in results]
            expected = self._expected_tickets(want)
            if returned != expected:
                self.fail(i, f"returned the tickets {returned}, expected {expected}")
            for ticket, y in results:
                self._check_y(i, ticket, y, x_of, "y must be model(x) for this ticket's own x")

    def every_ticket_answered(self) -> None:
        """(after draining polls) every accepted request's result came back once, with model(x)."""
        x_of, seen = self.x_of(), {}
        for i, got, _ in self.entries("poll"):
            for ticket, y in self._returned(i, got):
                if ticket in seen:
                    self.fail(i, f"returned ticket {ticket} again (op {seen[ticket]} returned it already)")
                seen[ticket] = i
                self._check_y(i, ticket, y, x_of,
                              "y must be model(x) for this ticket's own x, whatever batch it was in")
        missing = sorted(set(x_of) - set(seen))
        if missing:
            self.fail(len(self.schedule) - 1, f"tickets {missing} never came back, though every request "
                                              "is long due by then")

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
