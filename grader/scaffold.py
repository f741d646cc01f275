"""A new exercise from a template: the smallest pair of folders that ``grader validate`` passes.

``grader new NAME`` writes ``exercises/NAME/`` (the prompt with its Contract and Decisions,
``exercise.toml``, the stub, the probes, one check, one public example) and
``solutions/NAME/`` (the reference, one variant, one mutant as a patch, the contract
table) for a trivial contract: ``scale(x, factor)`` returns ``x * factor`` and leaves ``x``
alone. Every file already has the shape the repository's tests ask of an exercise, so an
author replaces the contract and keeps a folder that validates at each step
(AUTHORING.md walks through it).

The template is text here rather than a folder of ``.py`` files: a half-filled stub or
check in the package would be imported, linted and collected as if it were code.
"""

from __future__ import annotations

import keyword
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.mutant_patch import make_patch

#: A name becomes a module (``NAME.py``), a folder and part of a test file's name: a lowercase identifier.
NEW_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

#: Module names the sandbox or the judge import: a submission called so would shadow them.
TAKEN_MODULES = frozenset({"torch", "numpy", "hypothesis", "pytest", "safetensors", "grader", "probes",
                           "conftest", "worker", "protocol", "probekit", "shared"})


class NewExerciseError(UsageError):
    """``grader new`` cannot write the exercise: a bad name, or one already in use."""


@dataclass(frozen=True)
class NewExercise:
    """What ``grader new`` wrote: the two folders and every file in them, in writing order."""

    exercise_dir: Path
    solutions_dir: Path
    files: tuple[Path, ...]


def check_name(name: str) -> None:
    """Refuse a name that cannot be an exercise, a module and a test file's name at once."""
    if not NEW_NAME.match(name):
        raise NewExerciseError(
            f"{name!r} is not a valid exercise name: it names a folder, the module the candidate edits "
            f"({name}.py) and test_{name}_example.py, so it must be a Python identifier in lowercase "
            "(a letter, then letters, digits or '_', at most 64).",
            hint="For example: grader new layer_norm")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise NewExerciseError(f"{name!r} is a Python keyword: `import {name}` would not parse.",
                               hint=f"Pick another name, e.g. {name}_op.")
    if name in sys.stdlib_module_names or name in TAKEN_MODULES:
        raise NewExerciseError(f"{name!r} is the name of a module the grader or the sandbox imports: "
                               f"a candidate's {name}.py would shadow it.",
                               hint=f"Pick another name, e.g. my_{name}.")


def new_exercise(name: str, exercises_dir: Path, solutions_dir: Path) -> NewExercise:
    """Write the template for ``name`` under both folders; never touch anything that is already there."""
    check_name(name)
    exercise, solutions = Path(exercises_dir) / name, Path(solutions_dir) / name
    taken = [str(p) for p in (exercise, solutions) if p.exists() or p.is_symlink()]
    if taken:
        raise NewExerciseError(f"Exercise {name!r} is already there: {' and '.join(taken)} "
                               f"{'exists' if len(taken) == 1 else 'exist'}; "
                               "`grader new` never overwrites.",
                               hint="Pick another name, or remove the folders yourself if they are a stale try.")
    written = []
    for root, files in ((exercise, exercise_files(name)), (solutions, solution_files(name))):
        for relative, text in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as f:  # "x": a file that appeared meanwhile is not overwritten
                f.write(text)
            written.append(path)
    return NewExercise(exercise, solutions, tuple(written))


def _fill(template: str, name: str) -> str:
    return template.replace("NAME", name)


def exercise_files(name: str) -> dict[str, str]:
    """``exercises/NAME/``: relative path -> text."""
    return {"README.md": _fill(README, name), "exercise.toml": _fill(EXERCISE_TOML, name),
            f"{name}.py": _fill(STUB, name), "probes.py": _fill(PROBES, name),
            f"checks/test_{name}.py": _fill(CHECK, name), f"test_{name}_example.py": _fill(EXAMPLE, name),
            "interview.toml": _fill(INTERVIEW, name)}


