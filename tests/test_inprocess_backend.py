"""The in-process backend (authors and the benchmark): copies in and out, writes kept out of the repo."""

import os
from pathlib import Path

import torch

from grader.sandbox.inprocess_backend import InProcessSandbox

PROBES = Path(__file__).parent / "fixtures" / "probe_kit" / "probes.py"


def test_relative_paths_copies_and_a_scratch_folder(tmp_path, monkeypatch):
    (tmp_path / "cand.py").write_text(
        "def write(x):\n"
        "    x.add_(1)\n"
        "    open('left_behind.txt', 'w').write('x')\n"
        "    return x\n")
    monkeypatch.chdir(tmp_path)
    box = InProcessSandbox(PROBES, Path("cand.py"), "cand")
    sent = torch.zeros(2)
    result = box.call("run", ["write", sent])
    assert result.ok and torch.equal(result.value, torch.ones(2))
    assert torch.equal(sent, torch.zeros(2))  # the candidate changed a copy, not the judge's tensor
    assert not (tmp_path / "left_behind.txt").exists() and os.getcwd() == str(tmp_path)
    box.close()
