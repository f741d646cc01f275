"""The GPU-required exercises on a machine without a GPU, and their judge-side parts that need none.

Without --gpus every one is a usage error naming the GPU (exit 2); with --gpus on a CPU-only host it is
"not graded" naming the missing GPU (exit 3), never a score. What their checks compute from the probes'
numbers (the overlap measure, the memory budget) and what both zones build alike (``shared.py``) is
tested here with numbers given by hand; the checks themselves ran on an H200 (the ``gpu``-marked test below;
docs/gpu.md, "What has and has not run on a GPU").
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
import torch
from click.testing import CliRunner

from grader.cli import main
from grader.exercise import GpuPolicy, load_exercise
from grader.subset.audit import audit_source
from grader.backends import gpu_probe
from grader.corpus import SOLUTIONS_DIR
from grader.host.validation import all_exercise_names
from grader.wire.grant import GpuRequest

REQUIRED = [name for name in all_exercise_names() if load_exercise(name).config.exercise.gpu is GpuPolicy.REQUIRED]


def test_there_are_gpu_required_exercises():
    assert {"flash_attention", "h2d_overlap"} <= set(REQUIRED)


@pytest.mark.parametrize("name", REQUIRED)
def test_without_gpus_a_gpu_required_exercise_is_a_usage_error_naming_the_gpu(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (["submit", name, "--no-history"], ["validate", name, "--sandbox", "local"]):
        r = CliRunner().invoke(main, argv)
        assert r.exit_code == 2, (argv, r.output)
        assert "needs a GPU" in r.output and "--gpus all" in r.output


@pytest.mark.parametrize("name", REQUIRED)
def test_with_gpus_on_a_cpu_only_host_it_is_not_graded_naming_the_missing_gpu(name, tmp_path, monkeypatch):
    if gpu_probe.host_gpus()[0]:
        pytest.skip("this machine has a GPU")
    monkeypatch.chdir(tmp_path)
    # An attempt, not the stub: the untouched stub is answered by the judge alone, with no sandbox to plan for.
    ex = load_exercise(name)
    attempt = tmp_path / "attempt.py"
    attempt.write_bytes((SOLUTIONS_DIR / name / ex.config.exercise.submission).read_bytes())
    r = CliRunner().invoke(main, ["submit", name, str(attempt), "--gpus", "all", "--no-history"])
    assert r.exit_code == 3, r.output
    assert "asked for a GPU, and this machine has none" in " ".join(r.output.split())
    if gpu_probe.local_capabilities().cuda_version is None:
        r = CliRunner().invoke(main, ["submit", name, str(attempt), "--gpus", "all", "--sandbox", "local",
                                      "--no-history"])
        text = " ".join(r.output.split())
        assert r.exit_code == 3 and "NOT GRADED" in text and "a CPU build: no GPU can reach it" in text, r.output


# ---------------------------------------------------------------- flash_attention: the memory measure's guards


@pytest.mark.parametrize("source", [
    "import torch\ntorch.cuda.reset_peak_memory_stats()\n",
    "from torch.cuda import memory\nmemory.reset_peak_memory_stats()\n",
    "import torch\ntorch.cuda.reset_max_memory_allocated()\n",
    "import torch\ntorch.accelerator.reset_peak_memory_stats()\n",
    "import torch\ntorch._C._cuda_resetPeakMemoryStats(0)\n",
    "import torch\ntorch._C._accelerator_resetPeakStats(0)\n",
])
def test_a_submission_that_resets_the_allocators_peak_is_forbidden(source):
    """The attack on the memory checks: resetting the peak during the call hides what was allocated before."""
    ex = load_exercise("flash_attention")
    audit = audit_source(source, ex.config.forbidden, filename="flash_attention.py")
    assert audit.forbidden, source


def _module(name: str, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_flash_attentions_inputs_are_the_same_rows_whole_or_sampled():
    shared = _module("flash_shared", load_exercise("flash_attention").shared)
    whole = shared.values(3, 1, (2, 3, 50, 8))
    rows = torch.tensor([0, 7, 49])
    assert torch.equal(shared.values(3, 1, (2, 3, 50, 8), rows=rows), whole[:, :, rows])
    assert whole.min() >= -1 and whole.max() < 1 and whole.dtype == torch.float32
    assert not torch.equal(shared.values(3, 0, (2, 3, 50, 8)), whole)  # q, k and v differ


# ---------------------------------------------------------------- h2d_overlap: what the checks compute


@pytest.fixture(scope="module")
def overlap():
    ex = load_exercise("h2d_overlap")
    sys.path.insert(0, str(ex.checks_dir))
    try:
        yield _module("h2d_helpers", ex.checks_dir / "_h2d_overlap_helpers.py"), _module("h2d_shared", ex.shared)
    finally:
        sys.path.remove(str(ex.checks_dir))


def _seconds(copy_ms: float, compute_ms: float, call_ms: float, *, count: int = 6, runs: int = 7,
             pair_ms: float | None = None) -> dict:
    one_copy, one_compute = copy_ms / count, compute_ms / count
    pair = pair_ms if pair_ms is not None else max(one_copy, one_compute)
    return {"copies": [copy_ms / 1e3] * runs, "compute": [compute_ms / 1e3] * runs, "pair": [pair / 1e3] * runs,
            "call": [call_ms / 1e3] * runs}


def test_the_overlap_measure_tells_a_pipeline_from_a_serial_loop(overlap):
    helpers, _ = overlap
    # 6 batches of 2 ms copy and 2 ms compute: one batch ahead takes 7 x 2 ms, one after the other 24 ms.
    pipelined = helpers.overlap_from(_seconds(12, 12, 14), 6)
    serial = helpers.overlap_from(_seconds(12, 12, 24.5), 6)
    assert pipelined.overlap == pytest.approx(10 / 12) and pipelined.overlap >= helpers.MIN_OVERLAP
    assert serial.overlap < 0 < helpers.MIN_OVERLAP
    assert pipelined.pair_capability == pytest.approx(1.0)
    unbalanced = helpers.overlap_from(_seconds(6, 18, 19), 6)  # calibration off by 3x: still measured against copies
    assert unbalanced.overlap == pytest.approx(5 / 6)


def test_a_gpu_that_cannot_overlap_is_told_apart_from_a_candidate_that_does_not(overlap):
    helpers, _ = overlap
    measured = helpers.overlap_from(_seconds(12, 12, 24, pair_ms=4.0), 6)  # its own copy beside a kernel: serial
    assert measured.pair_capability == pytest.approx(0.0) and measured.pair_capability < helpers.MIN_CAPABILITY


@pytest.mark.parametrize("bad", [[], [0.0], [float("nan")], [-1.0], [1e9], ["1"]])
def test_times_that_are_not_seconds_are_the_graders_failure(overlap, bad):
    helpers, _ = overlap
    with pytest.raises(RuntimeError, match="not positive seconds"):
        helpers.median(bad)


def test_h2d_batches_sampled_are_the_batches_and_work_is_elementwise(overlap):
    _, shared = overlap
    whole = shared.batch(5, 2, 3 * shared.TILE + 17)
    positions = torch.tensor([0, 1, shared.TILE - 1, shared.TILE, 3 * shared.TILE + 16])
    assert torch.equal(shared.batch_at(5, 2, positions), whole[positions])
    assert (shared.batch(5, 3, 100) != shared.batch(5, 2, 100)).all()  # batches differ everywhere
    x = whole.clone()
    y = shared.work(x, 5)
    assert torch.equal(x, whole)  # fn's input is left alone
    assert torch.equal(shared.work(whole[positions], 5), y[positions])  # a sampled position needs only its input


# ---------------------------------------------------------------- on a GPU machine (never run here)


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("name", REQUIRED)
def test_on_a_gpu_the_corpus_validates_with_every_check_run(name, gpu_sandbox):
    """Reference and variants full marks, stub 0, every mutant caught, no check skipped: `grader validate NAME
    --gpus all`, in whichever sandbox this GPU machine has."""
    from grader.host.validation import validate_exercise

    result = validate_exercise(name, sandbox=gpu_sandbox, gpus=GpuRequest(count=-1), jobs=1)
    assert result.ok, [(v.path.name, v.problem) for v in result.verdicts if not v.ok] + result.problems
    reference = next(v for v in result.verdicts if v.kind == "reference")
    assert reference.report.environment.sandbox_gpus and not result.skipped_checks()


def test_the_smoke_script_without_a_cuda_torch_says_so(tmp_path):
    """scripts/gpu-smoke.sh --sandbox local on a machine whose nvidia-smi lists a GPU (a stand-in here) but whose
    Python's torch cannot use one: exit 1 with one line saying why, before grading anything."""
    import os
    import subprocess
    from pathlib import Path

    if gpu_probe.local_capabilities().cuda_version is not None:
        pytest.skip("this Python's torch is a CUDA build")
    fake = tmp_path / "bin" / "nvidia-smi"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'GPU 0: A stand-in (UUID: GPU-0)'\n")
    fake.chmod(0o755)
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}", "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(repo / "scripts" / "gpu-smoke.sh"), "--sandbox", "local"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gpu-smoke: FAILED: this Python's torch cannot use the GPU" in done.stderr
    assert "a CPU build or sees no GPU" in done.stderr
