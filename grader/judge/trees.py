"""Exact equality of nested data (dicts, lists, tensors, numbers), saying where it first breaks.

Some results must come back bit for bit (a state_dict after a save and a load, parameters a refused
call must not have touched); ``==`` says nothing useful on such trees. ``expect_equal`` walks both and
names the first place they differ: the path, and for a tensor how many values differ and the first.
NaN never equals anything, so a NaN can only fail; lists and tuples compare alike (the protocol may
return either); dict keys compare as text (an optimizer's state is keyed by ints).
"""

from __future__ import annotations

import torch


def first_difference(got, want) -> str | None:
    """Where ``got`` first differs from ``want`` (``"['a'][0]: ..."``), or None when they are equal."""
    found = _difference(got, want, "")
    if found is None:
        return None
    where, detail = found
    return f"{where}: {detail}" if where else detail


def expect_equal(got, want, *, name: str, note: str | None = None) -> None:
    """Assert ``got`` equals ``want`` exactly, all the way down; the message names ``name`` and the place."""
    found = _difference(got, want, "")
    if found is not None:
        where, detail = found
        raise AssertionError(f"{name}{f', at {where}' if where else ''}: {detail}" + (f" ({note})" if note else ""))


def _difference(got, want, where: str) -> tuple[str, str] | None:
    if isinstance(want, torch.Tensor):
        return _tensor_difference(got, want, where)
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return where, f"expected a dict, got {_kind(got)}"
        if sorted(map(str, got)) != sorted(map(str, want)):
            return where, f"expected the keys {sorted(map(str, want))}, got {sorted(map(str, got))}"
        for key in want:
            if (found := _difference(got[key], want[key], f"{where}[{key!r}]")) is not None:
                return found
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return where, f"expected {len(want)} items, got {_kind(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            if (found := _difference(g, w, f"{where}[{i}]")) is not None:
                return found
        return None
    if isinstance(got, torch.Tensor) or got != want:
        return where, f"got {_shown(got)}, expected {_shown(want)}"
    return None


def _tensor_difference(got, want: torch.Tensor, where: str) -> tuple[str, str] | None:
    if type(got) is not torch.Tensor:
        return where, f"expected a tensor, got {_kind(got)}"
    if got.shape != want.shape or got.dtype != want.dtype:
        return where, f"expected {tuple(want.shape)} {want.dtype}, got {tuple(got.shape)} {got.dtype}"
    if torch.equal(got, want):
        return None
    differ = (got != want).nonzero()
    index = tuple(int(i) for i in differ[0])
    return where, (f"{differ.shape[0]} of {want.numel()} values differ, first at index {index}: "
                   f"got {got[index].item()!r}, expected {want[index].item()!r}")


def _kind(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    return _shown(value)


def _shown(value) -> str:
    if hasattr(value, "type_name"):  # an Opaque: the sandbox's object, by its type name
        return f"a {value.type_name}"
    return repr(value)[:120]
