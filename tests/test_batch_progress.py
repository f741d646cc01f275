"""The batch progress shows who is being graded and for how long, so a slow grading is visible while it runs.

Fed by hand and through ``run_batch`` with the fake engine: nothing is graded. The list itself (a
``grader.progress.Work``, with a clock of the test's own) is tested in test_progress.
"""

from __future__ import annotations

import io
import time
from concurrent.futures import Future

from rich.console import Console, Group

from grader.batch.engines import LocalEngine
from grader.batch.runner import Listener
from grader.cli.batch_progress import ProgressListener
from tests.test_batch_runner import FakeEngine, run, store, subs  # noqa: F401  (fixtures)


def test_the_progress_display_lists_gradings_in_flight_until_they_end():
    from types import SimpleNamespace

    from grader.reports.model import Report

    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=120)
    listener = ProgressListener(console)
    found = SimpleNamespace(candidate="ann", exercise="toy")
    with listener:
        listener.planned(to_grade=1, already=0)
        listener.started(found)
        console.print(Group(*listener.progress.get_renderables()))
        assert "now grading:" in out.getvalue() and "ann/toy  0:00" in out.getvalue()
        listener.graded(found, Report(exercise="toy", graded=True))
        assert listener.work.lines() == [] and listener.work.done == 1


class Recorder(Listener):
    def __init__(self):
        self.events: list[tuple[str, str]] = []

    def started(self, found):
        self.events.append(("started", found.candidate))

    def graded(self, found, report):
        self.events.append(("graded", found.candidate))

    def retrying(self, found, reason, attempt):
        self.events.append(("retrying", found.candidate))


def test_the_batch_says_when_each_grading_starts_and_again_for_a_retry(subs, store):  # noqa: F811
    heard = Recorder()
    run(subs, store, FakeEngine({"ben": ["infra", "pass"]}), listener=heard)
    for name in ("ann", "cat"):
        assert [e for e in heard.events if e[1] == name] == [("started", name), ("graded", name)]
    assert [e for e in heard.events if e[1] == "ben"] == [("started", "ben"), ("retrying", "ben"), ("started", "ben"),
                                                           ("graded", "ben")]


def test_the_local_engine_says_a_grading_started_when_a_thread_takes_it_not_when_it_is_queued(monkeypatch):
    from grader.batch import engines

    release = Future()
    monkeypatch.setattr(engines, "grade_job", lambda job: release.result(timeout=60))
    engine = LocalEngine(jobs=1)
    started: list[str] = []
    from grader.batch.jobs import Job
    from grader.batch.store import Key

    def job(candidate: str) -> Job:
        return Job(key=Key(candidate, "toy", "0" * 64, "1.0.0"), exercise_root="toy", filename="toy.py", source=b"",
                   sandbox="local")

    try:
        first = engine.submit(job("first"), on_start=lambda: started.append("first"))
        second = engine.submit(job("second"), on_start=lambda: started.append("second"))
        for _ in range(1200):  # the first is taken by the one thread; the second waits for it
            if started:
                break
            time.sleep(0.05)
        assert started == ["first"]
        release.set_result("report")
        assert first.result(timeout=60) == second.result(timeout=60) == "report"
        assert started == ["first", "second"]
    finally:
        engine.close()
