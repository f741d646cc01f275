"""The static scan finds a forbidden API however the source reaches it."""

import pytest

from grader.judge.forbidden import scan

APIS = ["torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention"]
SDPA = APIS[0]


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
    hits = scan(source, APIS, filename="attention.py")
    assert [(h.api, h.where, h.how) for h in hits] == [(SDPA, f"attention.py:{line}", "static")]


def test_finds_a_class_through_its_defining_module():
    hits = scan("import torch\nm = torch.nn.modules.activation.MultiheadAttention(4, 2)", APIS, filename="a.py")
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
    assert scan(source, APIS, filename="a.py") == []


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
