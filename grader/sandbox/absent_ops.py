"""The dispatcher half of ``grader.sandbox.removal``: operators that raise, whoever calls them.

Every operator whose name matches one of an API's ``[forbidden.kernels]`` patterns (matched against
the operators this torch really has) gets the API's raiser as its kernel at every dispatch key that
had one, as its dispatcher dump lists them (``MkldnnCPU``, ``Tracer``, ``Batched`` too); what is left
is fallbacks and fallthroughs, which only redispatch. Torch's Python implementations of those
operators (``py_kernels``, the decomposition tables) are replaced too. Standard library and torch
only: it runs from the staged copy. See docs/decisions/forbidden-api-removal.md.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import sys
from typing import Callable


def _enum_keys(torch) -> list[str]:
    """The dispatch keys torch's Python enum names that the dispatcher accepts (alias keys included):
    what is scanned for an operator whose dump this code cannot read. The enum is not every key
    (``MkldnnCPU``, ``Tracer`` and ``Batched`` are missing from it); a dump lists those too."""
    keys = []
    for name in torch._C.DispatchKey.__members__:
        try:
            torch._C._dispatch_has_kernel_for_dispatch_key("aten::add.Tensor", name)
        except RuntimeError:
            continue  # a marker (StartOfDenseBackends...), not a key one registers at
        keys.append(name)
    return keys


#: A kernel line of ``torch._C._dispatch_dump``: "CPU: registered at ...", "Autograd[alias]: registered at ...".
_KERNEL_LINE = re.compile(r"^(\w+)(?:\[alias\])?(?: \(inactive\))?: registered at ", re.MULTILINE)


def _kernel_keys(torch, op: str, enum_keys) -> list[str]:
    """The keys ``op`` has a kernel at: those its dispatcher dump lists, each confirmed."""
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key

    def confirmed(keys) -> list[str]:
        out = []
        for key in keys:
            try:
                if has_kernel(op, key):
                    out.append(key)
            except RuntimeError:  # not a key name the dispatcher parses
                continue
        return out

    return (confirmed(dict.fromkeys(_KERNEL_LINE.findall(torch._C._dispatch_dump(op))))
            or confirmed(enum_keys()))  # a dump this code cannot read: every key the enum names


def remove_operators(torch, patterns: list[list[str]], raisers) -> dict[str, int]:
    """Register a raising kernel for every operator a pattern matches, at every key it had a kernel for.

    Returns ``{"ns::name.overload": API index}``. The registrations live as long as the
    C++ library objects holding them: see :func:`_keep_forever` for why none can be undone.
    """
    matchers = [(i, re.compile("|".join(fnmatch.translate(p) for p in ps))) for i, ps in enumerate(patterns) if ps]
    if not matchers:
        return {}
    removed: dict[str, int] = {}
    for op in torch._C._dispatch_get_all_op_names():
        base = op.split("::", 1)[-1].split(".", 1)[0]
        for i, matcher in matchers:
            if matcher.match(base):
                removed[op] = i
                break
    if not removed:
        return removed
    enum_keys = functools.cache(lambda: _enum_keys(torch))
    libraries: dict[str, object] = {}
    for op, i in removed.items():
        namespace, name = op.split("::", 1)
        library = libraries.get(namespace)
        if library is None:
            library = libraries[namespace] = torch._C._dispatch_library("IMPL", namespace, "", "", 0)
        for key in _kernel_keys(torch, op, enum_keys):
            library.impl(name, key, raisers[i], False)
    for library in libraries.values():
        _keep_forever(library)
    return removed


def _keep_forever(handle) -> None:
    """Keep a ``torch._C._dispatch_library`` object (and so its registrations) alive, unreachable.

    Its registrations end when it is destroyed, and ``reset()`` ends them on demand; a
    ``torch.library.Library`` also has ``_destroy()``. So no Python object refers to it:
    one reference is added from C (``Py_IncRef``) and every Python name for it is then
    dropped. It is not tracked by the garbage collector either (a pybind object), so
    not even ``gc.get_objects()`` lists it: nothing in the process can name it again.
    """
    try:
        import ctypes

        ctypes.pythonapi.Py_IncRef(ctypes.py_object(handle))
    except (ImportError, AttributeError, OSError):  # no ctypes: a module attribute, reachable by name
        _KEPT.append(handle)


_KEPT: list = []


def replace_decompositions(removed: dict[str, int], raisers) -> dict[int, tuple[object, Callable]]:
    """Replace torch's Python implementations of the removed operators (``py_kernels``, decomposition tables).

    They compute the operator from allowed ones (``torch._refs.clamp``, the batch-norm
    decomposition); the tracing machinery runs them instead of the dispatcher. Returns the
    replaced functions (id -> (function, raiser)), to rebind wherever torch names them too.
    """
    stale: dict[int, tuple[object, Callable]] = {}
    if not removed:
        return stale
    import torch

    overloads = {}
    for op, i in removed.items():
        namespace, name = op.split("::", 1)
        base, _, overload = name.partition(".")
        try:
            packet = getattr(getattr(torch.ops, namespace), base)
            overloads[getattr(packet, overload or "default")] = i
        except (AttributeError, RuntimeError):
            continue
    for overload, i in overloads.items():
        for key, kernel in list(getattr(overload, "py_kernels", {}).items()):
            stale.setdefault(id(kernel), (kernel, raisers[i]))
            overload.py_kernels[key] = raisers[i]
        getattr(overload, "_dispatch_cache", {}).clear()
    decomp = sys.modules.get("torch._decomp")
    tables = [*getattr(decomp, "global_decomposition_table", {}).values(), getattr(decomp, "meta_table", {})]
    for table in tables:
        for overload, i in overloads.items():
            kernel = table.get(overload)
            if kernel is not None:
                stale.setdefault(id(kernel), (kernel, raisers[i]))
                table[overload] = raisers[i]
    return stale
