"""The third round's ways out of the subset (tests/hostile/escape/), graded for real: each gave full marks with no
flag before the runtime subset, the no-new-program filter, removal by identity and forbidden families.

- ``attribute_walk.py``: ``warnings.catch_warnings()._module.sys``, then a fresh interpreter computing SDPA;
- ``pickle_default.py``: ``inspect.signature(torch.save)``'s ``pickle_module`` default, then a pickle naming sys;
- ``checkpoint_reloaded.py``: torch's own ``utils/checkpoint.py`` run again as a module of another name;
- ``flex_attention.py``: an unlisted public spelling of attention.

The side channels have their own tests: a hidden check's timing (``tests/test_redact.py``) and a demoted thread
stretching its deadlines (``tests/test_accounting.py``). What the sandbox holds when the runtime subset is
bypassed (a file run raw) is in ``tests/test_no_exec.py`` and ``tests/test_removal_sources.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.host import decision
from grader.host.grading import grade
from grader.reports.model import GuardReason, ViolationCode

ESCAPES = Path(__file__).parent / "hostile" / "escape"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name, exercise, reason", [
    ("attribute_walk.py", "kv_cache_decode", GuardReason.PRIVATE),
    ("pickle_default.py", "kv_cache_decode", GuardReason.MODULE),
    ("checkpoint_reloaded.py", "gradient_checkpointing", GuardReason.PRIVATE),
])
def test_a_way_out_through_a_value_is_refused_where_it_is_reached(name, exercise, reason):
    report = grade(exercise, ESCAPES / name, sandbox="local")
    assert report.graded, report.not_graded_reason
    assert report.score == 0
    [v] = [v for v in report.violations if v.code is ViolationCode.GUARD]
    assert v.how == "runtime" and v.text.startswith(decision.GUARD_TEXT)
    assert decision.GUARD_REASONS[reason][0] in v.text and v.fix == decision.GUARD_REASONS[reason][1]


def test_an_unlisted_spelling_of_a_forbidden_computation_is_forbidden_by_its_family():
    report = grade("kv_cache_decode", ESCAPES / "flex_attention.py", sandbox="local")
    assert report.graded and report.score == 0
    assert {h.api for h in report.forbidden} == {"torch.nn.attention"}
    assert all(c.not_run for c in report.checks)


@pytest.mark.docker
def test_the_attribute_walk_earns_nothing_in_docker_either(no_leftover_containers):
    report = grade("kv_cache_decode", ESCAPES / "attribute_walk.py", sandbox="docker")
    assert report.graded and report.score == 0
    assert any(v.code is ViolationCode.GUARD for v in report.violations)
