"""Run a source as the sandbox runs a submission: the judge's rewrite, compiled, under the runtime subset.

In this process, with the sandbox's own modules: what the tests of the rewrite and of the runtime subset
need to check a rule without starting a worker.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

from grader.exercise import load_exercise
from grader.sandbox.restricted import Guard
from grader.subset.guard import guard_lists
from grader.subset.rewrite import rewritten_json
from grader.wire import module_ast

TOY = Path(__file__).parent / "fixtures" / "toy"
EXERCISES = Path(__file__).resolve().parent.parent / "exercises"


def lists_for(exercise: str | Path = TOY) -> dict:
    """The judge's lists for an exercise of the catalog (by name) or a folder."""
    return guard_lists(load_exercise(EXERCISES / exercise if isinstance(exercise, str) else exercise))


def run(source: str, *, guarded: bool = True, name: str = "cand", filename: str = "/stage/submission/cand.py",
        lists: dict | None = None) -> types.ModuleType:
    """``source`` run as module ``name``: as written, or as the judge rewrites it under the runtime subset."""
    module = types.ModuleType(name)
    module.__file__ = filename
    if guarded:
        tree = module_ast.decode(rewritten_json(source, filename=filename))
        module.__builtins__ = Guard(lists if lists is not None else lists_for(), module=name,
                                    filename=filename).builtins()
        code = compile(tree, filename, "exec", dont_inherit=True)
    else:
        code = compile(source, filename, "exec", dont_inherit=True)
    sys.modules[name] = module  # as an import leaves it: dataclasses and typing look the module up
    exec(code, module.__dict__)
    return module
