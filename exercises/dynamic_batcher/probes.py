"""Probes for the dynamic_batcher exercise. They run INSIDE the sandbox.

Each probe builds the candidate's DynamicBatcher around a recording model (the
Linear of ``shared.py``, wrapped so that every call's input and grad mode are
noted in a ``probekit.Ledger`` the model finds by its identity, never on the model
itself), plays a schedule of submit and poll calls the check chose, and returns a
log of what happened. Probes never judge: the checks (judge side) work out what
the contract says the log must be and compare.
"""

from __future__ import annotations

import torch
from torch import nn

import dynamic_batcher
from grader.sandbox import probekit
from shared import build_model


class RecordingModel(nn.Module):
    """The served model: notes each call's input (a copy) and whether grad mode was on, in its ledger."""

    def __init__(self):
        super().__init__()
        self.inner = build_model()

    def forward(self, x):
        found = probekit.attached(self)
        if found is not None:
            found[0].note({"x": probekit.tensor(x), "grad": bool(torch.is_grad_enabled())})
        return self.inner(x)


def _ticket(value):
    """A ticket as plain data: an int stays an int (a bool or numpy integer comes back opaque)."""
    return value if type(value) is int else probekit.opaque(value)


def _results(value):
    """What poll returned: a list of [ticket, y] pairs; anything else opaque, where it is."""
    if type(value) is not list:
        return probekit.opaque(value)
    out = []
    for item in value:
        if isinstance(item, (tuple, list)) and len(item) == 2:
            out.append([_ticket(item[0]), probekit.tensor(item[1])])
        else:
            out.append(probekit.opaque(item))
    return out


def run(max_batch, max_wait, schedule):
    """DynamicBatcher(model, max_batch, max_wait), then every op of ``schedule`` in order.

    An op is ["submit", now, x] or ["poll", now]. Returns {"log": [...]}, one entry per
    op: {"op", "calls": the model calls made during it, and "ticket" (submit) or
    "results" (poll), or "raised" when the call raised}. An exception does not stop
    the schedule: the next ops show what the batcher did after it.
    """
    ledger = probekit.Ledger()
    model = ledger.attach(RecordingModel())
    batcher = dynamic_batcher.DynamicBatcher(model, max_batch, max_wait)
    log = []
    for op in schedule:
        before = len(ledger.events)
        entry = {"op": op[0]}
        try:
            if op[0] == "submit":
                entry["ticket"] = _ticket(batcher.submit(op[2], op[1]))
            else:
                entry["results"] = _results(batcher.poll(op[1]))
        except Exception as e:
            entry["raised"] = probekit.raised(e)
        entry["calls"] = ledger.events[before:]
        log.append(entry)
    return {"log": log}


def make(max_batch, max_wait):
    """DynamicBatcher(model, max_batch, max_wait); {} when it was built (it raises otherwise)."""
    dynamic_batcher.DynamicBatcher(RecordingModel(), max_batch, max_wait)
    return {}
