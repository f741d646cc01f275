"""A new exercise from a template: the smallest pair of folders that ``grader validate`` passes.

``grader new NAME`` writes ``exercises/NAME/`` (the prompt with its Contract, Decisions
and language subset, ``exercise.toml``, the stub, the probes, two checks, one public
example, the interview guide) and ``solutions/NAME/`` (the reference, two variants, six
mutants, most as patches, the contract table) for a trivial contract: ``scale(x, factor)``
returns ``x * factor`` and leaves ``x`` alone. Every file already follows the authoring
rules (:mod:`grader.authoring`) as written, the counts of variants and mutants included,
so an author replaces the contract and keeps a folder that validates at each step
(AUTHORING.md walks through it). Only ``mistakes.json`` is missing: it is measured by
grading (``grader validate NAME --more --record``), and its absence is a warning.

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
from grader.scaffold_corpus import CONTRACT, FILE_MUTANTS, PATCH_MUTANTS, REFERENCE, VARIANTS

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
            f"checks/test_{name}.py": _fill(CHECK, name), "checks/replies.py": _fill(REPLIES, name),
            f"test_{name}_example.py": _fill(EXAMPLE, name), "interview.toml": _fill(INTERVIEW, name)}


def solution_files(name: str) -> dict[str, str]:
    """``solutions/NAME/``: relative path -> text."""
    files = {f"{name}.py": _fill(REFERENCE, name), "contract.toml": _fill(CONTRACT, name)}
    files |= {f"variants/{stem}.py": _fill(text, name) for stem, text in VARIANTS.items()}
    files |= {f"mutants/{stem}.diff": _patch(name, *mistake) for stem, mistake in PATCH_MUTANTS.items()}
    files |= {f"mutants/{stem}.py": _fill(text, name) for stem, text in FILE_MUTANTS.items()}
    return files


def _patch(name: str, description: str, before: str, after: str) -> str:
    """A mutant as a patch against the reference, written as ``diff -u`` would (so it always applies)."""
    reference = _fill(REFERENCE, name)
    if before not in reference:  # the template's own consistency: every mutant changes the reference
        raise ValueError(f"the scaffold's mutant {description!r} changes {before!r}, which the reference lacks")
    return make_patch(reference, reference.replace(before, after), name=f"{name}.py", description=description)


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

## What your file may use

Your file runs only if it stays inside this exercise's **language subset**, checked before anything
runs: `torch`'s public API and the pure standard library (`math`, `typing`, `dataclasses`,
`functools`...). Never `exec`, `eval`, `open`, `sys`, `os`, `importlib`, `pickle` or dunder
attributes beyond the usual. A file outside the subset is not run: every check scores 0, and the
scorecard names each line and says how to write it instead.

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

REPLIES = '''\
"""What each NAME probe sends back, declared for the judge: it checks every reply against this before a
check reads it, and a reply that does not fit is the submission's failure on that check (grader.judge.replies)."""

from grader.judge.replies import TENSOR_OR_OPAQUE, Reply

REPLIES = {
    "scale": Reply({"out": TENSOR_OR_OPAQUE, "x_after": TENSOR_OR_OPAQUE}),
}
'''

CHECK = '''\
"""Checks for scale(x, factor) -> Tensor: one check per rule of the prompt."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.judge import expect_close, expect_tensor

INPUTS = dict(shape=st.lists(st.integers(1, 4), max_size=3), dtype=st.sampled_from([torch.float32, torch.float64]),
              factor=st.floats(-4, 4, allow_nan=False), seed=st.integers(0, 2**16))


def _x(shape, dtype, seed):
    return torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


@pytest.mark.points(2)
@pytest.mark.visibility("visible")
@pytest.mark.hint("Return a new tensor, x * factor, in x's shape and dtype.")
@given(**INPUTS)
def test_returns_x_times_factor(sandbox, shape, dtype, factor, seed):
    """Returns x * factor in x's shape and dtype"""
    x = _x(shape, dtype, seed)
    got = sandbox.call("scale", x, factor)
    out = expect_tensor(got["out"], shape=x.shape, dtype=dtype, name="scale(x, factor)")
    expect_close(out, x * factor, "scale(x, factor)")


@pytest.mark.points(1)
@pytest.mark.hint("Leave x as it was: compute a new tensor rather than scaling x in place.")
@given(**INPUTS)
def test_leaves_x_unchanged(sandbox, shape, dtype, factor, seed):
    """Leaves x unchanged, value for value"""
    x = _x(shape, dtype, seed)
    got = sandbox.call("scale", x, factor)
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
checks = ["test_leaves_x_unchanged"]
mutants = ["scales_x_in_place"]
when = "failed"

[[question]]
ask = "Your result came back as float32 for a float64 input. Where did the precision go, and why does it matter?"
answer = """\\
A .float() (or a float32 constant) casts the result down to 24 bits of mantissa, so a float64 caller loses \\
about nine significant digits without being told. Keep the input's dtype: x * factor with a Python float \\
computes in x's own dtype."""
checks = ["test_returns_x_times_factor"]
mutants = ["returns_float32"]
when = "failed"

[[question]]
ask = "When is an in-place operation worth it, and what does autograd do if a tensor it saved is changed in place?"
answer = """\\
In-place ops save memory and an allocation, which matters for large activations (ReLU(inplace=True)). \\
Autograd tracks a version counter on every tensor: if a tensor saved for backward was modified in place, \\
backward raises an error instead of computing with the new values."""
checks = ["test_leaves_x_unchanged"]
when = "passed"

[[question]]
ask = "x * factor with a Python float: what dtype does the result have, and why is it not float64?"
answer = """\\
Type promotion treats a Python scalar as a weaker, dimensionless value: it never raises a tensor's \\
floating dtype, so a float32 tensor times a Python float stays float32. A 0-dimensional float64 tensor \\
would not promote it either; a 1-element float64 tensor with a dimension would."""
checks = ["test_returns_x_times_factor"]
when = "passed"

[[question]]
ask = "How would you scale a tensor too large to hold twice in memory?"
answer = """\\
Scale it in place under torch.no_grad(), and say so in the contract, since the caller's tensor changes; \\
or fill a preallocated output chunk by chunk (out[i:j] = x[i:j] * factor) and free the input as you go. \\
Either way the peak stays near one tensor, not two."""
checks = ["test_returns_x_times_factor"]
when = "passed"
'''
