"""A short soak: gradings in a row, honest and hostile, leave no container, file, process or fd behind.

The same script as `bench/soak.py --n 200` (figures in the closing note of issue 7),
cut to the two honest files and the first four hostile ones.
"""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_a_short_soak_leaks_nothing(docker_client, tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "soak.py"), "--n", "6", "--every", "6",
                           "--out", str(tmp_path / "reports")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "leaks: none" in proc.stdout and "graded=6/6" in proc.stdout
    assert len(list((tmp_path / "reports").glob("*.json"))) == 6
