"""The judge's subset check (grader.subset.audit): every spelling of a forbidden API the subset still allows
resolves to it, every way out of the subset is a violation with its line, and honest Python is left alone."""

import pytest

from grader.subset.config import ForbiddenConfig, SubsetConfig
from grader.subset.audit import audit_source
from grader.reports.model import ViolationCode as V

SDPA = "torch.nn.functional.scaled_dot_product_attention"
MHA = "torch.nn.MultiheadAttention"
ATTENTION = ForbiddenConfig(apis=[SDPA, MHA], kernels={SDPA: ["*scaled_dot_product*", "*flash_attention*"],
                                                      MHA: ["*multi_head_attention*"]})
#: The attention stub's own names: never a forbidden attribute name, whatever the patterns say.
ATTENTION_OWN = frozenset({"scaled_dot_product_attention", "MultiHeadAttention", "forward", "__init__"})


def audit(source, config=ATTENTION, *, subset=None, own=ATTENTION_OWN):
    return audit_source(source, config, filename="a.py", subset=subset, own_names=own)


def hits(source, config=ATTENTION, **kw):
    return [(h.api, int(h.where.rsplit(":", 1)[-1])) for h in audit(source, config, **kw).forbidden]


def violations(source, config=ATTENTION, **kw):
    return [(v.code, v.line) for v in audit(source, config, **kw).violations]


# ------------------------------------------------------------------ forbidden APIs, by every spelling left


@pytest.mark.parametrize("source, line", [
    ("import torch\ntorch.nn.functional.scaled_dot_product_attention(q, k, v)", 2),
    ("import torch.nn.functional as F\nF.scaled_dot_product_attention(q, k, v)", 2),
    ("from torch.nn import functional as F\n\nF.scaled_dot_product_attention(q, k, v)", 3),
    ("from torch.nn.functional import scaled_dot_product_attention as fast", 1),
    ("import torch.nn.functional as F\nf = getattr(F, 'scaled_dot_product_attention')", 2),
    ("import torch as T\nx = T.nn.functional.scaled_dot_product_attention", 2),
    ("import torch.nn.functional as F\nf = F.scaled_dot_product_attention\nf(q, k, v)", 2),
    ("import torch\nF = torch.nn.functional\nF.scaled_dot_product_attention(q, k, v)", 3),
    ("import torch\nfns = [torch.nn.functional.scaled_dot_product_attention]\nfns[0](q, k, v)", 2),
    ("from torch import nn\nnn.functional.scaled_dot_product_attention(q, k, v)", 2),
    ("import torch\nm = torch.nn.modules.activation.MultiheadAttention(4, 2)", 2),
    ("import torch\ntorch.nn.MultiheadAttention.forward(m, x, x, x)", 2),
    ("import torch.nn.functional as F\nF.multi_head_attention_forward(x)", 2),
])
def test_every_public_spelling_is_the_forbidden_api_and_the_file_still_runs(source, line):
    found = audit(source)
    assert [int(h.where.rsplit(":", 1)[-1]) for h in found.forbidden] == [line] and found.violations == []
    assert not found.blocking  # a public forbidden API runs: the sandbox's net says which checks it cost


@pytest.mark.parametrize("source, api, code", [
    ("import torch as t\nt._scaled_dot_product_attention_math(q, k, v)", SDPA, V.PRIVATE),
    ("import torch\ntorch.ops.aten.scaled_dot_product_attention.default(q, k, v)", SDPA, V.MEMBER),
    ("import torch\ntorch.ops.aten._scaled_dot_product_flash_attention(q, k, v)", SDPA, V.PRIVATE),
    ("import torch\ntorch._C._nn.scaled_dot_product_attention(q, k, v)", SDPA, V.PRIVATE),
    ("import torch\nx = torch._native_multi_head_attention", MHA, V.PRIVATE),
])
def test_a_private_spelling_is_both_the_forbidden_api_and_a_violation(source, api, code):
    found = audit(source)
    assert [h.api for h in found.forbidden] == [api] and [v.code for v in found.violations] == [code]
    assert found.blocking


