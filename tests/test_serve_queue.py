"""The grading queue on SQLite and on PostgreSQL: claims, limits, leases, late answers, retries, signatures.

No grading runs here: workers are played by the test, with reports it makes, so every rule is
reached on purpose (the service's end-to-end tests grade for real).
"""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select, update  # noqa: E402

from grader.reports.model import CheckResult, Environment, Report, Status, Visibility  # noqa: E402
from grader.serve import queue, takehome  # noqa: E402
from grader.serve.inputs import AssessmentForm  # noqa: E402
from grader.serve.models import Grading, GradingAttempt, Invite, User  # noqa: E402
from grader.serve.sealed import stored_report  # noqa: E402


def assessment(service, *, names=("ann", "ben"), max_concurrent=2) -> tuple[int, list[int]]:
    from grader.serve.models import now

    with service.db.write() as s:
        user = User(name="pat", password_hash="x")
        s.add(user)
        s.flush()
        form = AssessmentForm(title="T", exercises=["toy"], time_limit_min=60, opens_at=now(),
                              closes_at=now().replace(year=2100), sandbox="local", max_concurrent=max_concurrent)
        a = takehome.create_assessment(s, service.exercises, user.id, form, allow_local=True)
        invites = [i for i, _ in takehome.invite(s, a, list(names))]
        return a.id, [i.id for i in invites]


def enqueue(service, invite_id: int, kind: str = queue.HANDIN, n: int = 1) -> list[int]:
    with service.db.write() as s:
        i = s.get(Invite, invite_id)
        return [queue.enqueue(s, invite=i, exercise="toy", kind=kind, filename="toy.py",
                              source=f"# answer {k}\n".encode()).id for k in range(n)]


def report(service, *, graded: bool = True, score: float = 2.0, check_error: bool = False) -> Report:
    ex = service.exercises.get("toy")
    status = Status.CHECK_ERROR if check_error else Status.PASSED if score else Status.FAILED
    checks = [CheckResult(id="test_toy.py::test_scale_small", name="Scales a small tensor", status=status,
                          score=score, max_score=2.0, visibility=Visibility.VISIBLE)]
    env = Environment(exercise_fingerprint=ex.fingerprint, exercise_version=ex.version, sandbox="local")
    if not graded or check_error:
        return Report(exercise="toy", graded=False, not_graded_reason="the docker daemon went away",
                      checks=checks if check_error else [], environment=env)
    return Report(exercise="toy", graded=True, checks=checks, score=score, max_score=2.0, environment=env)


def test_claims_take_practice_runs_first_then_the_oldest_and_record_each_attempt(service):
    _, (ann, ben) = assessment(service)
    handin = enqueue(service, ann)[0]
    run = enqueue(service, ben, queue.RUN)[0]
    first = queue.claim(service.db, "w1", lease_s=60)
    second = queue.claim(service.db, "w1", lease_s=60)
    assert (first.id, first.kind, first.candidate) == (run, queue.RUN, "ben")
    assert (second.id, second.attempt, second.sandbox) == (handin, 1, "local")
    assert first.fingerprint == service.exercises.get("toy").fingerprint
    with service.db.read() as s:
        attempts = s.scalars(select(GradingAttempt).order_by(GradingAttempt.id)).all()
    assert [(a.grading_id, a.number, a.worker_id, a.outcome) for a in attempts] == [(run, 1, "w1", None),
                                                                                     (handin, 1, "w1", None)]


def test_an_assessment_never_has_more_gradings_running_than_its_limit(service):
    _, (ann, _) = assessment(service, max_concurrent=2)
    other, (carl,) = assessment_two(service)
    enqueue(service, ann, n=4)
    theirs = enqueue(service, carl)[0]
    claimed = [queue.claim(service.db, f"w{k}", lease_s=60) for k in range(4)]
    assert [c is not None for c in claimed] == [True, True, True, False]
    assert claimed[2].id == theirs  # the full assessment is passed over, not waited on
    with service.db.read() as s:
        running = s.scalars(select(Grading).where(Grading.status == queue.RUNNING)).all()
    assert sorted(g.invite_id for g in running).count(ann) == 2


def assessment_two(service):
    from grader.serve.models import Assessment

    with service.db.write() as s:
        a = s.scalars(select(Assessment)).first()
        made = takehome.invite(s, a, ["carl"])
        b = Assessment(title="Other", time_limit_s=600, opens_at=a.opens_at, closes_at=a.closes_at, sandbox="local",
                       runs_per_minute=6, max_concurrent=1, created_by=a.created_by)
        s.add(b)
        s.flush()
        from grader.serve.models import AssessmentExercise

        s.add(AssessmentExercise(assessment_id=b.id, position=0, name="toy", title="Toy", submission="toy.py",
                                 fingerprint=service.exercises.get("toy").fingerprint))
        i = made[0][0]
        i.assessment_id = b.id
        return b.id, [i.id]


