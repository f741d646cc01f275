"""NaN-proof comparisons of single numbers, for checks.

Every ordering comparison is False when one side is NaN, so a check written
``if abs(got - want) > tol: fail`` (or ``if norm > limit: fail``) passes a NaN.
These helpers first prove the value is a real, finite number of the exact type
the contract promises (``bool`` is not an ``int``; an ``Opaque`` or a tensor is
not a number unless allowed), then test the rule, so NaN and inf can only fail.
Checks compare numbers through them, never with ``<``/``>`` on what came back
(``tests/test_nan_safe_checks.py`` holds them to it).
"""

from __future__ import annotations

import math
from typing import NoReturn

import torch

from grader.judge.tolerance import Tolerance, resolve

Number = int | float


def _kind(value) -> str:
    if type(value) is torch.Tensor:
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    if hasattr(value, "type_name"):  # an Opaque: the sandbox's object, by its type name
        return f"a {value.type_name}"
    return f"a {type(value).__name__} ({value!r:.60})"


def _types_text(types: tuple[type, ...]) -> str:
    return " or ".join(t.__name__ for t in types)


def _rule(atol: float, rtol: float) -> str:
    parts = ([f"atol {atol:g}"] if atol else []) + ([f"rtol {rtol:g}"] if rtol else [])
    return ", ".join(parts) or "exactly"


def _fail(name: str, expected: str, got: str, note: str | None) -> NoReturn:
    raise AssertionError(f"{name}: expected {expected}, got {got}" + (f" ({note})" if note else ""))


def as_number(value, *, name: str, types: tuple[type, ...] = (int, float), allow_tensor: bool = False,
              finite: bool = True, expected: str | None = None, note: str | None = None) -> float:
    """``value`` as a float, after proving it is a number of exactly one of ``types`` (finite by default).

    With ``allow_tensor``, a plain ``torch.Tensor`` holding one real (not bool, not
    complex) value counts too. ``expected`` words the rule for the message.
    """
    expected = expected or f"a {'finite ' if finite else ''}{_types_text(types)}"
    if allow_tensor and type(value) is torch.Tensor:
        if value.numel() != 1 or value.dtype == torch.bool or value.is_complex():
            _fail(name, expected, _kind(value), note)
        number = float(value.detach().reshape(()).item())
    elif type(value) in types and type(value) is not bool:
        number = float(value)
    else:
        _fail(name, expected, _kind(value), note)
    if finite and not math.isfinite(number):
        _fail(name, expected, f"{number}", note)
    return number


def expect_scalar(got, want: Number, *, name: str, tol: Tolerance | None = None, atol: float | None = None,
                  rtol: float | None = None, types: tuple[type, ...] = (int, float), allow_tensor: bool = False,
                  note: str | None = None) -> float:
    """Assert ``got`` is a finite number of ``types`` with ``|got - want| <= atol + rtol * |want|``.

    ``tol`` (a ``Tolerance``) gives ``atol`` and ``rtol`` at once; without either, exactly.
    A non-finite ``want`` (the judge expects inf, or NaN) is met only by the same
    value: NaN passes where, and only where, the judge itself computed NaN.
    Returns ``got`` as a float. ``note`` (why this value, what it means) ends the message.
    """
    atol, rtol = resolve(tol, None, atol, rtol)
    atol, rtol = atol or 0.0, rtol or 0.0
    want = float(want)
    if not math.isfinite(want):
        got_number = as_number(got, name=name, types=types, allow_tensor=allow_tensor, finite=False,
                               expected=f"{_types_text(types)} {want}", note=note)
        if not (got_number == want or (math.isnan(got_number) and math.isnan(want))):
            _fail(name, f"{_types_text(types)} {want}", f"{got_number!r}", note)
        return got_number
    expected = f"a finite {_types_text(types)} close to {want:.10g} ({_rule(atol, rtol)})"
    number = as_number(got, name=name, types=types, allow_tensor=allow_tensor, expected=expected, note=note)
    if not abs(number - want) <= atol + rtol * abs(want):
        _fail(name, expected, f"{number:.10g} (off by {abs(number - want):.3g})", note)
    return number


def expect_bounded(value, *, name: str, at_least: Number | None = None, at_most: Number | None = None,
                   types: tuple[type, ...] = (int, float), allow_tensor: bool = True,
                   note: str | None = None) -> float:
    """Assert ``value`` is a finite number with ``at_least <= value <= at_most`` (either bound optional).

    For measured quantities: a norm under a limit, a statistical distance under a
    threshold, a p-value above a floor. Tensors holding one value are accepted by
    default, since such quantities are usually computed with torch. Returns the value.
    """
    bounds = ([] if at_least is None else [f">= {at_least:.6g}"]) + ([] if at_most is None else [f"<= {at_most:.6g}"])
    expected = " ".join(["a finite number", " and ".join(bounds)]).strip()
    number = as_number(value, name=name, types=types, allow_tensor=allow_tensor, expected=expected, note=note)
    if not ((at_least is None or number >= at_least) and (at_most is None or number <= at_most)):
        _fail(name, expected, f"{number:.6g}", note)
    return number