def test_a_hit_names_the_spelling_it_came_through():
    [hit] = audit("import torch.nn.functional as F\nfast = F.scaled_dot_product_attention").forbidden
    assert (hit.api, hit.via, hit.where) == (SDPA, "", "a.py:2")
    [hit] = audit("import torch\ntorch.nn.modules.activation.MultiheadAttention(4, 2)").forbidden
    assert (hit.api, hit.via) == (MHA, "torch.nn.modules.activation.MultiheadAttention")


CLAMP = ForbiddenConfig(apis=["torch.clamp", "torch.clip", "torch.nn.functional.hardtanh"],
                        kernels={"torch.clamp": ["clamp", "clamp_*", "_foreach_clamp*"], "torch.clip": ["clip", "clip_"],
                                 "torch.nn.functional.hardtanh": ["hardtanh*", "Hardtanh", "relu6", "ReLU6"]})


@pytest.mark.parametrize("source, api", [
    ("def f(x):\n    return x.clamp(0, 1)", "torch.clamp"),
    ("def f(x):\n    return x.clamp_min(0)", "torch.clamp"),
    ("def f(x):\n    x.clamp_(0, 1)", "torch.clamp"),
    ("def f(x):\n    return x.clip(0, 1)", "torch.clip"),
    ("def f(x):\n    return x.relu6()", "torch.nn.functional.hardtanh"),
    ("def f(x):\n    return getattr(x, 'clamp')(0, 1)", "torch.clamp"),
    ("def f(layer, x):\n    return layer.hardtanh(x)", "torch.nn.functional.hardtanh"),
])
def test_a_tensor_method_is_its_forbidden_api_by_name(source, api):
    from grader.subset.rules import stub_names

    stub = "class Clamp:\n    def forward(ctx, x):\n        pass\n\ndef clamp(x, min=None, max=None):\n    pass"
    assert hits(source, CLAMP, own=stub_names(stub)) == [(api, 2)]


def test_names_only_stand_for_what_exists_in_torch_and_not_for_the_stubs_own():
    checkpoint = ForbiddenConfig(apis=["torch.utils.checkpoint"],
                                 kernels={"torch.utils.checkpoint": ["*checkpoint*", "*Checkpoint*"]})
    own = frozenset({"checkpointed_forward"})
    source = ("class CheckpointedSequential:\n    pass\n\ndef run(s, x):\n"
              "    return s.checkpointed_forward(x), s.run_checkpointed(x), CheckpointedSequential()")
    assert hits(source, checkpoint, own=own) == []
    assert hits("def f(m, x):\n    return m.checkpoint(x)", checkpoint, own=own) == [("torch.utils.checkpoint", 2)]
    # A method the stub's class defines is the contract's own name: `self.forward(...)` is no hit.
    assert hits("def f(self, x):\n    return self.clamp(x)", CLAMP, own=frozenset({"clamp"})) == []


def test_a_pattern_names_kernels_not_the_module_they_live_in():
    custom = ForbiddenConfig(apis=["torch.nn.Linear"], kernels={"torch.nn.Linear": ["*linear*"]})
    assert hits("import torch\nx = torch.nn.modules.linear.Identity()", custom) == []
    by_name = ForbiddenConfig(apis=["torch.nn.functional.linear"])
    assert hits("from torch.nn.modules.linear import Identity", by_name) == []


@pytest.mark.parametrize("source", [
    '"""Do not use torch.nn.functional.scaled_dot_product_attention here."""',
    "# F.scaled_dot_product_attention would be cheating\nx = 1",
    "def scaled_dot_product_attention(q, k, v):\n    return q\nscaled_dot_product_attention(1, 2, 3)",
    "import torch\ntorch.softmax(x, -1)",
    'raise NotImplementedError("scaled_dot_product_attention")',
    'print("no scaled_dot_product_attention here", "MultiheadAttention")',
    "class MultiHeadAttention:\n    def f(self, q):\n        return self.scaled_dot_product_attention(q)",
])
def test_no_false_alarms(source):
    found = audit(source)
    assert found.forbidden == [] and found.violations == []


