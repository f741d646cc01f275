"""Forbidden computations by family (grader.subset.families): every public torch name that looks like a family
is forbidden by it, outside every exercise's subset, or allowed with a reason, so a torch upgrade that adds a
new spelling of a forbidden computation fails here instead of opening a door.

The walk runs in a child interpreter (it imports every public torch module: minutes of warnings and state
no other test should share) and prints what it found as JSON.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
import textwrap

import pytest

from grader.exercise import load_exercise
from grader.subset.families import FAMILIES
from grader.subset.policy import Policy
from grader.subset.rules import ForbiddenRules
from tests.rewritten import EXERCISES

WALK = textwrap.dedent('''
    import contextlib, importlib, io, json, pkgutil, sys, warnings
    import torch

    SKIP = ("torch.testing", "torch.onnx", "torch.utils.tensorboard", "torch.utils.benchmark", "torch.utils.hipify",
            "torch.utils.bottleneck", "torch.contrib", "torch.utils.model_zoo", "torch.utils.collect_env")
    modules = {"torch": torch}
    names = [i.name for i in pkgutil.walk_packages(torch.__path__, "torch.", onerror=lambda n: None)]
    for name in names:
        parts = name.split(".")
        if any(p.startswith("_") for p in parts[1:]) or any(name == s or name.startswith(s + ".") for s in SKIP):
            continue
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \\
                    contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                modules[name] = importlib.import_module(name)
        except BaseException:
            pass
    found = {}
    for name, module in modules.items():
        for attr, value in list(vars(module).items()):
            if not attr.startswith("_") and callable(value):
                found.setdefault(attr, []).append(f"{name}.{attr}")
    for attr in dir(torch.Tensor):
        if not attr.startswith("_"):
            found.setdefault(attr, []).append(f"torch.Tensor.{attr}")
    ops = sorted({op.split("::", 1)[-1].split(".")[0] for op in torch._C._dispatch_get_all_op_names()})
    print(json.dumps({"names": found, "ops": ops, "modules": len(modules)}))
''')


@pytest.fixture(scope="module")
def torch_names() -> dict:
    out = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["modules"] > 300 and len(found["ops"]) > 1000  # the walk saw torch, not a stub of it
    return found


def _looks_like(family, name: str) -> bool:
    return any(fnmatch.fnmatchcase(name.lower(), p) for p in family.looks_like)


def _open_doors(family, torch_names: dict) -> list[str]:
    """What looks like ``family`` and is neither forbidden by it, outside the default subset, nor allowed."""
    rules = ForbiddenRules(list(family.apis), {k: list(v) for k, v in family.kernels.items()})
    patterns = [p for ps in family.kernels.values() for p in ps]
    default = Policy()
    doors = []
    for name, paths in sorted(torch_names["names"].items()):
        if not _looks_like(family, name) or name in family.allowed:
            continue
        doors += [p for p in paths if p not in family.allowed and rules.match(p) is None
                  and default.member_verdict(p) is None]
    for op in torch_names["ops"]:
        if _looks_like(family, op) and op not in family.allowed \
                and not any(fnmatch.fnmatchcase(op, p) for p in patterns):
            doors.append(f"torch.ops.aten.{op}")
    return doors


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_public_spelling_of_a_family_is_forbidden_or_allowed_with_a_reason(name, torch_names):
    doors = _open_doors(FAMILIES[name], torch_names)
    assert not doors, (f"{name}: these look like the family and are neither forbidden by it, outside the "
                       f"default subset, nor allowed in grader/subset/families.py: {doors}")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_allowance_names_something_torch_has(name, torch_names):
    """An allowance for a name torch no longer has is stale: it would let a future name in unexamined."""
    known = set(torch_names["names"]) | set(torch_names["ops"]) | \
        {p for paths in torch_names["names"].values() for p in paths}
    stale = [a for a in FAMILIES[name].allowed if a not in known]
    assert not stale, f"{name}: allowed but not in this torch: {stale}"


def test_a_new_spelling_is_caught_by_the_walk():
    """The check can fail: a made-up torch function that computes attention is an open door."""
    doors = _open_doors(FAMILIES["attention"], {"names": {"ring_attention": ["torch.nn.functional.ring_attention"]},
                                                "ops": ["_ring_attention_forward"]})
    assert doors == ["torch.nn.functional.ring_attention", "torch.ops.aten._ring_attention_forward"]


#: Exercises that forbid part of a family without declaring it, and why (none today).
NO_FAMILY_YET: dict[str, str] = {}


@pytest.mark.parametrize("folder", sorted(p for p in EXERCISES.iterdir() if (p / "exercise.toml").is_file()),
                         ids=lambda p: p.name)
def test_an_exercise_that_forbids_part_of_a_family_forbids_it_whole(folder):
    forbidden = load_exercise(folder).config.forbidden
    partial = [name for name, family in FAMILIES.items()
               if name not in forbidden.families and set(family.apis) & set(forbidden.apis)]
    if folder.name in NO_FAMILY_YET:
        assert partial, f"{folder.name} declares its family now: remove it from NO_FAMILY_YET"
        return
    assert not partial, f"{folder.name} forbids part of {partial}: add `families = {partial}` to [forbidden]"
