"""The subset at run time (grader.sandbox.runtime_subset, grader.sandbox.guard_ops): every value a rewritten
submission reaches is judged when it is reached, whatever path produced it.

Each attack is a few lines of candidate source that the judge's source check lets through (names alone
cannot tell), run as the sandbox runs it: rewritten, under the exercise's runtime subset. Honest forms of the
same operations pass.
"""

from __future__ import annotations

import ast

import pytest
import torch

from grader.exercise import load_exercise
from grader.sandbox.runtime_subset import SubsetGuardRefused
from grader.subset.audit import audit_exercise_file
from grader.subset.names import Names
from grader.subset.policy import Policy
from grader.subset.scopes import Scopes
from tests.rewritten import EXERCISES, lists_for, run

KV = lists_for("kv_cache_decode")

#: Candidate sources the judge's source check passes, each reaching something no exercise may hand out.
ESCAPES = {
    "an attribute walk from an allowed value to sys": (
        "import warnings\n\ndef go():\n    return warnings.catch_warnings()._module.sys\n"),
    "the same walk through a subclass the candidate owns": (
        "import warnings\n\nclass Mine(warnings.catch_warnings):\n    pass\n\n"
        "def go():\n    return Mine()._module.sys\n"),
    "a default value that is the pickle module": (
        "import inspect\nimport torch\n\n"
        "def go():\n    return inspect.signature(torch.save).parameters['pickle_module'].default\n"),
    "a module fetched as an item": (
        "import inspect\nimport torch\n\n"
        "def go():\n    params = inspect.signature(torch.save).parameters\n"
        "    return [p.default for p in params.values()][3]\n"),
    "a module unpacked from a sequence": (
        "import inspect\nimport torch\n\n"
        "def go():\n    a, b, c, d, *rest = [p.default for p in inspect.signature(torch.save).parameters.values()]\n"
        "    return d\n"),
    "a frame from a generator": "def go():\n    g = (i for i in range(3))\n    return g.gi_frame\n",
    "torch's dispatch switch": "import torch\n\ndef go():\n    return torch._C.DisableTorchFunction\n",
    "a private attribute of torch's object": (
        "import torch\n\ndef go():\n    layer = torch.nn.Linear(2, 2)\n    return layer._forward_hooks\n"),
    "a module member outside the subset": "import collections\n\ndef go():\n    return collections._sys\n",
}


@pytest.mark.parametrize("source", ESCAPES.values(), ids=ESCAPES.keys())
def test_what_no_exercise_may_hand_out_is_refused_where_it_is_reached(source):
    module = run(source, lists=KV)
    with pytest.raises(SubsetGuardRefused):
        module.go()


def test_the_attacks_pass_the_source_check_so_only_the_runtime_stops_them():
    """The first three escapes name nothing the judge's audit can refuse: the runtime subset is what holds."""
    ex = load_exercise(EXERCISES / "kv_cache_decode")
    for key in list(ESCAPES)[:5]:
        assert not audit_exercise_file(ex, ESCAPES[key]).blocking, key


HONEST = '''
import math
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)
        self._cache = {}
        self.__hits = 0

    def forward(self, x):
        self.__hits += 1
        self._cache[x.shape] = self._cache.get(x.shape, 0) + 1
        return torch.relu(self.proj(x)) * math.sqrt(x.shape[-1])

    def hits(self):
        return self.__hits, self._parameters["dummy"] if "dummy" in self._parameters else None


def go():
    block = Block(4)
    block.proj.weight.data.fill_(0.5)
    block.proj.bias = nn.Parameter(torch.zeros(4))
    out = block(torch.ones(2, 4))
    for name, p in block.named_parameters():
        p.grad = None
    total = 0.0
    for i, (a, b) in enumerate(zip(out[0].tolist(), out[1].tolist())):
        total += a + b + i
    with torch.no_grad() as nothing:
        y = out[:, 1:3].sum().item()
    torch.backends.cudnn.deterministic = True
    opt = torch.optim.SGD(block.parameters(), lr=0.1)
    return total, y, nothing, block.hits(), type(opt).__name__, sorted(block._cache.values())
'''


def test_honest_pytorch_runs_as_written():
    assert run(HONEST, lists=KV).go() == run(HONEST, guarded=False).go()