# ------------------------------------------------------------------ the ways out of the subset


@pytest.mark.parametrize("source, code, line", [
    # imports outside the subset, and the forms no exercise allows
    ("import sys", V.IMPORT, 1),
    ("import os", V.IMPORT, 1),
    ("import subprocess", V.IMPORT, 1),
    ("import threading", V.IMPORT, 1),
    ("from concurrent.futures import ThreadPoolExecutor", V.IMPORT, 1),
    ("import pickle", V.IMPORT, 1),
    ("import importlib", V.IMPORT, 1),
    ("import ctypes", V.IMPORT, 1),
    ("import gc", V.IMPORT, 1),
    ("import builtins", V.IMPORT, 1),
    ("import __main__", V.IMPORT, 1),
    ("import grader.sandbox.worker", V.IMPORT, 1),
    ("import probes", V.IMPORT, 1),
    ("from . import x", V.IMPORT, 1),
    ("from torch.nn.functional import *", V.IMPORT, 1),
    ("import inspect\nf = inspect.currentframe()", V.MEMBER, 2),
    ("from inspect import stack", V.MEMBER, 1),
    ("import typing\nm = typing.sys.modules", V.MEMBER, 2),
    ("import operator\ng = operator.attrgetter('x')", V.MEMBER, 2),
    ("class A:\n    import torch", V.IMPORT, 2),
    # torch outside its public API
    ("import torch\nwith torch._C.DisableTorchFunction():\n    pass", V.PRIVATE, 2),
    ("from torch._C import _nn", V.PRIVATE, 1),
    ("import torch\ny = torch.ops.aten.add(a, b)", V.MEMBER, 2),
    ("import torch\ntorch.library.Library('aten', 'IMPL')", V.MEMBER, 2),
    ("import torch\nm = torch.hub.load('x', 'y')", V.MEMBER, 2),
    ("import torch.multiprocessing", V.IMPORT, 1),
    ("import torch\ntorch.distributed.all_reduce(t)", V.MEMBER, 2),
    ("import torch\ntorch.utils.cpp_extension.load_inline('m', '')", V.MEMBER, 2),
    ("import torch\ng = torch.fx.symbolic_trace(m)", V.MEMBER, 2),
    ("import torch\ntorch.serialization.add_safe_globals([f])", V.MEMBER, 2),
    ("import torch\ntorch.overrides._pop_mode()", V.PRIVATE, 2),
    ("import torch\ntorch.overrides.TorchFunctionMode()", V.MEMBER, 2),
    ("import torch\nmods = torch.nn.init.torch.ops", V.MEMBER, 2),
    ("def f(t):\n    with t.__class__.DisableTorchFunctionSubclass():\n        pass", V.PRIVATE, 2),
    # builtins that run code, hand out namespaces or import by name
    ("exec('x = 1')", V.BUILTIN, 1),
    ("run = eval", V.BUILTIN, 1),
    ("code = compile('1', 'f', 'eval')", V.BUILTIN, 1),
    ("state = vars(self)", V.BUILTIN, 1),
    ("g = globals()", V.BUILTIN, 1),
    ("def f():\n    return locals()", V.BUILTIN, 2),
    ("breakpoint()", V.BUILTIN, 1),
    ("help('os')", V.BUILTIN, 1),
    ("f = open('/proc/self/mem', 'r+b')", V.BUILTIN, 1),
    ("m = __import__('os')", V.DUNDER, 1),
    ("b = __builtins__", V.DUNDER, 1),
    ("__builtins__ = {}", V.DUNDER, 1),
    # dunders, frames and code
    ("def f():\n    return f.__globals__", V.DUNDER, 2),
    ("subclasses = ().__class__.__base__.__subclasses__()", V.DUNDER, 1),
    ("def f(fn):\n    return fn.__wrapped__", V.DUNDER, 2),
    ("def f(fn):\n    return getattr(fn, '__wrapped__')", V.DUNDER, 2),
    ("def f(x):\n    return x.__dict__", V.DUNDER, 2),
    ("def f(fr):\n    return fr.f_back", V.FRAME, 2),
    ("def f(g):\n    return g.gi_frame", V.FRAME, 2),
    ("def f(c):\n    return c.co_code", V.FRAME, 2),
    ("try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__", V.DUNDER, 4),
    ("def f(s):\n    match s:\n        case object(__globals__=g):\n            return g", V.DUNDER, 3),
    ("class P:\n    __match_args__ = ('__globals__',)", V.DUNDER, 2),
    # modules only ever as `module.name`
    ("import torch\ndef f(q, k, v, m=torch.nn.functional):\n    return m.relu(q)", V.MODULE_VALUE, 2),
    ("import torch.nn.functional as F\ndef f(m):\n    return m.relu\nf(F)", V.MODULE_VALUE, 4),
    ("import torch\nmods = [torch.nn.functional]", V.MODULE_VALUE, 2),
    ("import torch\ndef f():\n    return torch", V.MODULE_VALUE, 3),
    ("import torch\nF = torch.nn.functional\nF = None", V.MODULE_VALUE, 2),
    ("import torch\nclass A:\n    F = torch.nn.functional", V.MODULE_VALUE, 3),
    ("import torch\nname = 'relu'\nf = getattr(torch.nn.functional, name)", V.MODULE_VALUE, 3),
    ("import torch\nd = dir(torch)", V.MODULE_VALUE, 2),
    # getattr and its kin only ever called
    ("import functools, torch\nf = functools.reduce(getattr, ['nn', 'functional'], torch)", V.ATTRIBUTE_BUILTIN, 2),
    ("g = getattr", V.ATTRIBUTE_BUILTIN, 1),
    ("fs = list(map(getattr, objs, names))", V.ATTRIBUTE_BUILTIN, 1),
    ("import functools\nh = functools.partial(setattr, obj)", V.ATTRIBUTE_BUILTIN, 2),
    # writing a module's code
    ("import torch\ntorch.mul = lambda a, b: a", V.MODULE_WRITE, 2),
    ("import math\nmath.sqrt = abs", V.MODULE_WRITE, 2),
    ("import torch\nsetattr(torch, 'mul', f)", V.MODULE_WRITE, 2),
    # loads that unpickle code
    ("import torch\nm = torch.load(f, weights_only=False)", V.UNSAFE_LOAD, 2),
    ("import torch\nm = torch.load(f, None, p)", V.UNSAFE_LOAD, 2),
    ("import torch\nm = torch.load(f, pickle_module=p)", V.UNSAFE_LOAD, 2),
    ("import torch\nm = torch.load(f, **opts)", V.UNSAFE_LOAD, 2),
    ("from torch import load\nm = load(f, weights_only=flag)", V.UNSAFE_LOAD, 2),
    ("import torch\nloaders = [torch.load]", V.UNSAFE_LOAD, 2),
    # code in a string annotation is evaluated by typing: it is judged as code
    ("def f(x: \"__import__('os')\"):\n    pass", V.DUNDER, 1),
    ("def f() -> 'eval(\"1\")':\n    pass", V.BUILTIN, 1),
    ("from typing import TypeVar\nT = TypeVar('T', bound='vars(x)')", V.BUILTIN, 2),
    # typing evaluates what annotations name: a value there hands it a string the judge never saw
    ("from functools import singledispatch\ns = 'x'\nT = list[s]\n@singledispatch\ndef f(a):\n    pass\n"
     "@f.register\ndef _(a: T):\n    pass", V.ANNOTATION, 8),
    ("kind = make()\ndef f(a: kind.x):\n    pass", V.ANNOTATION, 2),
    ("T = 'x'\ndef f(a: T):\n    pass", V.ANNOTATION, 2),
    ("Batch = list['eval(1)']\ndef f(a: Batch):\n    pass", V.BUILTIN, 1),
    ("import typing\nh = typing.get_type_hints(f)", V.MEMBER, 2),
    ("import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def inner(*a):\n        return fn(*a)\n"
     "    return inner", V.MEMBER, 3),
    ("import types\nns = types.SimpleNamespace(**d)", V.MEMBER, 2),
    # classes and attributes named by data
    ("X = type('X', (), {'__annotations__': {'a': 'x'}})", V.DATA_NAMESPACE, 1),
    ("import typing\nT = typing.TypedDict('T', {'a': s})", V.DATA_NAMESPACE, 2),
    ("import enum\nE = enum.Enum('E', mapping)", V.DATA_NAMESPACE, 2),
    ("class A:\n    def __reduce__(self):\n        return (A, (), state)", V.DUNDER, 2),
])
def test_every_way_out_of_the_subset_is_a_violation_with_its_line(source, code, line):
    found = audit(source)
    assert (code, line) in [(v.code, v.line) for v in found.violations], found.violations
    assert found.blocking and all(v.text for v in found.violations)


