"""The exercise's seed decides which inputs a check draws, whatever the host's environment says.

Hypothesis loads its own "ci" profile (``derandomize=True``: a seed of its own per test function) when a CI
variable such as ``CI`` is set. A judge profile built on whatever profile is loaded would then draw other
inputs on a CI runner than on a candidate's laptop, for the same file and the same seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import TOY

PRINTS = Path(__file__).parent / "fixtures" / "toy_submissions" / "prints.py"
GRADE = """
import sys
from pathlib import Path
from grader.host.grading import grade
report = grade(Path(sys.argv[1]), Path(sys.argv[2]), sandbox="local", answer_alone=False)
print(report.to_json())
"""


def _drawn(tmp_path: Path, name: str, **env: str) -> str:
    """What the hidden property check printed (one line per drawn input), graded in a fresh process."""
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "TF_BUILD")}
    done = subprocess.run([sys.executable, "-c", GRADE, str(TOY), str(PRINTS)], capture_output=True, text=True,
                          timeout=600, env={**clean, "GRADER_DATA_DIR": str(tmp_path / name), **env},
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    [check] = [c for c in report["checks"] if c["id"].endswith("test_scale_property")]
    assert check["status"] == "passed", check
    return check["output"]


def test_a_ci_variable_does_not_change_the_inputs_a_check_draws(tmp_path):
    here = _drawn(tmp_path, "plain")
    assert here.count("\n") >= 5  # one line per drawn input: several inputs to compare
    assert _drawn(tmp_path, "ci", CI="true") == here