@pytest.mark.parametrize("source", [
    "import torch\n\ndef go(layer):\n    torch.nn.Linear.forward = None\n",  # a torch class patched
    "import torch\n\ndef go(layer):\n    type(layer).extra_repr = None\n",
    "import torch\n\ndef go(layer):\n    torch.relu.__doc__ = 'x'\n",
    "import torch\n\ndef go(layer):\n    torch.nn.functional.relu = torch.tanh\n",
    "import torch\n\ndef go(layer):\n    layer.__class__ = torch.nn.Identity\n",
    "import torch\n\ndef go(layer):\n    del torch.nn.functional.relu\n",
])
def test_code_the_candidate_did_not_write_is_never_patched(source):
    with pytest.raises(SubsetGuardRefused):
        run(source, lists=KV).go(torch.nn.Linear(2, 2))


def test_a_module_namespace_is_never_a_container_to_write_into():
    module = run("def go(d):\n    d['relu'] = None\n", lists=KV)
    with pytest.raises(SubsetGuardRefused):
        module.go(vars(torch.nn.functional))
    box = {}
    module.go(box)
    assert box == {"relu": None}


def test_a_forbidden_api_under_its_own_name_is_the_audits_and_under_another_is_refused():
    """``F.scaled_dot_product_attention`` written out is counted by the judge (and removed in the sandbox);
    the same object reached under any other name is refused where it is reached."""
    sdpa = torch.nn.functional.scaled_dot_product_attention
    module = run("import torch.nn.functional as F\n\ndef own():\n    return F.scaled_dot_product_attention\n\n"
                 "def other(holder):\n    return holder.attend\n", lists=KV)
    assert module.own() is sdpa
    with pytest.raises(SubsetGuardRefused):
        module.other(type("Holder", (), {"attend": staticmethod(sdpa)}))


def test_a_listed_member_of_a_module_no_exercise_may_allow_whole_is_allowed(tmp_path):
    lists = lists_for("checkpoint_resume")
    module = run("import os\n\ndef go(a, b):\n    os.replace(a, b)\n    return os.path.exists(b)\n\n"
                 "def bad():\n    return os.system\n", lists=lists)
    (tmp_path / "a").write_text("x")
    assert module.go(str(tmp_path / "a"), str(tmp_path / "b"))
    with pytest.raises(SubsetGuardRefused):
        module.bad()


def _resolved_paths(source: str) -> set[str]:
    scopes = Scopes(tree := ast.parse(source))
    names = Names(scopes)
    return {p for node in ast.walk(tree) if isinstance(node, ast.Attribute) and (p := names.resolve(node))}


def test_every_member_the_judge_allows_in_a_shipped_solution_the_runtime_allows_too():
    """The runtime's member rule is the judge's policy: on every dotted path the exercises' own solutions name,
    the two agree (a disagreement would refuse honest code at run time that the judge let through)."""
    from grader.sandbox.runtime_subset import RuntimeSubset

    checked = 0
    for folder in sorted(EXERCISES.iterdir()):
        ex = load_exercise(folder)
        policy = Policy.of(ex.config.subset)
        runtime = RuntimeSubset(lists_for(folder.name), module=ex.module_name, filename="x.py")
        solutions = sorted((EXERCISES.parent / "solutions" / folder.name).glob("**/*.py"))
        for path in solutions:
            for dotted in _resolved_paths(path.read_text()):
                parts = dotted.split(".")
                if len(parts) < 2 or policy.member_verdict(dotted) is not None:
                    continue
                real = policy.canonical(".".join(parts[:-1]))
                assert runtime._path_allowed(f"{real}.{parts[-1]}"), (folder.name, path.name, dotted)
                checked += 1
    assert checked > 300


def test_a_private_name_the_candidate_adds_to_a_torch_object_is_its_own_and_torchs_own_stay_out():
    """``ctx._blocks = blocks`` in an autograd Function is honest: the name is new on torch's object, so it is the
    candidate's to read back. A private name torch already has there (``_forward_hooks``) is never replaced."""
    module = run('''
import torch
from torch import nn


class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx._scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx._scale, None


def honest():
    x = torch.ones(2, requires_grad=True)
    Twice.apply(x, 3.0).sum().backward()
    return x.grad.tolist()


def replaces(layer):
    layer._forward_hooks = {}
''', lists=KV)
    assert module.honest() == [3.0, 3.0]
    with pytest.raises(SubsetGuardRefused):
        module.replaces(torch.nn.Linear(2, 2))