def test_a_violation_says_how_to_write_it_instead():
    [v] = audit("import torch\ndef f(m=torch.nn.functional):\n    return m.relu").violations
    assert "`from torch.nn import functional`" in v.fix and v.line == 2 and v.column is not None


# ------------------------------------------------------------------ honest Python


@pytest.mark.parametrize("source", [
    # computed names on the candidate's own objects (two of the corpus's variants do this)
    "def resolve(module, path):\n    for part in path.split('.'):\n        module = getattr(module, part, None)\n"
    "    return module",
    "class A:\n    def __init__(self, names):\n        for name in names:\n            setattr(self, name, 1)",
    "class A:\n    def f(self):\n        if getattr(self, '_cache', None) is None:\n            self._cache = {}\n"
    "        return hasattr(self, 'weight')",
    # the usual module aliases and members
    "import torch\nfrom torch import nn\nimport torch.nn.functional as F\nok = isinstance(x, nn.Module)\n"
    "layers = nn.ModuleList([nn.Linear(2, 2)])\ny = F.softmax(x, -1) + F.gelu(x)",
    "import torch\nF = torch.nn.functional\ny = F.relu(x)",
    "import torch\ntorch.backends.cudnn.deterministic = True",
    "import torch\nd = getattr(torch, 'float32')\nv = torch.__version__",
    "import math\npi = getattr(math, 'pi')",
    "import torch\nstate = torch.load(f)\nstate = torch.load(f, map_location='cpu', weights_only=True)",
    "import torch\nclass N(torch.nn.modules.batchnorm._BatchNorm):\n    pass",
    "from torch.optim.lr_scheduler import _LRScheduler\nclass S(_LRScheduler):\n    pass",
    "from collections.abc import Iterable\nfrom typing import Callable\nimport dataclasses, functools, itertools",
    "import inspect\nsig = inspect.signature(f)",
    # the builtins' names used for the candidate's own things
    "def f(eval, vars):\n    return eval + vars",
    "class M:\n    def eval(self):\n        return self\n    def compile(self):\n        return 1\nm = M().eval()",
    "def f(xs):\n    open = [x for x in xs]\n    return open",
    "from typing import Literal\ndef f(mode: Literal['train', 'eval'] = 'eval'):\n    return mode",
    "def f(x: 'torch.Tensor') -> 'list[int]':\n    return [1]",
    "import torch\nfrom typing import Optional, TypeVar\nT = TypeVar('T')\nBatch = list[torch.Tensor]\n"
    "class Box:\n    pass\ndef f(a: Batch, b: Optional[Box] = None, c: 'T | None' = None) -> dict[str, T]:\n"
    "    return {}",
    "from functools import singledispatch\nfrom torch import nn\n@singledispatch\ndef f(m):\n    pass\n"
    "@f.register\ndef _(m: nn.Linear):\n    pass",
    "import enum\nColor = enum.Enum('Color', 'RED GREEN')\nclass Mode(enum.Enum):\n    TRAIN = 1",
    # dunders a class defines and reads
    "class A:\n    __slots__ = ('a',)\n    def __init__(self):\n        super().__init__()\n"
    "    def __repr__(self):\n        return f'{type(self).__name__}({self.__class__.__name__})'",
    "if __name__ == '__main__':\n    print(__file__, __doc__)",
    "import torch\nwith torch.no_grad():\n    y = x * 2",
    "def f(s):\n    match s:\n        case {'k': v, **rest}:\n            return v\n        case [a, *more]:\n            return a",
])
def test_honest_python_is_not_flagged(source):
    found = audit(source)
    assert found.parsed and found.violations == [] and found.forbidden == [], found.violations


