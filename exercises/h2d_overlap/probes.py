"""Probes for the h2d_overlap exercise. They run INSIDE the sandbox.

A probe calls the candidate's code on plain inputs and returns plain data: tensors,
numbers, strings, lists and dicts. It never judges: the checks compute what is
expected and compare, judge-side. ``grader.sandbox.probekit`` holds what probes
share: ``tensor`` (a copy off the graph, or a description of what came instead),
``returned_instead``, ``raised``, ``backward_grads``, ``RecordingSGD``, ``run_ranks``...
"""

from __future__ import annotations

import h2d_overlap
from grader.sandbox import probekit


def scale(x, factor):
    """scale(x, factor); returns {"out": what it returned, "x_after": x after the call}."""
    out = h2d_overlap.scale(x, factor)
    return {"out": probekit.tensor(out), "x_after": probekit.tensor(x)}
