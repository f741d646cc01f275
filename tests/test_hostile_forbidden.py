"""Forbidden-API attacks of the first round (issue 13, item 1), graded, each with the outcome it must get.

Each file under ``tests/hostile/forbidden/`` is a submission to a real exercise (or the toy) that
reaches a forbidden API by a spelling the first audit missed or switches the sandbox's tripwire off.
Since issue 25 every one leaves its exercise's language subset: the judge refuses it from the source,
before anything runs (no sandbox is opened), names each line, and every check is "not run".
In the sandbox the APIs are absent too (a second net that can only take credit away, proven on its
own in test_removal.py): there is nothing to switch off, and a call raises.
"""

from pathlib import Path

import pytest

from grader.host.grading import grade
from grader.reports.model import ViolationCode as V

HOSTILE = Path(__file__).parent / "hostile" / "forbidden"
TOY = Path(__file__).parent / "fixtures" / "toy"
SDPA = "torch.nn.functional.scaled_dot_product_attention"

pytestmark = [pytest.mark.slow]

#: file -> (the exercise it is a submission to, the violations it must be refused with: (code, line))
EXPECTED = {
    "sdpa_math_kernel.py": ("attention", {(V.PRIVATE, 14), (V.PRIVATE, 18)}),
    "vars_lookup.py": ("attention", {(V.BUILTIN, 9), (V.MODULE_VALUE, 9)}),
    "computed_name.py": ("attention", {(V.MODULE_VALUE, 10)}),
    "blind_tripwire.py": (TOY, {(V.IMPORT, 4), (V.MEMBER, 8), (V.MODULE_VALUE, 12)}),
    "pop_the_watch.py": (TOY, {(V.MODULE_VALUE, 11), (V.MODULE_VALUE, 12), (V.DUNDER, 13)}),
    "ddp_setprofile.py": ("ddp_step", {(V.IMPORT, 51), (V.MEMBER, 53)}),
    "ddp_blind_watch.py": ("ddp_step", {(V.MODULE_VALUE, 52), (V.MODULE_VALUE, 54), (V.DUNDER, 55)}),
}


def test_corpus_is_complete():
    assert sorted(p.name for p in HOSTILE.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_first_round_attack_is_refused_before_it_runs(name):
    """Before issue 13 these scored full marks; after it, the tripwire's nets had to see them. Now they never
    run: the score is 0, every check "not run", and each line out of the subset is named in the judge's words."""
    exercise, expected = EXPECTED[name]
    report = grade(exercise, HOSTILE / name, sandbox="local")
    assert report.graded, report.not_graded_reason
    assert report.score == 0 and report.checks and all(c.not_run for c in report.checks)
    assert {(v.code, v.line) for v in report.violations} == expected, report.violations
    assert all(v.how == "static" and v.text for v in report.violations)


def test_the_private_kernel_is_also_named_as_the_forbidden_api_it_computes():
    report = grade("attention", HOSTILE / "sdpa_math_kernel.py", sandbox="local")
    assert {(h.api, h.via, h.where) for h in report.forbidden} == {
        (SDPA, "torch._scaled_dot_product_attention_math", "attention.py:14"),
        (SDPA, "torch._scaled_dot_product_attention_math", "attention.py:18")}
