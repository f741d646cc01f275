"""The shape of every probe's reply, checked before any check reads it: a small schema language.

Each exercise declares, judge side in ``checks/replies.py``, ``REPLIES = {probe name: Reply(shape)}``;
a shape is Python values (types, ``[S]``, ``(S1, S2)``, ``{"key": S, "maybe?": S}``, ``{str: S}``,
``one_of``, ``or_none``, ``defer``). A reply that fits none of its shape is the submission's failure
(:class:`ReplyMismatch`, an ``AssertionError``), told in the judge's words only: a key it names is one
the schema declares. Values are checked, never converted. The language, and why not pydantic:
docs/decisions/reply-shapes.md.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Any

from grader.wire.protocol import Opaque


#: What ``probekit.describe`` writes: a type's name, and a length; anything else is not repeated.
_DESCRIBED = re.compile(r"a [A-Za-z_][A-Za-z0-9_]{0,60}( of length \d{1,9})?")


class _Any:
    def __repr__(self):
        return "ANY"


ANY = _Any()
OPAQUE = Opaque


def _torch():
    import torch

    return torch


class _Lazy:
    """A torch type named before torch is imported (the judge imports torch only where checks need it)."""

    def __init__(self, name: str):
        self.name = name

    def get(self):
        return getattr(_torch(), self.name)

    def __or__(self, other):
        return OneOf((self, other))

    def __ror__(self, other):
        return OneOf((other, self))


TENSOR = _Lazy("Tensor")
DTYPE = _Lazy("dtype")


@dataclass(frozen=True)
class OneOf:
    """Any of ``shapes`` (``one_of(A, B)``, or ``A | B`` where either side is a shape of this module)."""

    shapes: tuple

    def __or__(self, other):
        return OneOf((self, other))

    def __ror__(self, other):
        return OneOf((other, self))


def one_of(*shapes) -> OneOf:
    return OneOf(shapes)


@dataclass(frozen=True)
class Defer:
    """A shape named before it is defined (a shape that holds itself: a nested record of records)."""

    make: Any


def defer(make) -> Defer:
    """``make()`` is the shape, read when a reply is checked: ``PLAIN = one_of(TENSOR, {"list": [defer(lambda:
    PLAIN)]})``."""
    return Defer(make)


def or_none(shape) -> OneOf:
    return OneOf((shape, None))


TENSOR_OR_OPAQUE = one_of(TENSOR, OPAQUE)
#: ``probekit.raised(exc)``: an exception a probe caught.
RAISED = {"type": str, "qualnames": [str], "message": str}
#: ``probekit.returned_instead(value)``: what the candidate's function returned instead.
RETURNED = {"returned": str}


@dataclass(frozen=True)
class Reply:
    """A probe's reply shape; ``returned``: (the candidate's function, what it must return) when the probe may
    answer ``probekit.returned_instead(...)`` instead, which then fails the check in those words."""

    shape: Any
    returned: tuple[str, str] | None = None


class ReplyMismatch(AssertionError):
    """A probe's reply does not fit its declared shape: the submission's failure on the check. ``probe`` names
    the probe for the panel (``CheckResult.probe``); the message never does."""

    def __init__(self, message: str, *, probe: str | None = None):
        super().__init__(message)
        self.probe = probe


class UndeclaredProbe(Exception):
    """A probe has no declared reply shape: the grader's bug (a check error), never the candidate's."""


_NAMES = {bool: "a bool", int: "an int", float: "a float", str: "a string", type(None): "None",
          dict: "a dict", Opaque: "an opaque value"}


def kind(value) -> str:
    """What a value is, in the judge's words (never its content)."""
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    if type(value) in _NAMES:
        return _NAMES[type(value)]
    torch = _torch()
    if type(value) is torch.Tensor:
        return "a tensor"
    if isinstance(value, torch.dtype):
        return "a dtype"
    return "a value of another kind"


def expected(shape) -> str:
    """A shape in words."""
    if shape is ANY:
        return "any value"
    if isinstance(shape, Defer):
        return "a nested value"
    if shape is None or shape is type(None):
        return "None"
    if isinstance(shape, _Lazy):
        return {"Tensor": "a tensor", "dtype": "a dtype"}[shape.name]
    if isinstance(shape, type):
        return _NAMES.get(shape, f"a {shape.__name__}")
    if isinstance(shape, types.UnionType):
        return " or ".join(expected(s) for s in shape.__args__)
    if isinstance(shape, OneOf):
        return " or ".join(expected(s) for s in shape.shapes)
    if isinstance(shape, list):
        return f"a list of {expected(shape[0])}" if shape else "a list"
    if isinstance(shape, tuple):
        return f"a list of {len(shape)}"
    if isinstance(shape, dict):
        if list(shape) == [str]:
            return "a dict of strings to " + expected(shape[str])
        return "a dict with the keys " + ", ".join(k.rstrip("?") for k in shape)
    return repr(shape)


