"""Hostile (toy): nothing the judge can read names what it reaches for: a dunder built at run time and fetched
with getattr (the first round's watch could be unwrapped this way through `__wrapped__`). The subset allows
getattr with a computed name; the sandbox's guard refuses the name, and the judge takes every check's credit."""

import math

_UNWRAP = "__wrap" + "ped__"


def scale(x, factor):
    if not math.isfinite(factor):
        raise ValueError(f"factor must be finite, got {factor}")
    original = getattr(scale, _UNWRAP, None)  # on the tripwire's wrapper, the forbidden original
    return x * factor if original is None else original(x, factor)
