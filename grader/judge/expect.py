"""Assertions for data that came back from the sandbox, with messages that name the problem.

Use ``expect_tensor`` on every tensor before comparing it: it proves the value is
an exact ``torch.Tensor`` (not a subclass, not an "always equal" object) of the
shape and dtype the contract promises, and finite unless told otherwise. Single
numbers are compared through ``grader.judge.numbers`` (NaN-proof).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import re
from contextlib import contextmanager

import torch

from grader.judge.calls import CandidateError
from grader.judge.tolerance import Tolerance, Tolerances, resolve


def _shape(value) -> tuple:
    return tuple(value.shape)


def expect_tensor(value, *, shape=None, dtype: torch.dtype | None = None, finite: bool = True,
                  name: str = "output") -> torch.Tensor:
    """Assert ``value`` is a plain tensor with this shape, dtype and (by default) only finite values."""
    if type(value) is not torch.Tensor:
        got = getattr(value, "type_name", type(value).__name__)
        raise AssertionError(f"{name}: expected a torch.Tensor, got {got}")
    if shape is not None and _shape(value) != tuple(shape):
        raise AssertionError(f"{name}: expected shape {tuple(shape)}, got {_shape(value)}")
    if dtype is not None and value.dtype != dtype:
        raise AssertionError(f"{name}: expected dtype {dtype}, got {value.dtype}")
    if finite and value.is_floating_point() and not bool(torch.isfinite(value).all()):
        bad = (~torch.isfinite(value)).sum().item()
        kinds = "NaN" if torch.isnan(value).any() else "inf"
        raise AssertionError(f"{name}: {bad} of {value.numel()} values are not finite ({kinds})")
    return value


def expect_close(actual: torch.Tensor, expected: torch.Tensor, name: str = "output", *,
                 tol: Tolerance | Tolerances | None = None, atol: float | None = None, rtol: float | None = None,
                 nan_where_expected: bool = False, note: str | None = None) -> None:
    """``torch.testing.assert_close``, its message starting with what was compared.

    ``tol`` is the exercise's ``Tolerances`` (picked by ``expected.dtype``) or one
    ``Tolerance``; ``atol``/``rtol`` instead, or nothing for torch's defaults.
    NaN never passes for a number: with ``nan_where_expected`` a NaN in ``actual``
    matches a NaN the judge computed in ``expected`` at the same place, and
    nowhere else. ``note`` (what the value means, a likely cause) ends the message.
    """
    def message(detail: str) -> str:
        return f"{name}: {detail}" + (f"\n{note}" if note else "")

    atol, rtol = resolve(tol, getattr(expected, "dtype", None), atol, rtol)
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=nan_where_expected, msg=message)


def expect_gradient(value, name: str, like: torch.Tensor, *, why: str | None = None) -> torch.Tensor:
    """A gradient the sandbox returned, checked like ``like``; says why when none reached ``name``."""
    if value is None:
        raise AssertionError(f"no gradient reached {name}: {why or 'the result does not depend on it'}")
    return expect_tensor(value, shape=tuple(like.shape), dtype=like.dtype, name=f"gradient of {name}")


@contextmanager
def candidate_raises(exception: str, *, match: str | None = None, what: str | None = None,
                     otherwise: Callable[[], str | None] | None = None):
    """Assert the sandbox call inside the block raised ``exception`` (by class name, subclasses too).

    ``match`` is a regular expression searched in the exception's message, as in
    ``pytest.raises``. Exceptions are named, not imported, because the class lives
    in the sandbox and only its name and message come back. ``NotImplementedError``
    (an untouched stub) never counts as a ``RuntimeError`` it happens to subclass, and an
    exception raised while the file was imported never counts at all. ``what`` (the
    call, the input) starts the message, for a check that tries several; ``otherwise``, when nothing was
    raised, says what the code did instead (two mistakes that both raise nothing then fail saying different things).
    """
    def fail(message: str) -> AssertionError:
        return AssertionError(f"{what}: {message}" if what else message)

    try:
        yield
    except CandidateError as e:
        if e.during_import:  # the module raised while importing: no call reached the code under test
            raise
        if e.is_a("NotImplementedError") and exception != "NotImplementedError":
            raise fail(f"expected {exception}, but the code is not implemented yet "
                       f"(NotImplementedError: {e.message})") from None
        if not e.is_a(exception):
            raise fail(f"expected {exception}, but the code raised {e.type_name}: {e.message}") from None
        if match is not None and not re.search(match, e.message):
            raise fail(f"{exception} raised, but its message {e.message!r} does not match {match!r}") from None
        return
    note = otherwise() if otherwise is not None else None
    instead = f" (instead: {note})" if note else ""
    raise fail(f"expected {exception} to be raised, but nothing was raised{instead}")


def expect_each_raises(exception: str, calls: Sequence[tuple[str, str | None, Callable[[], object]]]) -> None:
    """``candidate_raises`` for each ``(what, match, call)``, all of them tried: one that does not raise as it should
    fails the check with its own message; several fail it naming each ("3 of 6 calls ..."), so code that refuses
    nothing and code that misses one case are told apart, and a candidate learns every case at once."""
    missed = []
    for what, match, call in calls:
        try:
            with candidate_raises(exception, match=match, what=what):
                call()
        except AssertionError as e:
            missed.append(str(e))
    if len(missed) == 1:
        raise AssertionError(missed[0])
    if missed:
        raise AssertionError(f"{len(missed)} of {len(calls)} calls did not raise {exception} as they should:\n"
                             + "\n".join(missed))


def expect_raised(raised: dict | None, exception: str, *, what: str, match: str | None = None) -> None:
    """``candidate_raises`` for an exception a probe caught and sent back as data.

    Some rules are about what happens around an exception (hooks removed, a file left
    intact), so the probe catches it and reports ``{"type", "qualnames", "message"}``
    beside the rest; ``raised`` is that record, or None when nothing was raised. The
    same rules hold as for ``candidate_raises`` (subclasses count, an untouched stub's
    NotImplementedError does not); ``what`` (the call, the situation) starts the message.
    """
    with candidate_raises(exception, match=match, what=what):
        if raised is not None:
            # The probe's record is untrusted: CandidateError validates it (a malformed one is a ProtocolViolation).
            record = raised if isinstance(raised, dict) else {}
            raise CandidateError("probe", {"type": record.get("type"), "qualnames": record.get("qualnames"),
                                           "builtin": False, "message": record.get("message")})
