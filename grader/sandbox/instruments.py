"""What a probe measures with, kept out of the candidate's reach. It runs INSIDE the sandbox.

Whatever a probe hands the candidate (a model, a block, an optimizer, a scaler, a tensor) is
theirs to read and rewrite: its attributes, its hooks (``_forward_hooks``, ``_backward_hooks``),
any list it holds. So a probe keeps its measurements in a :class:`Ledger` of its own variables;
an object that records (a probe's model, ``probekit.RecordingSGD``) finds its ledger and its tag
through :func:`attached`, a registry here keyed by the object's identity; liveness is read from
weak references the ledger holds; and what a call leaves alive is measured by :class:`Allocations`,
which sees every tensor an operator makes however autograd was asked to save it (an inner
``saved_tensors_hooks`` context included). A submission cannot import this module.
"""

from __future__ import annotations

import gc
import weakref

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from grader.wire.protocol import Opaque

#: id(object) -> (a weak reference to it, its ledger, its tag): the only way from an object to its ledger.
_REGISTRY: dict[int, tuple[weakref.ref, "Ledger", object]] = {}


def attached(obj) -> tuple[Ledger, object] | None:
    """The ledger ``obj`` was attached to and its tag, found by identity; None for any other object."""
    entry = _REGISTRY.get(id(obj))
    if entry is None or entry[0]() is not obj:
        return None
    return entry[1], entry[2]


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _REGISTRY.get(key)
    if entry is not None and entry[0] is ref:
        del _REGISTRY[key]


class Ledger:
    """A probe's record of what happened to the objects it hands the candidate.

    Held in the probe's own variables (a local, a closure), never on an object the candidate
    gets. ``events`` is what the attached objects noted, in order; ``kept`` what they kept by
    channel; ``watch`` keeps a weak reference, read back by ``alive``.
    """

    def __init__(self):
        self.events: list = []
        self.kept: dict[str, list] = {}
        self._watched: list[tuple[object, object]] = []

    def attach(self, obj, tag=None):
        """Let ``obj`` find this ledger (and ``tag``, e.g. its index) through :func:`attached`; ``obj``."""
        key = id(obj)
        ref = weakref.ref(obj, lambda r, key=key: _forget(key, r))
        _REGISTRY[key] = (ref, self, tag)
        return obj

    def note(self, event) -> None:
        """Record ``event`` (plain data)."""
        self.events.append(event)

    def keep(self, channel: str, value) -> None:
        """Record ``value`` under ``channel`` (e.g. the gradients an optimizer's step saw), apart from ``events``."""
        self.kept.setdefault(channel, []).append(value)

    def watch(self, label, value, *, storage: bool = False) -> None:
        """Keep a weak reference to ``value``, under ``label``. ``storage``: to a tensor's storage instead, so a
        view or a ``detach()`` of it kept anywhere keeps it alive too."""
        if storage and isinstance(value, torch.Tensor):
            self._watched.append((label, StorageWeakRef(value.untyped_storage())))
        else:
            self._watched.append((label, weakref.ref(value)))

    def alive(self, *, collect: bool = True) -> list[list]:
        """[label, still alive] for every watched value, in the order watched; after a garbage collection
        when ``collect`` (what only a reference cycle holds is not kept), see :func:`collect_garbage`."""
        collect_garbage(full=collect)
        return [[label, not ref.expired() if isinstance(ref, StorageWeakRef) else ref() is not None]
                for label, ref in self._watched]

    def forget_watched(self) -> None:
        """Drop every weak reference watched so far."""
        self._watched.clear()


def count_entries(mapping):
    """How many entries a hooks table (``_forward_hooks``, a tensor's ``_backward_hooks``) really holds: 0 for
    None, ``dict.__len__`` for a dict (a subclass's own ``__len__`` or ``__bool__`` cannot tell it otherwise),
    and for anything else a description in its place, which no count equals."""
    if mapping is None:
        return 0
    if isinstance(mapping, dict):
        return dict.__len__(mapping)
    return Opaque(type(mapping).__name__, "not a hooks table")


def collect_garbage(*, full: bool) -> None:
    """What only a reference cycle holds is freed: a full collection (about 0.15 s with torch loaded) when
    ``full``, else the young generations only (about 1 ms), which hold what a call just made."""
    gc.collect() if full else gc.collect(1)


def _key(storage) -> int:
    return storage._cdata


class _Made(TorchDispatchMode):
    """Notes the storage of every tensor an operator returns that no operator was given before."""

    def __init__(self, made: dict, given: dict):
        super().__init__()
        self.made, self.given = made, given

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # nothing here is compiled (a submission may not compile); skipping imports dynamo, seconds

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        for t in tree_leaves((args, kwargs or {})):
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                if _key(storage) not in self.made:
                    self.given.setdefault(_key(storage), StorageWeakRef(storage))
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                key = _key(storage)
                seen = self.given.get(key)
                if seen is not None and not seen.expired():
                    continue  # an input's storage, written in place or viewed
                self.given.pop(key, None)
                known = self.made.get(key)
                if known is None or known[0].expired():
                    self.made[key] = (StorageWeakRef(storage), storage.nbytes(), t.is_floating_point())
        return out


class Allocations:
    """``with Allocations() as made:`` every storage an operator creates inside the block, held weakly.

    ``alive_bytes()`` afterwards is what the block left alive: saved for backward (by autograd, on a
    ctx, through any saved-tensor hooks), kept in a list or a closure, returned. It is measured from
    the tensors themselves, not from what autograd was told to save, so no hooks context of the
    candidate's and no list they rewrite changes it.
    """

    def __init__(self):
        self._made: dict[int, tuple[StorageWeakRef, int, bool]] = {}
        self._given: dict[int, StorageWeakRef] = {}
        self._mode: _Made | None = None

    def __enter__(self) -> Allocations:
        self._mode = _Made(self._made, self._given)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        self._mode = None
        self._given.clear()

    def alive_bytes(self, *, exclude=(), floating_only: bool = True, collect: bool = True) -> tuple[int, int]:
        """(bytes, storages) still alive of those made in the block, after a garbage collection (a full one
        when ``collect``, see :func:`collect_garbage`); floating-point ones only when ``floating_only``;
        ``exclude``: tensors whose storage is not counted (the caller's own)."""
        collect_garbage(full=collect)
        skip = {_key(t.untyped_storage()) for t in exclude if isinstance(t, torch.Tensor)}
        alive = [nbytes for key, (ref, nbytes, floating) in self._made.items()
                 if not ref.expired() and key not in skip and (floating or not floating_only)]
        return sum(alive), len(alive)
