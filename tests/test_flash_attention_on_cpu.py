"""flash_attention's checks, emulated on the CPU: what each file of its corpus would score on a GPU.

The exercise is GPU-required; it was graded on an H200 once (docs/gpu.md, "What has and has not run on a
GPU"), and CI has no GPU. Its algorithm is not CUDA-specific, so the checks' numeric rules are applied here to the reference,
the variants and every mutant imported on the CPU, with the checks' own helpers
(``_flash_attention_helpers``) and the probes' logic; the memory rule is applied with
``cpu_peak_memory`` (the peak bytes live among the tensors the call made) standing in for the CUDA
allocator's peak, at smaller shapes and without the budget's slack for cuBLAS's workspace. Every
correct file must pass every rule, and every mutant must fail the rules its description names.
What this cannot show: the probe's CUDA calls, the allocator's own counts, the device check.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from grader.corpus import corpus
from grader.exercise import load_exercise
from tests.cpu_peak_memory import measure

pytestmark = pytest.mark.slow  # every file of the corpus through every rule: a few minutes on a loaded CPU

EX = load_exercise("flash_attention")
sys.path.insert(0, str(EX.checks_dir))
import _flash_attention_helpers as helpers  # noqa: E402

sys.path.remove(str(EX.checks_dir))

#: The rules each file fails (the checks' names, shortened to the rule they hold): exactly these, or (``+``) at
#: least these, as its description says.
EXPECTED = {
    "reference": set(), "query_and_key_tiles": set(), "blockwise_softmax_merged_by_logsumexp": set(),
    "split_blocks_state_tuple": set(),
    "no_rescale_of_running_sums": {"matches", "rising", "+"},
    "causal_mask_off_by_one": {"causal", "+"},
    "returns_float32": {"half"},
    "scales_q_in_place": {"unchanged"},
    "ignores_block_size": {"memory"},  # the numbers are right: only the memory checks catch it
    "visits_blocks_last_to_first_nan": {"causal", "+"},
    "materialises_the_scores": {"memory"},
    "no_scaling": {"matches", "+"},
    "drops_the_last_partial_block": {"matches", "edge", "+"},
}


def _inputs(b, h, lq, lk, d, seed, spread=2.0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(b, h, lq, d, generator=g) * spread).to(dtype)
    return q, torch.randn(b, h, lk, d, generator=g).to(dtype), torch.randn(b, h, lk, d, generator=g).to(dtype)


def _expect(module, q, k, v, *, causal, block_size, name):
    out = module.attention_forward(q.clone(), k.clone(), v.clone(), causal=causal, block_size=block_size)
    helpers.expect_attention(out, q, k, v, causal=causal, name=name)


def rule_matches(module):
    for seed in range(8):
        g = torch.Generator().manual_seed(seed)
        lq, lk = (int(x) for x in torch.randint(1, 71, (2,), generator=g))
        block = 4 + seed * 3 % 29
        _expect(module, *_inputs(2, 2, lq, lk, [1, 4, 16, 64][seed % 4], seed, spread=3.0), causal=False,
                block_size=block, name=f"seed {seed}")


def rule_causal(module):
    for seed, (lq, lk, block) in enumerate([(40, 40, 8), (20, 45, 16), (45, 20, 7), (1, 9, 4), (33, 33, 1)]):
        _expect(module, *_inputs(1, 2, lq, lk, 8, seed), causal=True, block_size=block, name=f"{lq}x{lk}")


def rule_rising(module):
    lq, lk, d = 6, 64, 8
    u = torch.ones(d) / d**0.5
    for ramp in (torch.linspace(0, 12, lk), torch.linspace(12, 0, lk)):
        k = (ramp.view(lk, 1) * u).expand(1, 1, lk, d).contiguous()
        q = (torch.linspace(0.5, 1.5, lq).view(lq, 1) * u * d**0.5).expand(1, 1, lq, d).contiguous()
        v = torch.randn(1, 1, lk, d, generator=torch.Generator().manual_seed(7))
        _expect(module, q, k, v, causal=False, block_size=16, name="ramp")


def rule_half(module):
    for dtype in (torch.float16, torch.bfloat16):
        for causal in (False, True):
            _expect(module, *_inputs(2, 2, 48, 80, 32, 11, dtype=dtype), causal=causal, block_size=16, name=str(dtype))


def rule_edge(module):
    for lq, lk, block, causal in [(1, 300, 128, False), (7, 1, 128, False), (33, 33, 1, True), (50, 17, 64, True),
                                  (3, 40, 8, True)]:
        _expect(module, *_inputs(1, 2, lq, lk, 8, lq * 1000 + lk), causal=causal, block_size=block, name="edge")


def rule_unchanged(module):
    q, k, v = _inputs(1, 2, 24, 24, 16, 5)
    copies = [t.clone() for t in (q, k, v)]
    module.attention_forward(q, k, v, causal=True, block_size=8)
    if not all(torch.equal(a, b) for a, b in zip((q, k, v), copies)):
        raise AssertionError("q, k or v changed")


#: Smaller than the checks' (1 GiB score matrices on a shared CPU), with the same proportions of budget to scores.
SMALL = [((1, 4, 512, 512, 64), torch.float32, False), ((1, 4, 512, 512, 64), torch.float16, True),
         ((1, 2, 64, 4096, 16), torch.float32, False)]


def rule_memory(module, peaks: dict | None = None):
    for (b, h, lq, lk, d), dtype, causal in SMALL:
        q, k, v = _inputs(b, h, lq, lk, d, 3, dtype=dtype)
        judge_q = q.clone()  # the judge builds its own copy (shared.values): a q changed in place is another check's
        with torch.no_grad():
            out, peak = measure(module.attention_forward, q, k, v, causal=causal, block_size=32)
        allowed = helpers.budget(b, h, lq, lk, d, dtype, 32, slack=0)
        if peaks is not None:
            peaks[(lq, lk, str(dtype))] = (peak, allowed, b * h * lq * lk * 4)
        if not peak <= allowed:
            raise AssertionError(f"peak {peak / 2**20:.1f} MiB over the budget {allowed / 2**20:.1f} MiB")
        rows = torch.tensor([0, lq // 2, lq - 1])
        want = helpers.attention(judge_q[:, :, rows], k, v, causal=causal, positions=rows)
        tol = helpers.TOLERANCE[dtype]
        torch.testing.assert_close(out[:, :, rows].double(), want, atol=tol.atol, rtol=tol.rtol)


RULES = {"matches": rule_matches, "causal": rule_causal, "rising": rule_rising, "half": rule_half,
         "edge": rule_edge, "unchanged": rule_unchanged, "memory": rule_memory}


def _files(tmp_path: Path):
    for item in corpus(EX, more=True):
        if item.kind in ("stub",) or (item.kind == "mutant" and "forbidden" in (item.description() or "")):
            continue  # the stub raises; the forbidden mutant is the source audit's (tests/test_exercise_folders.py)
        name = "reference" if item.kind == "reference" else item.name
        yield name, item.gradable(tmp_path)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"flash_cpu_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_file_has_an_expectation():
    names = {item.name for item in corpus(EX, more=True) if item.kind in ("variant", "mutant")}
    names -= {"uses_forbidden_sdpa"}
    assert names | {"reference"} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_fails_exactly_the_rules_it_breaks(name, tmp_path):
    """Each rule applied as the check holding it would apply it on a GPU: correct files pass all of them, each
    mutant fails the ones its description names."""
    path = dict(_files(tmp_path))[name]
    failed = {}
    for rule, apply in RULES.items():
        try:
            apply(_load(path, f"{name}_{rule}"))
        except AssertionError as e:
            failed[rule] = str(e).splitlines()[0][:200]
    want = EXPECTED[name] - {"+"}
    if "+" in EXPECTED[name]:
        assert want <= set(failed), (want - set(failed), failed)
    else:
        assert set(failed) == want, failed


def test_the_large_shapes_budgets_hold_the_reference_and_refuse_a_score_matrix():
    """The checks' own shapes, by arithmetic: a (Lq, Lk) float32 score matrix for every head is 2 to 5 times the
    budget. The reference's CPU peak at the small shapes is within three quarters of theirs (measured once at the
    checks' own float32 shapes: 96.6 MiB of 288 at 8192 x 8192, 20.3 MiB of 105 at 1024 x 65536)."""
    for (b, h, lq, lk, d), dtype in [((1, 4, 8192, 8192, 64), torch.float32), ((1, 4, 8192, 8192, 64), torch.float16),
                                     ((1, 2, 1024, 65536, 16), torch.float32)]:
        allowed = helpers.budget(b, h, lq, lk, d, dtype, 128)
        scores = b * h * lq * lk * 4
        assert 2 * allowed <= scores, (lq, lk, allowed / 2**20, scores / 2**20)
    peaks = {}
    rule_memory(_load(next(p for n, p in _files(Path("/nonexistent")) if n == "reference"), "ref"), peaks)
    for (lq, lk, dtype), (peak, allowed, _) in peaks.items():
        assert peak <= 0.75 * allowed, (lq, lk, dtype, peak, allowed)