def solution_files(name: str) -> dict[str, str]:
    """``solutions/NAME/``: relative path -> text."""
    return {f"{name}.py": _fill(REFERENCE, name), "variants/scales_a_copy_in_place.py": _fill(VARIANT, name),
            "mutants/scales_x_in_place.diff": _mutant(name), "contract.toml": _fill(CONTRACT, name)}


def _mutant(name: str) -> str:
    """The mutant as a patch against the reference, written as ``diff -u`` would (so it always applies)."""
    reference = _fill(REFERENCE, name)
    return make_patch(reference, reference.replace(MUTANT_FROM, MUTANT_TO), name=f"{name}.py",
                      description=MUTANT_DESCRIPTION)


README = '''\
# NAME: scale a tensor

Write `scale` in `NAME.py` (this folder): multiply a tensor by a number. This prompt
is the template `grader new` wrote; replace it with your exercise's, keeping its shape
(the contract first, then the decisions, an example, and how to try it). Level: mid.
Everything you need is on this page; the stub's docstring repeats the essentials.

## Contract

```python
def scale(x: torch.Tensor, factor: float) -> torch.Tensor
```

- **Returns** `x * factor`: a new tensor with `x`'s shape and dtype.
- **`x` is left unchanged**, value for value.
- `torch.mul` may not be used (`*` is fine).

## Decisions

- **Tolerance.** The result is compared with `x * factor` computed by the checks, with
  `torch.testing.assert_close`'s default tolerance for the dtype.
- **Inputs.** `x` is a float32 or float64 CPU tensor of up to 3 dimensions; `factor`
  is a finite Python float.

## Example

```python
import torch
from NAME import scale

x = torch.tensor([1.0, -2.0])
scale(x, 3.0)          # tensor([ 3., -6.])
x                      # tensor([ 1., -2.])  (unchanged)
```

## Trying it

```bash
pytest exercises/NAME/test_NAME_example.py
grader submit exercises/NAME
```

The examples are not the grade. The hidden checks compare the result with `x * factor`
on random shapes, dtypes and factors (hypothesis), and check that `x` is unchanged.
'''

EXERCISE_TOML = '''\
# Written by `grader new`. Every key, its default and its meaning: AUTHORING.md, "exercise.toml".
[exercise]
name = "NAME"
title = "NAME: scale a tensor"
version = "0.1.0"
level = "mid"              # mid | senior | principal; the README says "Level: mid." in its first lines
topics = ["tensors"]
submission = "NAME.py"     # the file the candidate edits; the stub of that name sits beside this file
gpu = "none"               # none | optional | required

[checks]
default_visibility = "hidden"   # a check without @pytest.mark.visibility(...)
seed = 0                        # hypothesis seed: the same file always gets the same score
max_examples = 25

[limits]
call_timeout_s = 20

[forbidden]
apis = ["torch.mul"]
'''

STUB = '''\
"""Scale a tensor: implement scale below. See README.md for the full contract."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Return x * factor as a new tensor of x's shape and dtype; leave x unchanged.

    torch.mul may not be used (the * operator is fine).
    """
    raise NotImplementedError("scale")
'''

PROBES = '''\
"""Probes for the NAME exercise. They run INSIDE the sandbox.

A probe calls the candidate's code on plain inputs and returns plain data: tensors,
numbers, strings, lists and dicts. It never judges: the checks compute what is
expected and compare, judge-side. ``grader.sandbox.probekit`` holds what probes
share: ``tensor`` (a copy off the graph, or a description of what came instead),
``returned_instead``, ``raised``, ``backward_grads``, ``RecordingSGD``, ``run_ranks``...
"""

from __future__ import annotations

import NAME
from grader.sandbox import probekit


def scale(x, factor):
    """scale(x, factor); returns {"out": what it returned, "x_after": x after the call}."""
    out = NAME.scale(x, factor)
    return {"out": probekit.tensor(out), "x_after": probekit.tensor(x)}
'''

