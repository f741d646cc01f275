"""The judge's source audit: every spelling of a forbidden API resolves, every tampering, dynamic
and private form is found with its line, and honest Python is left alone."""

import pytest

from grader.exercise import ForbiddenConfig
from grader.judge.audit import audit_source
from grader.reports.model import FindingKind

SDPA = "torch.nn.functional.scaled_dot_product_attention"
MHA = "torch.nn.MultiheadAttention"
ATTENTION = ForbiddenConfig(apis=[SDPA, MHA], kernels={SDPA: ["*scaled_dot_product*", "*flash_attention*"],
                                                      MHA: ["*multi_head_attention*"]})


def scan(source, apis, *, filename):
    """Forbidden hits for a plain list of public names (no kernels)."""
    return audit_source(source, ForbiddenConfig(apis=apis), filename=filename).forbidden


def kinds(source, config=ATTENTION):
    return [(f.kind, f.where.rsplit(":", 1)[-1]) for f in audit_source(source, config, filename="a.py").findings]


def hits(source, config=ATTENTION):
    return [(h.api, h.where.rsplit(":", 1)[-1]) for h in audit_source(source, config, filename="a.py").forbidden]


@pytest.mark.parametrize("source, line", [
    ("import torch\ntorch.nn.functional.scaled_dot_product_attention(q, k, v)", 2),
    ("import torch.nn.functional as F\nF.scaled_dot_product_attention(q, k, v)", 2),
    ("from torch.nn import functional as F\n\nF.scaled_dot_product_attention(q, k, v)", 3),
    ("from torch.nn.functional import scaled_dot_product_attention as fast", 1),
    ("from torch.nn.functional import *\nscaled_dot_product_attention(q, k, v)", 2),
    ("import torch.nn.functional as F\nf = getattr(F, 'scaled_dot_product_attention')", 2),
    ("import torch as T\nx = T.nn.functional.scaled_dot_product_attention", 2),
    ("import importlib\nF = importlib.import_module('torch.nn.functional')\n"
     "getattr(F, 'scaled_dot_product_attention')(q, k, v)", 3),
])
def test_finds_sdpa_through_aliases(source, line):
    hits = scan(source, [SDPA, MHA], filename="attention.py")
    assert [(h.api, h.where, h.how) for h in hits] == [(SDPA, f"attention.py:{line}", "static")]


def test_finds_a_class_through_its_defining_module():
    hits = scan("import torch\nm = torch.nn.modules.activation.MultiheadAttention(4, 2)", [SDPA, MHA], filename="a.py")
    assert [h.api for h in hits] == ["torch.nn.MultiheadAttention"]


@pytest.mark.parametrize("source", [
    '"""Do not use torch.nn.functional.scaled_dot_product_attention here."""',
    "# F.scaled_dot_product_attention would be cheating\nx = 1",
    "def scaled_dot_product_attention(q, k, v):\n    return q\nscaled_dot_product_attention(1, 2, 3)",
    "import torch\ntorch.softmax(x, -1)",
    "def broken(:",
    'raise NotImplementedError("scaled_dot_product_attention")',
    'print("no scaled_dot_product_attention here", "MultiheadAttention")',
])
def test_no_false_alarms(source):
    assert scan(source, [SDPA, MHA], filename="a.py") == []


@pytest.mark.parametrize("source", [
    "import torch.distributed.algorithms.join",
    "from torch.distributed.algorithms.model_averaging.utils import average_parameters",
    "from torch.distributed import algorithms",
    "import torch.distributed as dist\nh = dist.algorithms.ddp_comm_hooks",
])
def test_anything_inside_a_forbidden_package_is_a_hit(source):
    hits = scan(source, ["torch.distributed.algorithms"], filename="ddp_step.py")
    assert [h.api for h in hits] == ["torch.distributed.algorithms"]


def test_scanning_in_many_threads_at_once_never_fails():
    """Batch and validate scan in threads. Without the parse lock, CPython 3.11 raised a spurious
    "AST constructor recursion depth mismatch" SystemError here (garbage collection under a short
    switch interval lets another thread in mid-parse); with it, every scan gives the same hits."""
    import gc
    import sys
    import threading
    from pathlib import Path

    source = (Path(__file__).resolve().parent.parent / "grader" / "judge" / "plugin.py").read_text()
    source += "\nimport torch.nn.functional as F\nF.scaled_dot_product_attention(q, k, v)\n"
    expected = [(h.api, h.where) for h in scan(source, ["torch.nn.functional.scaled_dot_product_attention"],
                                                filename="s.py")]
    assert expected, "the source must have a hit, or equal results would prove little"

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
                hits = scan(source, ["torch.nn.functional.scaled_dot_product_attention"], filename="s.py")
                results.append([(h.api, h.where) for h in hits])
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