def test_the_probes_run_on_the_cpu_with_the_allocator_stood_in_for(tmp_path, monkeypatch):
    """probes.py itself, on the CPU: its device is the CPU, torch.cuda's allocator statistics come from
    cpu_peak_memory, so what the probes return and what the checks' helpers make of it is exercised here."""
    from tests.cpu_peak_memory import PeakMemory

    files = dict(_files(tmp_path))
    monkeypatch.setitem(sys.modules, "shared", _load(EX.shared, "shared"))
    tracker = PeakMemory()

    def reset(index):
        tracker.peak = tracker.now

    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: tracker.now)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device=None: tracker.peak)
    monkeypatch.setattr(torch._C, "_cuda_resetPeakMemoryStats", reset, raising=False)
    shape, rows = (1, 2, 512, 512, 32), [0, 1, 255, 511]
    for name, unchanged, fits in [("reference", True, True), ("scales_q_in_place", False, True),
                                  ("materialises_the_scores", True, False)]:
        monkeypatch.setitem(sys.modules, "flash_attention", _load(files[name], name))
        probes = _load(EX.probes, f"probes_{name}")
        monkeypatch.setattr(probes, "_device", lambda: torch.device("cpu"))
        q, k, v = _inputs(1, 2, 24, 24, 16, 5)
        got = probes.forward(q, k, v, True, 8)
        assert got["device"] == "cpu" and got["unchanged"] == [unchanged, True, True]
        if unchanged:
            helpers.expect_attention(got["out"], q, k, v, causal=True, name=name)
        with torch.no_grad(), tracker:
            got = probes.peak_memory(3, list(shape), "float32", False, 32, rows)
        assert got["peak"] > 0 and got["peak_reset"] is False
        assert (got["peak"] <= helpers.budget(*shape, torch.float32, 32, slack=0)) is fits, (name, got["peak"])
        if fits:  # the check's own helper, as it reads the probe's answer
            helpers.expect_within_budget(got, shape=shape, dtype=torch.float32, block_size=32, what=name)
        index = torch.tensor(rows)
        shared = sys.modules["shared"]
        b, h, lq, lk, d = shape
        helpers.expect_attention(got["rows"], shared.values(3, 0, (b, h, lq, d), rows=index),
                                 shared.values(3, 1, (b, h, lk, d)), shared.values(3, 2, (b, h, lk, d)),
                                 causal=False, positions=index, name=name)