def test_an_exercise_widens_the_subset_member_by_member():
    files = SubsetConfig(modules=["os.path", "os.replace", "tempfile"], builtins=["open"])
    source = ("import os, tempfile\nd = tempfile.mkdtemp()\np = os.path.join(d, 'x')\nos.replace(p, p)\n"
              "f = open(p, 'wb')")
    assert violations(source, subset=files) == []
    assert violations(source) == [(V.IMPORT, 1), (V.IMPORT, 1), (V.MEMBER, 2), (V.MEMBER, 3), (V.MEMBER, 4),
                                  (V.BUILTIN, 5)]
    # os is allowed for its listed members only; the ones no exercise may allow stay out
    assert violations("import os\nos.system('ls')\nos.environ['X'] = '1'", subset=files) == [
        (V.MEMBER, 2), (V.MEMBER, 3)]
    assert violations("import tempfile\nx = tempfile._os", subset=files) == [(V.PRIVATE, 2)]


def test_a_torch_entry_lifts_its_own_denial_only():
    ddp = SubsetConfig(modules=["torch.distributed"])
    assert violations("import torch.distributed as dist\ndist.all_reduce(t)", subset=ddp) == []
    assert violations("import torch.distributed.rpc", subset=ddp) == [(V.IMPORT, 1)]
    foreach = SubsetConfig(modules=["torch._foreach_*"])
    assert violations("import torch\nn = torch._foreach_norm(xs)", subset=foreach) == []
    assert violations("import torch\nn = torch._C._nn", subset=foreach) == [(V.PRIVATE, 2)]