CHECK = '''\
"""Checks for scale(x, factor) -> Tensor."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.judge import expect_close, expect_tensor


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Return a new tensor, x * factor, and leave x as it was.")
@given(shape=st.lists(st.integers(1, 4), max_size=3), dtype=st.sampled_from([torch.float32, torch.float64]),
       factor=st.floats(-4, 4, allow_nan=False), seed=st.integers(0, 2**16))
def test_scales_and_leaves_x_alone(sandbox, shape, dtype, factor, seed):
    """Returns x * factor in x's shape and dtype, and leaves x unchanged"""
    x = torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))
    got = sandbox.call("scale", x, factor)
    out = expect_tensor(got["out"], shape=x.shape, dtype=dtype, name="scale(x, factor)")
    expect_close(out, x * factor, "scale(x, factor)")
    after = expect_tensor(got["x_after"], shape=x.shape, dtype=dtype, name="x after the call")
    expect_close(after, x, "x after the call", atol=0, rtol=0, note="scale must not change its input.")
'''

EXAMPLE = '''\
"""Example tests for the NAME exercise. Run: pytest exercises/NAME/test_NAME_example.py

These are examples to read and run while you work, not the grade: the graded
checks are hidden and cover much more (see README.md).
"""

import torch

from NAME import scale


def test_the_example_in_the_readme():
    x = torch.tensor([1.0, -2.0])
    torch.testing.assert_close(scale(x, 3.0), torch.tensor([3.0, -6.0]))
    torch.testing.assert_close(x, torch.tensor([1.0, -2.0]))
'''

#: The interview guide: the panel's follow-up questions, tied to the check and the mutant (judge side, never shipped).
INTERVIEW = '''\
# Interview guide (judge side, never shipped to a candidate): follow-up questions for the panel.
# See AUTHORING.md, "The interview guide". Every name below is a check in checks/ or a mutant stem.

[[question]]
ask = "Your scale changed the caller's tensor. Why does that matter, and how do you avoid it?"
answer = """\\
x.mul_(factor) writes into the tensor the caller passed, so every other reference to it (the caller's \\
variable, a batch still in use, a tensor autograd saved for backward) silently changes too. Return a new \\
tensor, x * factor, or scale a clone."""
checks = ["test_scales_and_leaves_x_alone"]
mutants = ["scales_x_in_place"]
when = "failed"

[[question]]
ask = "When is an in-place operation worth it, and what does autograd do if a tensor it saved is changed in place?"
answer = """\\
In-place ops save memory and an allocation, which matters for large activations (ReLU(inplace=True)). \\
Autograd tracks a version counter on every tensor: if a tensor saved for backward was modified in place, \\
backward raises an error instead of computing with the new values."""
checks = ["test_scales_and_leaves_x_alone"]
when = "passed"
'''

REFERENCE = '''\
"""Reference solution for NAME: scale a tensor."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Return x * factor as a new tensor of x's shape and dtype; leave x unchanged."""
    return x * factor
'''

VARIANT = '''\
"""Variant: copies x, then scales the copy in place. Another correct answer, written differently."""

from __future__ import annotations

import torch


def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = x.clone()
    out *= factor
    return out
'''

#: The mutant: one plausible mistake, written down as the lines that change in the reference.
MUTANT_DESCRIPTION = "Mutant: scales x in place and returns it, so the caller's tensor changes too."
MUTANT_FROM, MUTANT_TO = "    return x * factor\n", "    x.mul_(factor)\n    return x\n"

CONTRACT = '''\
# Which check holds each rule of exercises/NAME/README.md (kept true by tests/test_contract_tables.py).
# Key: words of one paragraph of the prompt. Value: check ids, "forbidden:API", or "not checked: <why>".

"**Returns** `x * factor`" = ["test_scales_and_leaves_x_alone"]
"**`x` is left unchanged**" = ["test_scales_and_leaves_x_alone"]
"`torch.mul` may not be used" = ["forbidden:torch.mul"]
"**Tolerance.**" = "not checked: the tolerance the checks use"
"**Inputs.**" = "not checked: a promise about the checks' own inputs"
'''
