"""The lists the judge hands the sandbox's runtime guard (``grader.sandbox.restricted``) for one exercise.

The guard refuses, for a name computed at run time, what the judge refuses when the name
is written out: dunders outside the subset's list, frame and code internals, torch's
dispatch switches, the exercise's forbidden names; and it imports only what the subset
allows. The lists are made here, from the judge's own policy, and staged with the
submission (``grader.backends.staging``); the sandbox only reads them.
"""

from __future__ import annotations

from grader.subset import policy as P
from grader.subset.rules import ForbiddenRules, stub_names


def guard_lists(exercise) -> dict[str, list[str] | bool]:
    """Plain data (lists of names, a flag), written into the staged loader as a Python literal."""
    try:
        own = stub_names(exercise.stub.read_text(encoding="utf-8"))
    except OSError:
        own = frozenset()
    policy = P.Policy.of(exercise.config.subset)
    rules = ForbiddenRules.of(exercise.config.forbidden, own)
    return {
        "dunders": sorted(P.DUNDER_ATTRIBUTES),
        "frames": sorted(P.FRAME_ATTRIBUTES),
        "refused": sorted(rules.attribute_names()),
        "patterns": list(P.TORCH_SWITCHES),
        "importable": list(policy.importable()),
        "open": "open" in policy.builtins,
    }
