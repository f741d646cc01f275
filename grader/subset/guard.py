"""The lists the judge hands the sandbox's runtime subset (``grader.sandbox.runtime_subset``) for one exercise.

At run time the guards refuse what the judge refuses when it is written out: dunders off the
subset's list, frame and code internals, torch's dispatch switches, private names, members and
modules outside the policy, the exercise's forbidden names (when computed) and objects, and
values from modules no exercise may allow. The lists are made here, from the judge's own
policy, and staged with the submission (``grader.backends.staging``); the sandbox only reads them.
"""

from __future__ import annotations

from grader.subset import policy as P
from grader.subset.rules import ForbiddenRules, stub_names

#: Modules whose functions, classes and objects no guarded operation hands back (their C halves included),
#: but for the members an exercise lists: they run code, unpickle, reach the interpreter or start programs.
NEVER_HOMES = ("pickle", "_pickle", "pickletools", "marshal", "shelve", "copyreg", "dill", "ctypes", "_ctypes",
               "cffi", "sys", "gc", "importlib", "_imp", "_frozen_importlib", "_frozen_importlib_external", "imp",
               "zipimport", "runpy", "code", "codeop", "pdb", "bdb", "traceback", "inspect", "__main__", "subprocess",
               "_posixsubprocess", "pty", "signal", "_signal", "resource", "os", "posix", "nt", "logging", "socket",
               "_socket")
#: What ``inspect.signature`` hands out, and what comparing its parameters needs: never refused.
INSPECT_VALUES = ("inspect._empty", "inspect._ParameterKind", "inspect.BoundArguments")


def guard_lists(exercise) -> dict:
    """Plain data (lists of names, a flag), written into the staged loader as a Python literal."""
    try:
        own = stub_names(exercise.stub.read_text(encoding="utf-8"))
    except OSError:
        own = frozenset()
    policy = P.Policy.of(exercise.config.subset)
    rules = ForbiddenRules.of(exercise.config.forbidden, own)
    never = [n for n in P.NEVER if n != "os"]
    return {
        "dunders": sorted(P.DUNDER_ATTRIBUTES),
        "frames": sorted(P.FRAME_ATTRIBUTES),
        "refused": sorted(rules.attribute_names()),
        "patterns": list(P.TORCH_SWITCHES),
        "importable": list(policy.importable()),
        "open": "open" in policy.builtins,
        "stdlib": list(policy.stdlib_entries),
        "torch_lifted": list(policy.torch_entries),
        "torch_denied": list(P.TORCH_DENIED),
        "never": never,
        "never_except": list(P.NEVER_EXCEPT),
        "never_homes": list(NEVER_HOMES),
        "allowed_members": [e for e in policy.stdlib_entries if "." in e and "*" not in e] + list(INSPECT_VALUES),
        "unsafe_members": [n for n in never if "." in n and "*" not in n],
        "forbidden_apis": list(rules.apis),
        "forbidden_packages": [a for a in rules.apis if rules.is_package(a)],
    }
