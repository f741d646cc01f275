"""Checks that do not pass by luck: each grades real code whose mistake shows only on inputs small cases never make.

Each file under ``fixtures/real_code/`` is code as people publish it, behind the thinnest adapter to the
exercise's names; graded in the local sandbox, the check that holds the rule it breaks must fail.
"""

from pathlib import Path

from grader.host.grading import grade
from grader.reports.model import Status

REAL_CODE = Path(__file__).resolve().parent / "fixtures" / "real_code"


def _statuses(exercise: str, fixture: str, submission: str, tmp_path: Path) -> dict[str, Status]:
    sub = tmp_path / submission
    sub.write_text((REAL_CODE / fixture).read_text())
    report = grade(exercise, sub, sandbox="local")
    assert report.graded, report.not_graded_reason
    return {c.id.split("::")[-1].split("[")[0]: c.status for c in report.checks}


def test_llamas_unstable_top_p_sort_loses_the_tie_check(tmp_path):
    """kv_cache_decode: vocabularies of 2-8 sort stably on the CPU, so Llama's unstable sort earned the tie point."""
    statuses = _statuses("kv_cache_decode", "kv_cache_decode_llama_top_p.py", "kv_cache_decode.py", tmp_path)
    assert statuses["test_ties_rank_lower_index_first"] is Status.FAILED, statuses
    assert statuses["test_decode_matches_causal_attention"] is Status.PASSED, statuses