def test_workers_claiming_at_once_never_take_the_same_grading(service):
    _, (ann, ben) = assessment(service, max_concurrent=100)
    ids = enqueue(service, ann, n=12) + enqueue(service, ben, queue.RUN, n=12)
    taken: list[int] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        while (c := queue.claim(service.db, name, lease_s=60)) is not None:
            with lock:
                taken.append(c.id)

    threads = [threading.Thread(target=work, args=(f"w{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(taken) == sorted(ids)  # every row once: none twice, none left


def test_a_row_whose_worker_died_is_put_back_and_its_late_answer_changes_nothing(service):
    _, (ann, _) = assessment(service)
    gid = enqueue(service, ann)[0]
    lost = queue.claim(service.db, "dead", lease_s=60)
    assert queue.put_back(service.db, service.key, dead=["dead"], stale=False) == 1
    again = queue.claim(service.db, "alive", lease_s=60)
    assert (again.id, again.attempt) == (gid, 2)
    assert queue.finish(service.db, "dead", lost, report(service, score=0.0), service.key) is None  # fenced
    assert queue.finish(service.db, "alive", again, report(service), service.key) == queue.GRADED
    with service.db.read() as s:
        g = s.get(Grading, gid)
        outcomes = [(a.number, a.worker_id, a.outcome) for a in s.scalars(
            select(GradingAttempt).where(GradingAttempt.grading_id == gid).order_by(GradingAttempt.number))]
        got, problem = stored_report(g, service.key)
    assert outcomes == [(1, "dead", "lost"), (2, "alive", "graded")]
    assert problem == "" and got.score == 2.0  # the live worker's answer, not the dead one's zero


def test_a_lease_that_ran_out_is_put_back_by_anyone(service):
    _, (ann, _) = assessment(service)
    gid = enqueue(service, ann)[0]
    queue.claim(service.db, "silent", lease_s=0.0)
    assert queue.put_back(service.db, service.key, stale=True) == 1
    with service.db.read() as s:
        assert s.get(Grading, gid).status == queue.QUEUED


def test_infrastructure_failures_are_retried_then_not_graded_never_a_score(service, monkeypatch):
    monkeypatch.setattr(queue, "_again_or_final", _without_backoff(queue._again_or_final))
    _, (ann, _) = assessment(service)
    gid = enqueue(service, ann)[0]
    for attempt in (1, 2, 3):
        c = queue.claim(service.db, "w", lease_s=60)
        assert c.attempt == attempt
        queue.finish(service.db, "w", c, report(service, graded=False), service.key)
    assert queue.claim(service.db, "w", lease_s=60) is None
    with service.db.read() as s:
        g = s.get(Grading, gid)
        assert (g.status, g.report) == (queue.NOT_GRADED, None)
        assert g.reason.startswith("not graded after 3 attempts: the docker daemon went away")
        queue.grade_again(s, g, service.key)  # the panel's "grade again": queued, three more tries
        assert (g.status, g.max_attempts) == (queue.QUEUED, 6)


def _without_backoff(original):
    def again_or_final(g, why, t, **kwargs):
        original(g, why, t, **kwargs)
        g.not_before = None
    return again_or_final


def test_a_check_error_is_final_and_keeps_its_report(service):
    _, (ann, _) = assessment(service)
    enqueue(service, ann)
    c = queue.claim(service.db, "w", lease_s=60)
    assert queue.finish(service.db, "w", c, report(service, check_error=True), service.key) == queue.NOT_GRADED
    with service.db.read() as s:
        got, problem = stored_report(s.get(Grading, c.id), service.key)
    assert problem == "" and got.check_errors and not got.graded


def test_a_report_from_another_exercise_version_or_sandbox_is_the_infrastructures_failure(service):
    _, (ann, _) = assessment(service)
    enqueue(service, ann)
    c = queue.claim(service.db, "w", lease_s=60)
    elsewhere = report(service)
    elsewhere = elsewhere.model_copy(update={"environment": elsewhere.environment.model_copy(update={"sandbox": "docker"})})
    assert "the assessment asks for local" in queue.infrastructure(elsewhere, c)
    drifted = report(service)
    drifted = drifted.model_copy(update={"environment": drifted.environment.model_copy(
        update={"exercise_fingerprint": "0" * 64})})
    assert "the assessment pinned" in queue.infrastructure(drifted, c)
    assert queue.infrastructure(report(service), c) is None


def test_a_stored_result_edited_in_the_database_is_not_believed(service):
    _, (ann, _) = assessment(service)
    enqueue(service, ann)
    c = queue.claim(service.db, "w", lease_s=60)
    queue.finish(service.db, "w", c, report(service, score=0.0), service.key)
    with service.db.write() as s:
        g = s.get(Grading, c.id)
        forged = report(service, score=2.0).to_json()  # a consistent report: only the signature can tell
        s.execute(update(Grading).where(Grading.id == g.id).values(report=forged))
    with service.db.read() as s:
        got, problem = stored_report(s.get(Grading, c.id), service.key)
    assert got is None and "edited after it was stored" in problem