# ------------------------------------------------------------------ every spelling reaches the API


@pytest.mark.parametrize("source, api, line", [
    ("import torch as t\nt._scaled_dot_product_attention_math(q, k, v)", SDPA, 2),
    ("import torch\ntorch.ops.aten.scaled_dot_product_attention.default(q, k, v)", SDPA, 2),
    ("import torch\ntorch.ops.aten._scaled_dot_product_flash_attention(q, k, v)", SDPA, 2),
    ("import torch\ntorch._C._nn.scaled_dot_product_attention(q, k, v)", SDPA, 2),
    ("from torch import nn\nnn.functional.scaled_dot_product_attention(q, k, v)", SDPA, 2),
    ("import torch.nn.functional as F\nf = F.scaled_dot_product_attention\nf(q, k, v)", SDPA, 2),
    ("import torch.nn.functional as F\nf = vars(F)['scaled_dot_product_attention']", SDPA, 2),
    ("import torch.nn.functional as F\nf = F.__dict__['scaled_dot_product_attention']", SDPA, 2),
    ("import torch.nn.functional as F\nf = F.__dict__.get('scaled_dot_product_attention')", SDPA, 2),
    ("import torch.nn.functional as F\nd = vars(F)\nf = d['scaled_dot_product_attention']", SDPA, 3),
    ("import torch\naten = torch.ops.aten\nx = aten._scaled_dot_product_attention_math(q)", SDPA, 3),
    ("from torch import _C\n_C._nn.scaled_dot_product_attention(q, k, v)", SDPA, 2),
    ("T = __import__('torch')\nT._scaled_dot_product_attention_math(q, k, v)", SDPA, 2),
    ("import operator\nimport torch.nn.functional as F\nf = operator.attrgetter('scaled_dot_product_attention')(F)",
     SDPA, 3),
    ("from torch import *\n_scaled_dot_product_attention_math(q, k, v)", SDPA, 2),
    ("from torch.nn.modules.activation import MultiheadAttention as M", MHA, 1),
    ("import torch\ntorch.nn.MultiheadAttention.forward(m, x, x, x)", MHA, 2),
    ("import torch.nn.functional as F\nF.multi_head_attention_forward(x)", MHA, 2),
    ("import torch\nx = torch._native_multi_head_attention", MHA, 2),
])
def test_every_spelling_resolves_to_the_public_api(source, api, line):
    assert (api, str(line)) in hits(source)


def test_a_hit_names_the_spelling_it_came_through():
    [hit] = audit_source("import torch\ntorch._scaled_dot_product_attention_math(q, k, v)", ATTENTION,
                         filename="attention.py").forbidden
    assert (hit.api, hit.via, hit.where) == (SDPA, "torch._scaled_dot_product_attention_math", "attention.py:2")


def test_a_pattern_names_kernels_not_the_module_they_live_in():
    custom = ForbiddenConfig(apis=["torch.nn.Linear"], kernels={"torch.nn.Linear": ["*linear*"]})
    assert hits("import torch\nx = torch.nn.modules.linear.Identity()", custom) == []
    assert hits("import torch\nx = torch._C._nn.linear(a, w)", custom) == [("torch.nn.Linear", "2")]
    by_name = ForbiddenConfig(apis=["torch.nn.functional.linear"])  # the module torch.nn.modules.linear is not it
    assert hits("from torch.nn.modules.linear import Identity", by_name) == []


# ------------------------------------------------------------------ tampering, dynamic access, private torch

T, D, P = FindingKind.TAMPERING, FindingKind.DYNAMIC_ACCESS, FindingKind.PRIVATE_TORCH


