"""How close is close enough: one tolerance per dtype, named once per exercise.

Rounding depends on the dtype: a check holding a float64 result to float32's tolerance passes a
candidate who silently computes in float32; one holding float32 to float64's fails a correct answer.
So an exercise names ``Tolerances`` (a ``Tolerance`` per floating dtype) once, and every comparison
picks the one for the dtype the judge expects (``expect_close(out, want, "out", tol=TOL)``). The
presets hold for values of order 1 and tens of terms per sum (float32 rounding ~1e-6, float64
~1e-15): a correct answer far inside, a wrong formula far outside. Larger sums set their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tolerance:
    """``|got - want| <= atol + rtol * |want|``, elementwise."""

    atol: float
    rtol: float

    def __post_init__(self):
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"Tolerance: {name} must be a number >= 0, got {name}={value!r}")


#: Bit for bit: for results that involve no rounding (copies, selections, values on an exact grid).
EXACT = Tolerance(atol=0.0, rtol=0.0)


@dataclass(frozen=True)
class Tolerances:
    """A ``Tolerance`` for each floating dtype a check compares in; integers and bools compare exactly."""

    float32: Tolerance = Tolerance(atol=1e-5, rtol=1e-5)
    float64: Tolerance = Tolerance(atol=1e-10, rtol=1e-10)

    def for_dtype(self, dtype: torch.dtype) -> Tolerance:
        """The tolerance for results of ``dtype`` (what the judge expects, not what came back)."""
        if dtype == torch.float32:
            return self.float32
        if dtype == torch.float64:
            return self.float64
        if not (dtype.is_floating_point or dtype.is_complex):
            return EXACT
        raise ValueError(f"Tolerances has no tolerance for {dtype}: compare in float32 or float64, "
                         "or pass atol= and rtol= for this comparison")


def resolve(tol: Tolerance | Tolerances | None, dtype: torch.dtype | None, atol: float | None,
            rtol: float | None) -> tuple[float | None, float | None]:
    """``(atol, rtol)`` for one comparison: from ``tol`` (by ``dtype`` when it is ``Tolerances``), or as given.

    ``tol`` and ``atol``/``rtol`` together are an authoring error: which one holds would be a guess.
    """
    if tol is None:
        return atol, rtol
    if atol is not None or rtol is not None:
        raise TypeError("give tol= or atol=/rtol=, not both")
    if isinstance(tol, Tolerances):
        if dtype is None:
            raise TypeError("Tolerances picks by dtype: compare tensors, or pass one Tolerance")
        tol = tol.for_dtype(dtype)
    if not isinstance(tol, Tolerance):
        raise TypeError(f"tol must be a Tolerance or Tolerances, got {type(tol).__name__}")
    return tol.atol, tol.rtol
