"""Forbidden-API attacks (issue 13, item 1), graded in real Docker, each with the outcome it must get.

Each file under ``tests/hostile/forbidden/`` is a submission to a real exercise (or the toy) that
reaches a forbidden API by a spelling the old scan missed or tries to switch the sandbox's old
tripwire off. The judge's source audit decides; in the sandbox the APIs are absent (issue 25), a
second net that can only take credit away: there is nothing to switch off, and the call raises.
"""

from pathlib import Path

import pytest

from grader.grading import grade
from grader.reports.model import FindingKind, Status

HOSTILE = Path(__file__).parent / "hostile" / "forbidden"
TOY = Path(__file__).parent / "fixtures" / "toy"
SDPA = "torch.nn.functional.scaled_dot_product_attention"

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: file -> the exercise it is a submission to
EXERCISE = {
    "sdpa_math_kernel.py": "attention",
    "vars_lookup.py": "attention",
    "computed_name.py": "attention",
    "blind_tripwire.py": TOY,
    "pop_the_watch.py": TOY,
    "ddp_setprofile.py": "ddp_step",
    "ddp_blind_watch.py": "ddp_step",
}


def test_corpus_is_complete():
    assert sorted(p.name for p in HOSTILE.glob("*.py")) == sorted(EXERCISE)


def _graded(name):
    report = grade(EXERCISE[name], HOSTILE / name, sandbox="docker")
    assert report.graded, report.not_graded_reason
    return report


def _tampering(report, how):
    return [f for f in report.findings if f.kind is FindingKind.TAMPERING and f.how == how]


def _loses_every_check_that_reached_it(report, api=SDPA, *, at_most=0.5):
    seen = {h.check for h in report.forbidden if h.how == "runtime" and h.api == api}
    assert seen, "no call of the removed API was recorded"
    for c in report.checks:
        if c.id in seen:
            assert c.status is Status.FAILED and c.score == 0 and api in c.message, (c.id, c.message)
    assert report.score < report.max_score * at_most
    return seen


@pytest.mark.parametrize("name", ["sdpa_math_kernel.py", "vars_lookup.py"])
def test_the_math_kernel_under_a_resolvable_name_is_the_forbidden_sdpa(name, no_leftover_containers):
    """Before issue 13: 22/22, no flag (the kernel's name is not SDPA's, and vars() was not read)."""
    report = _graded(name)
    static = [h for h in report.forbidden if h.how == "static"]
    assert static and {(h.api, h.via) for h in static} == {(SDPA, "torch._scaled_dot_product_attention_math")}
    assert any(f.kind is FindingKind.PRIVATE_TORCH for f in report.findings)
    _loses_every_check_that_reached_it(report)


def test_the_math_kernel_under_a_computed_name_is_flagged_and_absent_in_the_sandbox(no_leftover_containers):
    report = _graded("computed_name.py")
    assert [f.what for f in report.findings if f.kind is FindingKind.DYNAMIC_ACCESS] == \
           ["getattr(torch, <computed name>)"]
    _loses_every_check_that_reached_it(report)


def test_patching_the_worker_through_sys_modules_costs_everything(no_leftover_containers):
    """Before issue 13: full marks (the tripwire's take() patched to report nothing)."""
    report = _graded("blind_tripwire.py")
    assert report.score == 0 and [f.what for f in _tampering(report, "static")] == ["sys.modules"]
    assert all("tampers with the grader: sys.modules at line 8" in c.message for c in report.checks)


def test_popping_the_watch_and_unwrapping_find_nothing_to_switch_off(no_leftover_containers):
    """Before issue 25 the worker saw its mode popped and reported it; now there is no mode to pop,
    no ``__wrapped__`` behind torch.mul's stand-in, and every check that multiplied through it loses."""
    report = _graded("pop_the_watch.py")
    seen = _loses_every_check_that_reached_it(report, "torch.mul", at_most=1)
    assert {c.id for c in report.checks if c.score > 0}.isdisjoint(seen) and not _tampering(report, "runtime")


def test_ddp_setprofile_none_costs_everything(no_leftover_containers):
    report = _graded("ddp_setprofile.py")
    assert report.score == 0 and [f.what for f in _tampering(report, "static")] == ["sys.setprofile"]


def test_ddp_sampler_through_computed_names_is_absent_in_the_sandbox(no_leftover_containers):
    """Before issue 25 the probes' profiler watch reported itself switched off; now DistributedSampler
    cannot be built, whatever name reaches it, and every shard_indices check that reaches it (all but the
    one whose arguments are refused first) loses its credit."""
    report = _graded("ddp_blind_watch.py")
    assert not _tampering(report, "static") and not _tampering(report, "runtime")
    seen = _loses_every_check_that_reached_it(report, "torch.utils.data.DistributedSampler", at_most=1)
    credited = {c.id for c in report.checks if c.score > 0}
    assert credited.isdisjoint(seen) and all("test_shard" not in c or "rejects" in c for c in credited), credited