@pytest.mark.parametrize("source", [
    "import __main__",
    "import sys\nw = sys.modules['__main__']",
    "import sys\nmods = sys.modules",
    "from sys import modules",
    "import sys\nsys.setprofile(None)",
    "import sys\nsys.settrace(None)",
    "import sys\nframe = sys._getframe(1)",
    "import threading\nthreading.setprofile(None)",
    "import gc\nobjs = gc.get_objects()",
    "import gc\nrefs = gc.get_referrers(x)",
    "import ctypes",
    "from ctypes import pythonapi",
    "import inspect\nframe = inspect.currentframe()",
    "import inspect\nframes = inspect.stack()",
    "def f(fr):\n    return fr.f_back.f_globals",
    "try:\n    1 / 0\nexcept Exception as e:\n    fr = e.__traceback__.tb_frame",
    "frame = gen.gi_frame",
    "def f():\n    return f.__globals__",
    "subclasses = ().__class__.__base__.__subclasses__()",
    "import builtins\nbuiltins.print = None",
    "__builtins__['print'] = None",
    "exec('x = 1')",
    "run = eval",
    "code = compile('1', 'f', 'eval')",
    "m = __import__(name)",
    "import importlib\nm = importlib.import_module(name)",
    "import importlib\nimport torch\nimportlib.reload(torch)",
    "import torch\ntorch.overrides._pop_mode()",
    "from torch.overrides import _pop_mode_temporarily",
    "import torch\nwith torch._C.DisableTorchFunction():\n    pass",
    "import torch\nx = torch._C._disabled_torch_function_impl",
    "import torch\ntorch._C._pop_torch_function_stack()",
    "import grader.sandbox.worker",
    "from grader import protocol",
    "import probes",
    "import torch\nmods = torch.sys.modules",
    "import os\nmods = os.sys.modules",
    "import torch\ntorch.mul = lambda a, b: a",
    "import torch\nsetattr(torch, name, f)",
    "import torch\nvars(torch)[name] = f",
    "import torch\ntorch.__dict__.update(mul=f)",
    "import sys\nm = getattr(sys, name)",
])
def test_tampering_is_found_with_its_line(source):
    lines = source.splitlines()
    found = kinds(source)
    tampering = [int(line) for kind, line in found if kind is T]
    assert tampering, found
    assert all(lines[n - 1].strip() not in ("", "pass") for n in tampering), found  # the line that does it


@pytest.mark.parametrize("source", [
    "import torch.nn.functional as F\nf = getattr(F, name)",
    "import torch.nn.functional as F\nf = vars(F)[name]",
    "import torch.nn.functional as F\nf = F.__dict__[name]",
    "import torch.nn.functional as F\nf = F.__dict__.get(name)",
    "import importlib\nF = importlib.import_module('torch.' + name)",
    "import importlib\nF = importlib.import_module(f'torch.nn.{name}')",
    "from torch.nn.functional import *",
    "import torch\nnames = dir(torch.nn.functional)",
    "import torch\nfor k, v in vars(torch).items():\n    pass",
    "from torch import nn\nf = getattr(nn.functional, 'scaled_dot' + '_product_attention')",
])
def test_dynamic_access_to_a_module_is_a_flag(source):
    found = kinds(source)
    assert any(kind is D for kind, _ in found) and not any(kind is T for kind, _ in found), found


@pytest.mark.parametrize("source", [
    "import torch\ns = torch._C._get_tracing_state()",
    "import torch\ny = torch.ops.aten.add(a, b)",
    "from torch._C import _nn",
    "import torch\nclass N(torch.nn.modules.batchnorm._BatchNorm):\n    pass",
    "import torch\ny = torch._foreach_norm(xs)",
])
def test_private_torch_is_a_flag(source):
    assert [kind for kind, _ in kinds(source)] == [P]


@pytest.mark.parametrize("source", [
    "class A:\n    def f(self, name):\n        return getattr(self, name)",
    "import torch\nlayer = torch.nn.Linear(2, 2)\nw = getattr(layer, name)",
    "def f(model, name):\n    return model.get_submodule(name)",
    "def f(model):\n    return [n for n, m in model.named_modules()]",
    "class A:\n    def __init__(self, name, v):\n        super().__init__()\n        setattr(self, name, v)",
    "import torch\nfrom torch import nn\nok = isinstance(x, nn.Module)\nlayers = nn.ModuleList([nn.Linear(2, 2)])",
    "import torch\ntorch.backends.cudnn.deterministic = True",
    "if __name__ == '__main__':\n    print('hi')",
    "import re\npattern = re.compile('x')",
    "import inspect\nsig = inspect.signature(f)",
    "import sys\nprint(sys.version_info, sys.float_info.epsilon)",
    "import gc\ngc.collect()",
    "import torch\nd = getattr(torch, 'float32')",
    "import math\npi = getattr(math, 'pi')",
    "state = vars(self)\nopts = dict(vars(args))",
    "import torch\nv = torch.__version__",
    "import importlib.metadata\nv = importlib.metadata.version('torch')",
    "import torch.nn.functional as F\ny = F.softmax(x, -1) + F.gelu(x)",
    "def scaled_dot_product_attention(q, k, v):\n    return q\nscaled_dot_product_attention(1, 2, 3)",
])
def test_honest_python_is_not_flagged(source):
    audit = audit_source(source, ATTENTION, filename="a.py")
    assert audit.parsed and audit.findings == [] and audit.forbidden == []


def test_a_file_the_judge_cannot_parse_says_so():
    assert not audit_source("def broken(:", ATTENTION, filename="a.py").parsed
