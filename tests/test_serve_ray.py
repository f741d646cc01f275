"""``grader serve --engine ray``: a worker hands each claimed grading to Ray as ``grader batch --engine ray`` does.

One worker with two slots on a Ray started in this process (loopback, no dashboard) grades two
candidates' runs, scored as the local engine scores them (the visible checks: 3/3 and 0/3). The database plays no part in
how a job reaches Ray, so this runs on SQLite only (the queue itself is tested on both).
"""

from __future__ import annotations

import pytest

pytest.importorskip("ray")
pytest.importorskip("fastapi")

from sqlalchemy import select  # noqa: E402

from grader.serve import queue  # noqa: E402
from grader.serve.models import Grading, Worker  # noqa: E402
from grader.serve.sealed import stored_report  # noqa: E402
from grader.serve.settings import WorkerSettings  # noqa: E402
from grader.serve.worker import GradingWorker  # noqa: E402
from tests.conftest import TOY  # noqa: E402
from tests.serve_fixtures import Candidate, invite, new_assessment, sign_in  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_ray_worker_grades_what_it_claims(client, service, monkeypatch):
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    links = invite(client, csrf, aid, "ann", "ben")
    for name, text in (("ann", (TOY / "solution.py").read_text()), ("ben", "def scale(x, factor):\n    return x\n")):
        c = Candidate(service, links[name])
        c.start()
        assert c.run(text, 1).status_code == 200
    worker = GradingWorker(WorkerSettings(worker_id="ray-worker", database=service.db.url, engine="ray", slots=2,
                                          exercise_root=service.settings.exercise_root, poll_s=0.2))
    try:
        for _ in range(3000):
            worker.step()
            with service.db.read() as s:
                if not s.scalars(select(Grading).where(Grading.status.in_((queue.QUEUED, queue.RUNNING)))).all():
                    break
    finally:
        worker.close()
    with service.db.read() as s:
        gradings = s.scalars(select(Grading).order_by(Grading.id)).all()
        assert s.get(Worker, "ray-worker").engine == "ray"
        reports = [stored_report(g, service.key)[0] for g in gradings]
    assert [g.status for g in gradings] == [queue.GRADED, queue.GRADED]
    assert [(r.score, r.max_score) for r in reports] == [(3.0, 3.0), (0.0, 3.0)]  # the visible checks
    assert {r.environment.sandbox for r in reports} == {"local"}
