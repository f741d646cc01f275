"""50 candidates at once on loopback (bounded: one run each, within 20 s): every request is answered.

The cohort of ``bench/serve_load.py`` (open the link, start, open the editor, save three times,
run the checks, read the run's state once) against a real ``grader serve`` with one worker, on
SQLite and on PostgreSQL. Only answers are asserted, never a time: the latency figures are the
bench's, run on demand (``bench/README.md``). A run that is still queued counts as answered.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from bench.serve_load import cohort, assessment  # noqa: E402
from tests.conftest import TOY  # noqa: E402
from tests.serve_fixtures import PASSWORD  # noqa: E402

pytestmark = pytest.mark.slow
CANDIDATES = 50


def test_fifty_candidates_running_checks_at_once_all_get_answers(served):
    server, _ = served
    links = assessment(server.url, "pat", PASSWORD, CANDIDATES)
    assert len(links) == CANDIDATES
    figures = cohort(server.url, links, (TOY / "solution.py").read_text(), spread=20, until_graded=False)
    assert figures.failures == [], server.log.read_text(errors="replace")[-3000:]
    assert figures.answered == figures.asked == CANDIDATES * 8  # link, start, editor, 3 saves, run, one poll
    assert figures.runs_queued == CANDIDATES  # every run was taken (queued, running or graded), none refused
