"""How the repository's tests hold its exercises to the authoring rules: the same code `grader validate` runs.

Each rule lives in ``grader.authoring`` (one module per concern); a test here names the
concern it holds and fails listing every finding, as ``grader validate`` prints them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.authoring import Concern, Finding, check_exercise
from grader.corpus import SOLUTIONS_DIR
from grader.exercise import REPO_ROOT, load_exercise


def findings(name: str, *concerns: Concern, solutions_dir: Path = SOLUTIONS_DIR) -> list[Finding]:
    """The findings of ``concerns``' rules on the repository's exercise ``name`` (errors and warnings alike)."""
    return check_exercise(load_exercise(name), solutions_dir, concerns=concerns)


def holds(found: list[Finding]) -> None:
    """Fail listing every finding (``file:line: severity [rule] message``), relative to the repository."""
    if found:
        pytest.fail("\n".join(f.format(REPO_ROOT) for f in found), pytrace=False)