@pytest.mark.parametrize("entry", ["pickle", "sys", "os", "os.system", "os.exec*", "ctypes", "importlib.util",
                                   "inspect", "inspect.currentframe", "torch._C", "torch.ops", "torch.jit",
                                   "builtins", "gc", "not a name"])
def test_an_exercise_cannot_allow_what_no_exercise_may(entry):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="cannot be allowed"):
        SubsetConfig(modules=[entry])


def test_a_file_the_judge_cannot_parse_says_so():
    found = audit("def broken(:")
    assert not found.parsed and found.blocking


def test_scanning_in_many_threads_at_once_never_fails():
    """Batch and validate audit in threads. Without the parse lock, CPython 3.11 raised a spurious
    "AST constructor recursion depth mismatch" SystemError here (garbage collection under a short
    switch interval lets another thread in mid-parse); with it, every audit gives the same result."""
    import gc
    import sys
    import threading
    from pathlib import Path

    source = (Path(__file__).resolve().parent.parent / "grader" / "judge" / "plugin.py").read_text()
    source += "\nimport torch.nn.functional as F\nF.scaled_dot_product_attention(q, k, v)\n"

    def result():
        found = audit(source)
        return [(h.api, h.where) for h in found.forbidden], [(v.code, v.line) for v in found.violations]

    expected = result()
    assert expected[0], "the source must have a hit, or equal results would prove little"

    class Cycle:  # freed only by the cyclic collector, which then runs __del__ mid-parse
        def __del__(self):
            pass

    failures, results = [], []

    def work():
        for _ in range(40):
            junk = [Cycle() for _ in range(50)]
            for j in junk:
                j.me = j
            del junk
            try:
                results.append(result())
            except SystemError as e:
                failures.append(str(e))

    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(5, 1, 1)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
    assert not failures, failures[:3]
    assert len(results) == 160 and all(r == expected for r in results)
