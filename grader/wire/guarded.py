"""The guard functions a rewritten submission calls: the names the judge's rewrite writes, the sandbox binds.

The judge rewrites the candidate's module (``grader.subset.rewrite``) so that each attribute
access, item access, call, iteration and ``with`` goes through one of these; the sandbox's
runtime subset (``grader.sandbox.runtime_subset``) supplies them in the module's own builtins.
Their names are dunders no submission may write or bind, so the candidate can neither call
nor replace them. Standard library only: staged into the sandbox.
"""

from __future__ import annotations

#: ``obj.name`` read: checks the name on that object, then the value read.
ATTR = "__subset_attr__"
#: ``obj.name = ...`` (``WRITE(obj, "name").name = ...``): checks the write, returns ``obj``.
WRITE = "__subset_write__"
#: ``del obj.name``: checks the deletion, returns ``obj``.
DELETE = "__subset_delete__"
#: ``obj.name += ...``: checks the read and the write, returns ``obj``.
UPDATE = "__subset_update__"
#: A call's result, an item read, an awaited or yielded value, a called value: checks it, returns it.
VALUE = "__subset_value__"
#: ``obj[key] = ...``, ``del obj[key]``, ``obj[key] += ...``: checks the container, returns it.
CONTAINER = "__subset_container__"
#: ``ITER(iterable, depth)``: an iterator that checks each item (and items of items, ``depth`` deep,
#: for an unpacking target such as ``for i, (a, b) in ...``).
ITER = "__subset_iter__"
#: ``with ENTER(manager, depth) as target``: the manager, whose ``__enter__`` result is checked.
ENTER = "__subset_enter__"
#: ``async with AENTER(manager, depth) as target``: the same for ``__aenter__``.
AENTER = "__subset_aenter__"

ALL = (ATTR, WRITE, DELETE, UPDATE, VALUE, CONTAINER, ITER, ENTER, AENTER)

#: Why a guard refused -> the name of the exception it raises (a subclass of ``SubsetGuardRefused``): the judge
#: reads only the name, and words the reason itself (``grader.host.decision``).
REFUSALS = {
    "name": "GuardRefusedName",  # a dunder off the list, frame internals, a dispatch switch, a computed forbidden name
    "private": "GuardRefusedPrivate",  # a private name of an object the candidate did not make
    "module": "GuardRefusedModule",  # a module, or a module's member, outside the exercise's subset
    "value": "GuardRefusedValue",  # a frame, code, a namespace, or what runs code or starts programs
    "forbidden": "GuardRefusedForbidden",  # a forbidden API reached under another name
    "write": "GuardRefusedWrite",  # code the candidate did not write patched, or a namespace written into
    "import": "GuardRefusedImport",  # an import outside the subset
    "open": "GuardRefusedOpen",  # a file under /proc, /sys or /dev
}
