"""An assessment read as a batch: the panel page, the exports and each hand-in's signed bundle (SQLite, PostgreSQL).

Four candidates: a right answer, an empty file, one who never started, and a hand-in the
infrastructure failed three times. The exports say each as a batch would (the failed one "not
graded" with no score, never a 0), a result edited in the database is not shown, and the
bundle of a hand-in verifies as ``grader bundle verify`` verifies one.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import select, update  # noqa: E402

from grader.evidence.bundle import inspect_bundle  # noqa: E402
from grader.evidence.signing import Seal  # noqa: E402
from grader.reports.model import Report, Status, total  # noqa: E402
from grader.serve import queue  # noqa: E402
from grader.serve.models import Grading, Invite  # noqa: E402
from tests.conftest import TOY  # noqa: E402
from tests.serve_fixtures import Candidate, drain, invite, new_assessment, sign_in  # noqa: E402


def _fail_three_times(service, invite_name: str) -> None:
    with service.db.read() as s:
        invite_id = s.scalar(select(Invite.id).where(Invite.name == invite_name))
    for _ in range(3):
        with service.db.write() as s:  # no back-off between tries in this test
            s.execute(update(Grading).where(Grading.invite_id == invite_id).values(not_before=None))
        c = queue.claim(service.db, "broken-engine", lease_s=60)
        assert c.candidate == invite_name
        queue.finish(service.db, "broken-engine", c, Report(exercise="toy", graded=False,
                                                             not_graded_reason="no Docker engine"), service.key)


def _full_marks(text: str) -> str:
    report = Report.model_validate_json(text)
    checks = [c.model_copy(update={"status": Status.PASSED, "score": c.max_score, "message": ""}) for c in report.checks]
    score, max_score = total(checks)
    return report.model_copy(update={"checks": checks, "score": score, "max_score": max_score, "warnings": [],
                                     "load_error": None}).to_json()


def test_the_assessment_reads_as_a_batch_and_each_hand_in_has_its_evidence(client, service, tmp_path):
    csrf = sign_in(client, service)
    aid = new_assessment(client, csrf)
    links = invite(client, csrf, aid, "ann", "ben", "cat", "dan")
    for name, text in (("dan", "x = 1\n"), ("ann", (TOY / "solution.py").read_text()), ("ben", "")):
        c = Candidate(service, links[name])
        c.start()
        assert c.save(text, 1).status_code == 200
        assert c.hand_in().status_code == 200
        if name == "dan":
            _fail_three_times(service, "dan")
    drain(service)

    rows = {r["candidate"]: r for r in csv.DictReader(io.StringIO(client.get(f"/a/{aid}/results/summary.csv").text))}
    assert (rows["ann"]["status"], rows["ann"]["score"], rows["ann"]["max_score"]) == ("graded", "6", "6")
    assert (rows["ben"]["status"], rows["ben"]["score"]) == ("empty", "0")
    assert (rows["cat"]["status"], rows["cat"]["score"]) == ("missing", "")
    assert rows["cat"]["reason"] == "not handed in yet (invited, not started)"
    assert (rows["dan"]["status"], rows["dan"]["score"]) == ("not_graded", "")  # never a 0
    assert "not graded after 3 attempts: no Docker engine" in rows["dan"]["reason"]

    index = client.get(f"/a/{aid}/results/index.html")
    assert index.status_code == 200 and "ann" in index.text and "'sha256-" in index.headers["content-security-policy"]
    card = client.get(f"/a/{aid}/results/candidates/ann/toy.html")
    assert card.status_code == 200 and "Scales any vector by any factor" in card.text  # the panel's, in full
    for bad in ("../../serve.sqlite", ".built", "candidates/../../../data", "nope.html", "%2e%2e/serve.sqlite"):
        r = client.get(f"/a/{aid}/results/{bad}")  # (a client folds "../" itself: the route then refuses the id)
        assert r.status_code in (400, 404) and b"SQLite" not in r.content, bad

    state = {c["name"]: c for c in client.get(f"/a/{aid}/state").json()["candidates"]}
    assert state["dan"]["state"] == "not graded" and state["ann"]["state"] == "graded"
    handin = state["ann"]["cells"][0]["grading_id"]
    bundle = client.get(f"/a/{aid}/handins/{handin}/bundle.zip")
    assert bundle.status_code == 200
    zipfile.ZipFile(io.BytesIO(bundle.content)).extractall(tmp_path / "unzipped")
    verdict = inspect_bundle(tmp_path / "unzipped" / f"handin-{handin}")
    assert verdict.problems == [] and verdict.seal is Seal.SIGNED
    assert (tmp_path / "unzipped" / f"handin-{handin}" / "submission" / "toy.py").read_text() == \
        (TOY / "solution.py").read_text()

    with service.db.write() as s:  # full marks written into the database, consistently: only the signature can tell
        g = s.get(Grading, state["ben"]["cells"][0]["grading_id"])
        s.execute(update(Grading).where(Grading.id == g.id).values(report=_full_marks(g.report)))
    rows = {r["candidate"]: r for r in csv.DictReader(io.StringIO(client.get(f"/a/{aid}/results/summary.csv").text))}
    assert (rows["ben"]["status"], rows["ben"]["score"]) == ("not_graded", "")
    assert "edited after it was stored" in rows["ben"]["reason"]
    again = client.post(f"/a/{aid}/gradings/{state['dan']['cells'][0]['grading_id']}/again", data={"csrf": csrf})
    assert again.status_code == 200
    with service.db.read() as s:
        assert s.scalar(select(Grading.status).where(Grading.id == state["dan"]["cells"][0]["grading_id"])) == \
            queue.QUEUED
