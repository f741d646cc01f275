"""A worker killed and the server restarted mid-grading: every hand-in is graded exactly once, nothing is lost.

``grader serve`` runs in a process of its own (SQLite, then PostgreSQL) with one local worker
process. Two candidates hand in; while a hand-in is being graded its worker is killed
(``kill -9``), and while the next one is, the whole server is (its workers die with it).
A new server on the same database puts both back and grades everything: each hand-in has
one result, from one attempt that ended "graded", and the lost attempts are on record.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import select  # noqa: E402

from grader.serve import queue  # noqa: E402
from grader.serve.models import Grading, GradingAttempt, Worker  # noqa: E402
from grader.serve.sealed import stored_report  # noqa: E402
from grader.serve.settings import MAX_ATTEMPTS  # noqa: E402
from tests.conftest import TOY  # noqa: E402
from bench.serve_load import assessment  # noqa: E402
from tests.serve_fixtures import PASSWORD, csrf_of  # noqa: E402

pytestmark = pytest.mark.slow
SOLUTION = (TOY / "solution.py").read_text()


def _running(service) -> tuple[int, str] | None:
    with service.db.read() as s:
        row = s.execute(select(Grading.id, Grading.worker_id).where(Grading.status == queue.RUNNING)).first()
    return None if row is None else (row[0], row[1])


def _wait(what, predicate, timeout: float = 180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (found := predicate()) is not None and found is not False:
            return found
        time.sleep(0.1)
    raise AssertionError(f"waited {timeout:g} s for {what}")


def test_kill_a_worker_and_restart_the_server_mid_grading_every_hand_in_is_graded_once(served):
    import httpx

    server, service = served
    links = assessment(server.url, "pat", PASSWORD, 2)  # the load bench's: the toy, in the local sandbox
    for link in links:
        c = httpx.Client(base_url=server.url, timeout=30, follow_redirects=True)
        token = csrf_of(c.get(link).text)
        c.post("/take/start", data={"csrf": token})
        assert c.post("/take/x/toy/draft", json={"text": SOLUTION, "seq": 1},
                      headers={"X-CSRF-Token": token}).status_code == 200
        assert c.post("/take/handin", data={"csrf": token}).status_code == 200

    first, worker_id = _wait("a hand-in being graded", lambda: _running(service))
    with service.db.read() as s:
        pid = s.scalar(select(Worker.pid).where(Worker.id == worker_id))
    os.kill(pid, signal.SIGKILL)  # the worker, mid-grading
    _wait("another worker grading", lambda: (r := _running(service)) is not None and r[1] != worker_id and r)
    server.kill()  # the server, mid-grading (its worker dies with it)
    assert _running(service) is not None  # left "running" by the dead: a restart must put it back
    server.start()
    _wait("every hand-in graded", lambda: _all_finished(service))

    with service.db.read() as s:
        gradings = s.scalars(select(Grading).where(Grading.kind == queue.HANDIN).order_by(Grading.id)).all()
        attempts = s.scalars(select(GradingAttempt).order_by(GradingAttempt.id)).all()
        assert len(gradings) == 2  # one per candidate: nothing lost, nothing doubled
        for g in gradings:
            report, problem = stored_report(g, service.key)
            assert (g.status, problem, report.score, report.max_score) == (queue.GRADED, "", 6.0, 6.0)
            mine = [a.outcome for a in attempts if a.grading_id == g.id]
            assert mine.count("graded") == 1 and set(mine) <= {"graded", "lost"}, mine
        lost = [a for a in attempts if a.outcome == "lost"]
        assert len(lost) >= 2 and lost[0].grading_id == first  # the worker's and the server's
        for g in gradings:  # a lost try uses up none of the grading's own tries
            assert g.max_attempts == MAX_ATTEMPTS + sum(a.grading_id == g.id for a in lost)


def _all_finished(service) -> bool:
    with service.db.read() as s:
        statuses = s.scalars(select(Grading.status).where(Grading.kind == queue.HANDIN)).all()
    return len(statuses) == 2 and all(x in (queue.GRADED, queue.NOT_GRADED) for x in statuses)