def _step(path: str, key) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key


def _fits(value, shape) -> bool:
    return _check(value, shape, "") is None


def _check(value, shape, path: str) -> tuple[str, str] | None:
    """None when ``value`` fits ``shape``; else (where, what is wrong), in the judge's words."""
    if shape is ANY:
        return None
    if isinstance(shape, Defer):
        return _check(value, shape.make(), path)
    if shape is None or shape is type(None):
        return None if value is None else (path, f"{kind(value)} where None is expected")
    if isinstance(shape, (_Lazy, type)):
        words = expected(shape)
        cls = shape.get() if isinstance(shape, _Lazy) else shape
        ok = isinstance(value, cls) if cls is _torch().dtype else type(value) is cls
        return None if ok else (path, f"{kind(value)} where {words} is expected")
    if isinstance(shape, (types.UnionType, OneOf)):
        options = shape.__args__ if isinstance(shape, types.UnionType) else shape.shapes
        misses = [_check(value, s, path) for s in options]
        if any(m is None for m in misses):
            return None
        deepest = max(misses, key=lambda m: len(m[0]))
        return deepest if deepest[0] != path else (path, f"{kind(value)} where {expected(shape)} is expected")
    if isinstance(shape, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return path, f"{kind(value)} where {expected(shape)} is expected"
        if isinstance(shape, tuple) and len(value) != len(shape):
            return path, f"{kind(value)} where {expected(shape)} is expected"
        items = zip(value, shape) if isinstance(shape, tuple) else ((v, shape[0]) for v in value)
        for i, (item, inner) in enumerate(items):
            miss = _check(item, inner, _step(path, i))
            if miss is not None:
                return miss
        return None
    if isinstance(shape, dict):
        return _record(value, shape, path)
    raise TypeError(f"not a reply shape: {shape!r}")


def _record(value, shape: dict, path: str) -> tuple[str, str] | None:
    if type(value) is not dict:
        return path, f"{kind(value)} where {expected(shape)} is expected"
    if list(shape) == [str]:
        for k, v in value.items():
            if type(k) is not str:
                return path, "a dict with a key that is not a string"
            miss = _check(v, shape[str], f"{path}[a key]")
            if miss is not None:
                return miss
        return None
    keys = {k.rstrip("?"): k.endswith("?") for k in shape}
    missing = [k for k, optional in keys.items() if not optional and k not in value]
    if missing:
        return path, f"a dict without the key {missing[0]!r}"
    if any(k not in keys for k in value):
        return path, "a dict with a key the judge does not expect"
    for k, declared in shape.items():
        name = k.rstrip("?")
        if name in value:
            miss = _check(value[name], declared, _step(path, name))
            if miss is not None:
                return miss
    return None


def check_reply(probe: str, value, reply: Reply):
    """``value`` when it fits ``reply``; else the check fails (:class:`ReplyMismatch`) saying where and how."""
    if reply.returned is not None and _fits(value, RETURNED):
        function, returns = reply.returned
        gave = value["returned"] if _DESCRIBED.fullmatch(value["returned"]) else "something else"
        raise ReplyMismatch(f"{function} must return {returns}; it returned {gave}", probe=probe)
    miss = _check(value, reply.shape, "")
    if miss is None:
        return value
    where, what = miss
    raise ReplyMismatch(f"the submission's call returned a reply the judge cannot read: "
                        f"{'at ' + where + ', ' if where else ''}{what}", probe=probe)


#: Where an exercise declares its probes' reply shapes, under ``checks/``.
REPLIES_FILE = "replies.py"


class Replies:
    """An exercise's declared reply shapes (``checks/replies.py``'s ``REPLIES``)."""

    def __init__(self, shapes: dict[str, Reply], source: str):
        self.shapes, self.source = shapes, source

    @classmethod
    def load(cls, checks_dir) -> "Replies":
        """The shapes ``checks_dir / replies.py`` declares (loaded from its file, under a name of its own), or none
        at all when there is no such file: then every probe call is the grader's bug, named."""
        import importlib.util
        from pathlib import Path

        path = Path(checks_dir) / REPLIES_FILE
        if not path.is_file():
            return cls({}, f"{path} (missing)")
        spec = importlib.util.spec_from_file_location(f"grader_replies_{abs(hash(str(path.resolve())))}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        shapes = getattr(module, "REPLIES", None)
        if not isinstance(shapes, dict) or not all(isinstance(k, str) and isinstance(v, Reply)
                                                   for k, v in shapes.items()):
            raise TypeError(f"{path}: REPLIES must be a dict of probe names to Reply(...)")
        return cls(shapes, str(path))

    def check(self, probe: str, value):
        reply = self.shapes.get(probe)
        if reply is None:
            raise UndeclaredProbe(f"probe {probe!r} declares no reply shape in {self.source}: add it to REPLIES")
        return check_reply(probe, value, reply)
